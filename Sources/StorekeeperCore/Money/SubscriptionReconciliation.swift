import Foundation

/// Where Apple's subscription reports and Storekeeper's books disagree, per report day × product × storefront: how
/// many subscriptions were active at the day's end (at the standard price, in an offer), and how many started,
/// continued and ended that day. The sales report cannot see free trials or cancellations; these can. Pure: both
/// sides are tallied by the caller (keys carry no currency).
public enum SubscriptionReconciliation {
    /// Subscriptions active at a moment.
    public struct Active: Sendable, Hashable {
        public var standard: Int64 = 0
        public var inOffer: Int64 = 0

        public init(standard: Int64 = 0, inOffer: Int64 = 0) {
            self.standard = standard
            self.inOffer = inOffer
        }

        public var total: Int64 { Reconciliation.Tally.saturating(standard, inOffer) }
    }

    /// The lifecycle changes compared.
    public enum EventGroup: String, Sendable, Hashable, CaseIterable {
        /// `conversion`: a paid period right after a period in an offer (counted among continuations too).
        case start, continuation, conversion, end

        var kind: Reconciliation.Kind {
            switch self {
            case .start: .subscriptionStartsDiffer
            case .continuation: .subscriptionRenewalsDiffer
            case .conversion: .subscriptionConversionsDiffer
            case .end: .subscriptionEndsDiffer
            }
        }

        var words: String {
            switch self {
            case .start: "new subscription(s)"
            case .continuation: "period(s) after the first"
            case .conversion: "conversion(s) from an offer to a paid period"
            case .end: "subscription end(s)"
            }
        }
    }

    /// One side's figures.
    public struct Side: Sendable, Hashable {
        /// Whether the day's active subscriptions were counted (Apple's Subscription Report was there).
        public var hasActive = false
        public var active: [Reconciliation.Key: Active] = [:]
        /// Whether the day's events were counted (Apple's Subscription Event Report was there).
        public var hasEvents = false
        public var events: [EventGroup: [Reconciliation.Key: Reconciliation.Tally]] = [:]
        /// Whether conversions were counted (Analytics Reports name them; Sales and Trends only for introductory offers).
        public var hasConversions = false
        /// Which of Apple's reports the figures come from (`analytics`, `sales`), for the day's message.
        public var source: String?

        public init() {}

        public mutating func addActive(_ key: Reconciliation.Key, inOffer: Bool, count: Int64 = 1) {
            var line = active[key] ?? Active()
            if inOffer {
                line.inOffer = Reconciliation.Tally.saturating(line.inOffer, count)
            } else {
                line.standard = Reconciliation.Tally.saturating(line.standard, count)
            }
            active[key] = line
        }

        public mutating func addEvent(_ group: EventGroup, _ key: Reconciliation.Key, count: Int64 = 1, transactionId: String? = nil) {
            events[group, default: [:]][key, default: Reconciliation.Tally()].add(
                units: count,
                customerPrice: 0,
                proceeds: 0,
                transactionId: transactionId
            )
        }
    }

    /// Every disagreement, on the parts both sides counted.
    public static func compare(apple: Side, storekeeper: Side) -> [Reconciliation.Finding] {
        var findings: [Reconciliation.Finding] = []
        if apple.hasActive && storekeeper.hasActive {
            for key in Set(apple.active.keys).union(storekeeper.active.keys).sorted() {
                let a = apple.active[key] ?? Active()
                let s = storekeeper.active[key] ?? Active()
                guard a != s else { continue }
                findings.append(
                    Reconciliation.Finding(
                        kind: .subscribersDiffer,
                        key: key,
                        appleUnits: a.total,
                        storekeeperUnits: s.total,
                        appleAmount: 0,
                        storekeeperAmount: 0,
                        transactionIds: [],
                        detail: "at the day's end Apple counts \(a.standard) subscriber(s) at the standard price and \(a.inOffer) in an offer, "
                            + "Storekeeper \(s.standard) and \(s.inOffer)"
                    )
                )
            }
        }
        if apple.hasEvents && storekeeper.hasEvents {
            for group in EventGroup.allCases where group != .conversion || (apple.hasConversions && storekeeper.hasConversions) {
                let a = apple.events[group] ?? [:]
                let s = storekeeper.events[group] ?? [:]
                for key in Set(a.keys).union(s.keys).sorted() {
                    let apple = a[key] ?? Reconciliation.Tally()
                    let ours = s[key] ?? Reconciliation.Tally()
                    guard apple.units != ours.units else { continue }
                    findings.append(
                        Reconciliation.Finding(
                            kind: group.kind,
                            key: key,
                            appleUnits: apple.units,
                            storekeeperUnits: ours.units,
                            appleAmount: 0,
                            storekeeperAmount: 0,
                            transactionIds: ours.transactionIds,
                            detail: apple.units > ours.units
                                ? "Apple counted \(apple.units - ours.units) more \(group.words) than Storekeeper saw"
                                : "Storekeeper saw \(ours.units - apple.units) more \(group.words) than Apple counted"
                        )
                    )
                }
            }
        }
        return findings
    }
}

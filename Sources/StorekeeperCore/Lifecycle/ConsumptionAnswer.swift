import Foundation

/// Storekeeper's answer to Apple's refund question (seed 003), built only from its own records.
public struct ConsumptionAnswer: Sendable, Hashable, Codable {
    /// `DELIVERED` or `UNDELIVERED_OTHER`.
    public var deliveryStatus: String
    /// Share consumed in milliunits (0–100000); nil for auto-renewables, where Apple computes it.
    public var consumptionPercentage: Int32?
    /// `DECLINE`, `GRANT_FULL` or `GRANT_PRORATED`; nil for no preference.
    public var refundPreference: String?
    public var sampleContentProvided: Bool
    /// Why a policy set the refund preference (not sent to Apple; kept with the answer and in the audit).
    public var policy: String?

    public init(deliveryStatus: String, consumptionPercentage: Int32?, refundPreference: String?, sampleContentProvided: Bool) {
        self.deliveryStatus = deliveryStatus
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
    }

    /// What Storekeeper knows about the purchase in question.
    public struct Facts: Sendable, Hashable {
        public var kind: ProductKind?
        public var delivered: Bool
        /// Coins the purchase credited, and the owner's balance now (consumables).
        public var coinsCredited: Int64
        public var balance: Int64
        /// The period the purchase granted (passes), and when the question is answered.
        public var periodStart: Date?
        public var periodEnd: Date?
        public var now: Date
        /// How the customer holds the transaction (`PURCHASED`, `FAMILY_SHARED`, `ASSIGNED`), when it was delivered.
        public var ownershipType: String?

        public init(
            kind: ProductKind?,
            delivered: Bool,
            coinsCredited: Int64 = 0,
            balance: Int64 = 0,
            periodStart: Date? = nil,
            periodEnd: Date? = nil,
            now: Date,
            ownershipType: String? = nil
        ) {
            self.kind = kind
            self.delivered = delivered
            self.coinsCredited = coinsCredited
            self.balance = balance
            self.periodStart = periodStart
            self.periodEnd = periodEnd
            self.now = now
            self.ownershipType = ownershipType
        }
    }

    /// Builds the answer.
    ///
    /// - consumable: coins from this purchase already spent (credited minus what is left, never below 0);
    /// - non-renewing: the share of the paid period already used;
    /// - non-consumable: fully consumed once delivered;
    /// - auto-renewable: omitted (Apple computes it from the subscription);
    /// - nothing delivered: `UNDELIVERED_OTHER` and 0 consumed.
    /// `GRANT_PRORATED` needs a percentage above 0, so with nothing consumed it becomes `GRANT_FULL`.
    public static func build(_ facts: Facts, sampleContentProvided: Bool, preference: String?) -> ConsumptionAnswer {
        guard facts.delivered else {
            return ConsumptionAnswer(
                deliveryStatus: "UNDELIVERED_OTHER",
                consumptionPercentage: facts.kind == .autoRenewable ? nil : 0,
                refundPreference: preference == nil ? nil : "GRANT_FULL",
                sampleContentProvided: sampleContentProvided
            )
        }
        var percentage: Int32?
        switch facts.kind {
        case .consumable:
            let credited = max(1, facts.coinsCredited)
            // Subtraction and the ratio in floating point: balances near the limits must not overflow.
            let spent = min(Double(credited), max(0, Double(credited) - Double(facts.balance)))
            percentage = Int32((spent / Double(credited) * 100_000).rounded(.down))
        case .nonRenewing:
            if let start = facts.periodStart, let end = facts.periodEnd, end > start {
                let used = min(max(facts.now.timeIntervalSince(start), 0), end.timeIntervalSince(start))
                percentage = Int32((used / end.timeIntervalSince(start) * 100_000).rounded(.down))
            } else {
                percentage = 0
            }
        case .nonConsumable:
            percentage = 100_000
        case .autoRenewable, nil:
            percentage = nil
        }
        var preference = preference
        if preference == "GRANT_PRORATED", (percentage ?? 1) == 0 { preference = "GRANT_FULL" }
        return ConsumptionAnswer(
            deliveryStatus: "DELIVERED",
            consumptionPercentage: percentage,
            refundPreference: preference,
            sampleContentProvided: sampleContentProvided
        )
    }
}

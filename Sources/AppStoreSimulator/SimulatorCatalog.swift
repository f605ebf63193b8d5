import AppStoreWire
import Foundation

/// What the simulated App Store sells for one app: products of the four types, subscription groups with levels,
/// and the offers each subscription carries. Loaded from JSON (see `Samples/simulator-catalog.json`).
public struct SimulatorCatalog: Codable, Sendable, Hashable {
    public var bundleId: String
    public var appAppleId: Int64
    /// Storefront (ISO 3166-1 alpha-3) → Apple storefront id; the first is the default.
    public var storefronts: [Storefront]
    public var subscriptionGroups: [SubscriptionGroup]
    public var products: [Product]
    /// When the developer was in the App Store Small Business Program: Apple's commission is 15 % on purchases made
    /// then (absent: never, 30 % until a subscription's year of paid service).
    public var smallBusinessProgram: [ProgramPeriod]?

    /// A membership period of the Small Business Program: `start` and `end` are UTC days (`YYYY-MM-DD`), the end
    /// excluded; no end: still a member.
    public struct ProgramPeriod: Codable, Sendable, Hashable {
        public var start: String
        public var end: String?

        public init(start: String, end: String? = nil) {
            self.start = start
            self.end = end
        }

        static func day(_ text: String) -> Date? {
            guard text.utf8.count == 10 else { return nil }
            return try? Date(text + "T00:00:00Z", strategy: .iso8601)
        }
    }

    /// Whether a purchase at `date` pays the Small Business Program's 15 %.
    public func inSmallBusinessProgram(at date: Date) -> Bool {
        (smallBusinessProgram ?? []).contains { period in
            guard let start = ProgramPeriod.day(period.start), start <= date else { return false }
            return period.end.flatMap(ProgramPeriod.day).map { date < $0 } ?? true
        }
    }

    public struct Storefront: Codable, Sendable, Hashable {
        public var code: String
        public var id: String
        public var currency: String
        /// Tax included in this storefront's prices, per mille (China: 60), which Apple takes out before its
        /// commission; nil where prices exclude tax (the United States).
        public var taxPermille: Int?
    }

    /// A subscription group: one active subscription per customer at a time.
    public struct SubscriptionGroup: Codable, Sendable, Hashable {
        public var id: String
        public var name: String
        /// Billing grace period in days (3, 16 or 28), or nil when the app has not opted in.
        public var gracePeriodDays: Int?
    }

    /// Kinds of in-app purchase.
    public enum Kind: String, Codable, Sendable, Hashable {
        case consumable, nonConsumable, nonRenewing, autoRenewable

        /// The `type` Apple writes in signed transactions.
        public var productType: ProductType {
            switch self {
            case .consumable: .consumable
            case .nonConsumable: .nonConsumable
            case .nonRenewing: .nonRenewing
            case .autoRenewable: .autoRenewable
            }
        }
    }

    /// An introductory, promotional, offer-code or win-back offer on a subscription.
    public struct Offer: Codable, Sendable, Hashable {
        public var id: String
        public var discountType: OfferDiscountType
        /// Length of one discounted period.
        public var period: SubscriptionPeriod
        /// Number of discounted periods (pay as you go); 1 otherwise.
        public var periodCount: Int?
        /// Price per discounted period in milliunits (0 for a free trial).
        public var price: Int64

        public init(id: String, discountType: OfferDiscountType, period: SubscriptionPeriod, periodCount: Int? = nil, price: Int64) {
            self.id = id
            self.discountType = discountType
            self.period = period
            self.periodCount = periodCount
            self.price = price
        }
    }

    public struct Product: Codable, Sendable, Hashable {
        public var id: String
        public var kind: Kind
        /// The name the App Store shows (App Store Connect's localized display name); derived from the id when absent.
        public var displayName: String?
        /// The App Store's localized description; empty when absent.
        public var description: String?
        /// Price in milliunits of the storefront's currency ($9.99 → 9990).
        public var price: Int64
        public var groupId: String?
        /// Level within the group: 1 is the highest service.
        public var level: Int?
        /// Renewal period (auto-renewable) or duration (non-renewing pass).
        public var period: SubscriptionPeriod?
        public var familyShareable: Bool?
        public var introductoryOffer: Offer?
        public var promotionalOffers: [Offer]?
        public var offerCodes: [Offer]?
        public var winBackOffers: [Offer]?
        /// A yearly subscription's monthly billing plan with a 12-month commitment (API 1.21): each monthly payment,
        /// in milliunits; nil when the product offers only billing up front.
        public var monthlyCommitmentPrice: Int64?
        /// A multiseat subscription (API 1.23): bought for a number of seats at per-seat prices that fall with the
        /// seat count; nil for a subscription of one.
        public var multiSeat: MultiSeatPlan?
        /// The product's Apple ID in App Store Connect, as subscription reports name it; derived from the id when
        /// absent.
        public var appleId: Int64?

        /// ``appleId``, or a stable number derived from the product id (FNV-1a) when the catalog names none.
        public var reportAppleId: Int64 {
            if let appleId { return appleId }
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in id.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return 6_400_000_000 + Int64(hash % 100_000_000)
        }
    }

    /// Loads and checks a catalog file.
    public static func load(from url: URL) throws -> SimulatorCatalog {
        let catalog = try JSONDecoder().decode(SimulatorCatalog.self, from: Data(contentsOf: url))
        try catalog.validate()
        return catalog
    }

    /// Refuses catalogs the App Store would not allow.
    public func validate() throws {
        guard !storefronts.isEmpty else { throw SimulatorError.invalidCatalog("no storefront") }
        for period in smallBusinessProgram ?? [] {
            guard let start = ProgramPeriod.day(period.start), period.end.map({ ProgramPeriod.day($0).map { $0 > start } ?? false }) ?? true else {
                throw SimulatorError.invalidCatalog("smallBusinessProgram periods are {start: YYYY-MM-DD, end: a later YYYY-MM-DD or none}")
            }
        }
        var seen = Set<String>()
        for product in products {
            guard seen.insert(product.id).inserted else { throw SimulatorError.invalidCatalog("duplicate product \(product.id)") }
            switch product.kind {
            case .autoRenewable:
                guard let group = product.groupId, subscriptionGroups.contains(where: { $0.id == group }),
                    product.level != nil, product.period != nil
                else {
                    throw SimulatorError.invalidCatalog("auto-renewable \(product.id) needs a known group, a level and a period")
                }
                if let plan = product.multiSeat {
                    let starts = plan.tiers.map(\.fromSeat)
                    guard starts.first == 1, starts == starts.sorted(), Set(starts).count == starts.count,
                        plan.tiers.allSatisfy({ $0.price > 0 }), (1...MultiSeatPlan.maximumSeats).contains(plan.maximumSeats ?? 100)
                    else {
                        throw SimulatorError.invalidCatalog("multiseat \(product.id) needs tiers from seat 1 up, each with a price")
                    }
                }
            case .nonRenewing:
                guard product.period != nil else {
                    throw SimulatorError.invalidCatalog("non-renewing \(product.id) needs a period")
                }
            case .consumable, .nonConsumable:
                break
            }
        }
        for group in subscriptionGroups {
            if let days = group.gracePeriodDays, ![3, 16, 28].contains(days) {
                throw SimulatorError.invalidCatalog("grace period of group \(group.id) must be 3, 16 or 28 days")
            }
        }
    }

    public func product(_ id: String) -> Product? { products.first { $0.id == id } }
    public func group(_ id: String) -> SubscriptionGroup? { subscriptionGroups.first { $0.id == id } }
}

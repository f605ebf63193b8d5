import Foundation

/// What retention offers kept (late 2026, `offerType` 5): the renewals charged at a retention offer in a range, by
/// product, offer, the Storekeeper retention rule whose answer offered it (nil: none of Storekeeper's answers did —
/// Apple's default message, an offer configured in App Store Connect) and currency, with the subscriptions saved and
/// what they paid. Sandbox transactions and transactions that are not the customer's sale are left out.
public struct RetentionSavesReport: Sendable, Hashable {
    public struct Line: Sendable, Hashable {
        public var productId: String
        public var offerId: String
        public var ruleId: String?
        public var currency: String
        /// Subscriptions with at least one retention-offer renewal in the range.
        public var saves: Int
        /// Retention-offer renewals in the range.
        public var renewals: Int
        /// What they paid, and Apple's estimated proceeds, in milliunits (refunded ones taken back).
        public var gross: Int64
        public var proceeds: Int64
    }

    private struct Key: Hashable, Comparable {
        var productId: String
        var offerId: String
        var ruleId: String
        var currency: String

        static func < (a: Key, b: Key) -> Bool {
            (a.productId, a.offerId, a.ruleId, a.currency) < (b.productId, b.offerId, b.ruleId, b.currency)
        }
    }

    private var lines: [Key: Line] = [:]
    private var saved: [Key: Set<String>] = [:]

    public init() {}

    /// Adds one retention-offer transaction and the rule whose answer offered it.
    public mutating func add(_ transaction: RevenueTransaction, ruleId: String?, smallBusiness: SmallBusinessProgram = SmallBusinessProgram()) {
        guard !transaction.sandbox, transaction.commerce.isSale,
            let estimate = Proceeds.estimate(
                price: transaction.commerce.price,
                currency: transaction.commerce.currency,
                storefront: transaction.commerce.storefront,
                sandbox: transaction.sandbox,
                kind: transaction.kind,
                purchaseDate: transaction.purchaseDate,
                ownershipType: transaction.commerce.ownershipType,
                revocationType: transaction.commerce.revocationType,
                revocationPercentage: transaction.commerce.revocationPercentage,
                smallBusiness: smallBusiness,
                store: transaction.store,
                storeFeePermille: transaction.commerce.storeFeePermille
            )
        else { return }
        let offerId = transaction.commerce.offerId ?? ""
        let key = Key(productId: transaction.productId, offerId: offerId, ruleId: ruleId ?? "", currency: estimate.currency)
        var line =
            lines[key]
            ?? Line(productId: key.productId, offerId: offerId, ruleId: ruleId, currency: key.currency, saves: 0, renewals: 0, gross: 0, proceeds: 0)
        line.renewals += 1
        line.gross = line.gross.addingSaturating(estimate.customerPrice - estimate.refundedPrice)
        line.proceeds = line.proceeds.addingSaturating(estimate.netProceeds)
        saved[key, default: []].insert(transaction.originalTransactionId)
        line.saves = saved[key]?.count ?? 0
        lines[key] = line
    }

    /// The lines by product, offer, rule and currency.
    public var report: [Line] { lines.keys.sorted().compactMap { lines[$0] } }
}

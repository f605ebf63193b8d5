import Foundation

/// What one delivered transaction gave its user.
public enum DeliveryGrant: Sendable, Hashable {
    /// Coins credited to the wallet, and the balance right after.
    case coins(amount: Int64, balance: Int64)
    /// An entitlement for a period; `end == nil` is permanent.
    case entitlement(name: String, start: Date, end: Date?)
}

/// The rules that turn a verified transaction of a catalog product into a grant (pure; the store applies it).
public enum DeliveryRules {
    /// The period a transaction entitles, given the latest end of the same user's passes for that entitlement.
    ///
    /// - consumable: `nil` (coins, not a period);
    /// - non-consumable: from the purchase, forever;
    /// - non-renewing: from the later of `now` and the current pass end, for the product's duration times the
    ///   quantity, measured on the server's clock (seed 002);
    /// - auto-renewable: from the purchase to Apple's `expiresDate`.
    public static func period(
        for product: CatalogProduct,
        transaction: VerifiedTransaction,
        currentPassEnd: Date?,
        now: Date
    ) -> (start: Date, end: Date?)? {
        switch product.kind {
        case .consumable:
            return nil
        case .nonConsumable:
            return (transaction.purchaseDate, nil)
        case .nonRenewing:
            let start = max(now, currentPassEnd ?? now)
            var end = start
            // Bounded: Apple's quantity is at most 10 in practice, and `coins(for:transaction:)` refuses more.
            for _ in 0..<min(max(1, transaction.quantity), maximumQuantity) {
                end = (product.duration ?? CatalogDuration(value: 1, unit: .month)).added(to: end)
            }
            return (start, end)
        case .autoRenewable:
            return (transaction.purchaseDate, transaction.expiresDate ?? transaction.purchaseDate)
        }
    }

    /// The largest quantity one transaction may carry (StoreKit sells at most 10 at once).
    public static let maximumQuantity = 1_000

    /// Coins a consumable transaction credits: coins per unit times Apple's quantity; nil when either is out of
    /// bounds (a catalog edited by hand, a quantity no store sells), so nothing is credited rather than trapping.
    public static func coins(for product: CatalogProduct, transaction: VerifiedTransaction) -> Int64? {
        guard let perUnit = product.coins, (1...CatalogProduct.maximumCoins).contains(perUnit),
            transaction.quantity <= maximumQuantity
        else { return nil }
        let (total, overflow) = perUnit.multipliedReportingOverflow(by: Int64(max(1, transaction.quantity)))
        return overflow ? nil : total
    }

    /// Why a transaction of `product` cannot be delivered as it stands, or nil.
    public static func problem(for product: CatalogProduct, transaction: VerifiedTransaction) -> PurchaseRefusal? {
        if product.store != transaction.store { return .otherStore(productId: product.id, store: product.store.apiName) }
        if transaction.quantity > maximumQuantity { return .quantityOutOfRange(transaction.quantity, maximum: maximumQuantity) }
        if product.kind == .consumable, coins(for: product, transaction: transaction) == nil {
            return .catalogOutOfRange(productId: product.id)
        }
        return nil
    }
}

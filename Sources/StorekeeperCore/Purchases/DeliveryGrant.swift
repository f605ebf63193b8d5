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
        for product: CatalogProduct, transaction: VerifiedTransaction, currentPassEnd: Date?, now: Date
    ) -> (start: Date, end: Date?)? {
        switch product.kind {
        case .consumable:
            return nil
        case .nonConsumable:
            return (transaction.purchaseDate, nil)
        case .nonRenewing:
            let start = max(now, currentPassEnd ?? now)
            var end = start
            for _ in 0..<max(1, transaction.quantity) {
                end = (product.duration ?? CatalogDuration(value: 1, unit: .month)).added(to: end)
            }
            return (start, end)
        case .autoRenewable:
            return (transaction.purchaseDate, transaction.expiresDate ?? transaction.purchaseDate)
        }
    }

    /// Coins a consumable transaction credits: coins per unit times Apple's quantity.
    public static func coins(for product: CatalogProduct, transaction: VerifiedTransaction) -> Int64 {
        (product.coins ?? 0) * Int64(max(1, transaction.quantity))
    }
}

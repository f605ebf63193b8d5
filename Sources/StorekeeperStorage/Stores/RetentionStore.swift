import Foundation
import SQLKit
import StorekeeperCore

/// Reads what a retention rule may ask about a subscriber, by the subscription's original transaction: three
/// indexed lookups, on the realtime path Apple gives 700 ms (Storekeeper's own goal is 20 ms at p99).
public struct RetentionStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    public func history(originalTransactionId original: String) async throws -> RetentionHistory {
        try await provider.withSession { db in
            let user = try await db.raw(
                "SELECT user_id FROM transaction_owners WHERE original_transaction_id = \(bind: original)"
            ).first()?.decode(column: "user_id", as: String.self)
            let paid =
                try await db.raw(
                    "SELECT COUNT(*) AS n FROM store_transactions WHERE original_transaction_id = \(bind: original) AND (price IS NULL OR price > 0)"
                ).first()?.decode(column: "n", as: Int64.self) ?? 0
            guard let user else { return RetentionHistory(user: nil, paidPeriods: Int(paid), refunds: 0, redeemedOffers: []) }
            let refunds =
                try await db.raw(
                    "SELECT COUNT(*) AS n FROM revocations WHERE user_id = \(bind: user) AND kind = 'refund' AND status = 'revoked'"
                ).first()?.decode(column: "n", as: Int64.self) ?? 0
            let offers = try await db.raw(
                "SELECT DISTINCT offer_id FROM store_transactions WHERE user_id = \(bind: user) AND offer_id IS NOT NULL AND offer_type IN (2, 4)"
            ).all().compactMap { try $0.decode(column: "offer_id", as: String?.self) }
            return RetentionHistory(user: UserID(rawValue: user), paidPeriods: Int(paid), refunds: Int(refunds), redeemedOffers: Set(offers))
        }
    }
}

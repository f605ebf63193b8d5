import Foundation
import SQLKit
import StorekeeperCore

/// `offer_nonces`: every nonce a signed subscription offer used, so none is used twice.
public enum OfferNoncesTable {
    /// Records a nonce; whether it was new.
    public static func insert(
        _ nonce: UUID,
        user: UserID,
        productId: String,
        offerId: String,
        campaignId: String,
        now: Date,
        on db: any SQLDatabase
    ) async throws -> Bool {
        var insert = BulkInsert(
            into: "offer_nonces",
            columns: ["nonce", "user_id", "product_id", "offer_id", "campaign_id", "created_at"],
            suffix: "ON CONFLICT (nonce) DO NOTHING RETURNING nonce"
        )
        insert.values([nonce.uuidString.lowercased(), user.rawValue, productId, offerId, campaignId, now.millis])
        return !(try await insert.all(on: db)).isEmpty
    }
}

import Foundation
import SQLKit
import StorekeeperCore

/// Nonces of signed subscription offers: recorded once, never reused.
public struct OfferNonceStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// Records `nonce`; `false` if it was ever used before.
    public func record(
        _ nonce: UUID, user: UserID, productId: String, offerId: String, campaignId: String, now: Date = Date()
    ) async throws -> Bool {
        try await provider.withTransaction { db in
            let row = try await db.raw(
                """
                INSERT INTO offer_nonces (nonce, user_id, product_id, offer_id, campaign_id, created_at)
                VALUES (\(bind: nonce.uuidString.lowercased()), \(bind: user.rawValue), \(bind: productId), \(bind: offerId),
                    \(bind: campaignId), \(bind: now.millis))
                ON CONFLICT (nonce) DO NOTHING RETURNING nonce
                """
            ).first()
            guard row != nil else { return false }
            try await AuditStore.append(
                AuditEntry(
                    action: "offer.signed", user: user, subject: productId, cause: "campaign:\(campaignId)",
                    detail: "offer \(offerId) nonce \(nonce.uuidString.lowercased())", createdAt: now), on: db)
            return true
        }
    }
}

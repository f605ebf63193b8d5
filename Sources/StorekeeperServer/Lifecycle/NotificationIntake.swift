import AppStoreWire
import Foundation
import StorekeeperCore
import StorekeeperStorage

/// Verifies a V2 `signedPayload` (the notification and the transaction and renewal info inside it) and stores it
/// in the inbox: the one path for notifications Apple posts and for those catch-up fetches from history.
struct NotificationIntake: Sendable {
    let inbox: NotificationInbox
    let onStored: @Sendable () -> Void

    /// What was stored.
    struct Stored: Sendable {
        var id: String
        var isNew: Bool
        var type: String
    }

    /// Verifies `signedPayload` against `app` and stores it; throws a ``StorekeeperError`` (`outcome` rejected)
    /// when it fails verification, or a retry error when verification could not run.
    func storeV2(_ signedPayload: String, body: String, app: AppRegistry.App) async throws -> Stored {
        let payload: ResponseBodyV2DecodedPayload
        var original: String?
        var transactionId: String?
        do {
            payload = try await app.verifier.verifyNotification(signedPayload)
            if let inner = payload.data?.signedTransactionInfo {
                let transaction = try await app.verifier.verifyTransaction(inner)
                original = transaction.originalTransactionId
                transactionId = transaction.transactionId
            }
            if let inner = payload.data?.signedRenewalInfo {
                let renewal = try await app.verifier.verifyRenewalInfo(inner)
                original = original ?? renewal.originalTransactionId
            }
        } catch {
            if error.isRetryable { throw StorekeeperError.retry("verification_unavailable", error.message) }
            throw StorekeeperError.rejected(
                error.code == "malformed" ? .badRequest : .unprocessable, error.code, "notification refused: \(error.message)")
        }
        guard let uuid = payload.notificationUUID, !uuid.isEmpty, uuid.utf8.count <= 100 else {
            throw StorekeeperError.rejected("missing_notification_uuid", "no notificationUUID")
        }
        let isNew = try await inbox.recordIfNew(
            .init(
                id: uuid, format: "v2", bundleId: app.configuration.bundleId, notificationType: payload.notificationType.rawValue,
                subtype: payload.subtype?.rawValue, originalTransactionId: original, transactionId: transactionId,
                signedDate: payload.signedDate, environment: payload.data?.environment?.rawValue, body: body))
        if isNew { onStored() }
        return Stored(id: uuid, isNew: isNew, type: payload.notificationType.rawValue)
    }
}

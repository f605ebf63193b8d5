import AppStoreWire
import Foundation
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Verifies a V2 `signedPayload` (the notification and the transaction and renewal info inside it) and stores it
/// in the inbox: the one path for notifications Apple posts and for those catch-up fetches from history.
struct NotificationIntake: Sendable {
    let ledger: Ledger
    /// Whether this process applies notifications as it stores them (otherwise a processor elsewhere does).
    let applies: Bool
    let metrics: ServerMetrics
    let onStored: @Sendable () -> Void
    /// The certificate chains every notification repeats, recognised without hashing them again.
    let headerDigests = HeaderDigestCache()

    /// What was stored.
    struct Stored: Sendable {
        var id: String
        var isNew: Bool
        var type: String
    }

    /// Verifies `signedPayload` against `app` and stores it; throws a ``StorekeeperError`` (`outcome` rejected)
    /// when it fails verification, or a retry error when verification could not run.
    /// `path` names where it came from for the metrics (`notification_v2`, `catch_up`).
    func storeV2(_ signedPayload: String, body: String, app: AppRegistry.App, path: String) async throws -> Stored {
        let payload: ResponseBodyV2DecodedPayload
        var original: String?
        var transactionId: String?
        var transaction: JWSTransactionDecodedPayload?
        var renewal: JWSRenewalInfoDecodedPayload?
        var appTransactionId: String?
        do {
            payload = try await app.verifier.verifyNotification(signedPayload)
            // The notification's signature covers the signed transaction and renewal info inside it byte for byte,
            // so they are Apple's as surely as the notification is: decoded and their claims checked here, without
            // a second and third signature check per notification.
            if let inner = payload.data?.signedTransactionInfo {
                let decoded = try SignedDataVerifier.decodeUnverifiedPayload(inner, as: JWSTransactionDecodedPayload.self)
                transaction = decoded
                guard let transaction = transaction, transaction.bundleId == app.configuration.bundleId,
                    transaction.environment == nil || transaction.environment == payload.data?.environment
                else {
                    throw InboundRefusal.wrongApp("the notification's transaction is for another app or environment")
                }
                original = transaction.originalTransactionId
                transactionId = transaction.transactionId
            }
            if let inner = payload.data?.signedRenewalInfo {
                renewal = try SignedDataVerifier.decodeUnverifiedPayload(inner, as: JWSRenewalInfoDecodedPayload.self)
                original = original ?? renewal?.originalTransactionId
            }
            if let inner = payload.appData?.signedAppTransactionInfo {
                // An app-level message (RESCIND_CONSENT) names the install by its signed app transaction: verified
                // on its own (chain, signature, app) before anyone is told about it.
                let install = try await app.verifier.verifyAppTransaction(inner)
                guard install.bundleId == app.configuration.bundleId, let id = install.appTransactionId, !id.isEmpty, id.utf8.count <= 64
                else {
                    throw InboundRefusal.wrongApp("the notification's app transaction is for another app or has no id")
                }
                appTransactionId = id
            }
        } catch let failure as any StorekeeperFailure {
            throw failure
        } catch let error as SignedDataVerificationError {
            throw InboundRefusal.unverified(code: error.code, message: error.message, what: "notification")
        } catch {
            throw InboundRefusal.unverified(code: "malformed", message: "\(error)", what: "notification")
        }
        guard let uuid = payload.notificationUUID, !uuid.isEmpty, uuid.utf8.count <= 100 else {
            throw InboundRefusal.missingNotificationUUID
        }
        var received = NotificationInbox.Received(
            id: uuid,
            format: "v2",
            bundleId: app.configuration.bundleId,
            notificationType: payload.notificationType.rawValue,
            subtype: payload.subtype?.rawValue,
            originalTransactionId: original,
            transactionId: transactionId,
            signedDate: payload.signedDate,
            environment: payload.claimedIdentity.environment?.rawValue,
            body: body
        )
        // Compacted here, in the request's own task, so the one writer only copies the result.
        received.compactBody = CompactNotificationBody(body: body, digests: headerDigests)
        var message: StoreMessage?
        if applies {
            message = StoreMessage.appleNotification(
                id: uuid,
                payload: payload,
                bundleId: app.configuration.bundleId,
                environment: StoreEnvironment(storeName: payload.claimedIdentity.environment?.rawValue ?? "Production"),
                receivedAt: Date(),
                transaction: transaction,
                renewal: renewal,
                appTransactionId: appTransactionId
            )
        }
        let isNew = try await ledger.store(received, applying: message)
        if isNew, let signed = payload.signedDate { metrics.notificationStored(path: path, lag: Date().timeIntervalSince(signed)) }
        if isNew, !applies { onStored() }
        return Stored(id: uuid, isNew: isNew, type: payload.notificationType.rawValue)
    }
}

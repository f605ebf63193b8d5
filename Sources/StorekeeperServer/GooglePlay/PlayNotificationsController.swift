import Foundation
import GooglePlayWire
import Hummingbird
import Logging
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Google Play's real-time developer notifications, as a Cloud Pub/Sub push subscription delivers them:
/// `POST /google/rtdn` (the app found by the notification's package) and `POST /google/rtdn/{app}`.
///
/// Every push must carry the push subscription's OIDC token (RS256 under Google's keys, the configured audience and
/// service account). A verified push is stored in the inbox byte for byte, keyed by Pub/Sub's `messageId` (a
/// redelivery is answered 200 and stored once), and answered 200 only after that commit; the processor then asks the
/// Play Developer API about the purchase and applies Google's answer through the same message path as Apple's. A push
/// that fails verification is counted, never stored, and answered 4xx; a storage failure or Google's keys being out
/// of reach is a 5xx, so Pub/Sub retries.
struct PlayNotificationsController {
    let apps: AppRegistry
    let ledger: Ledger
    let intake: NotificationIntake
    let metrics: ServerMetrics

    struct Answer: Encodable {
        var status: String
        var id: String
    }

    func add(to routes: APIRoutes) {
        let router = routes.router
        router.post("google/rtdn") { request, context in
            try await counted { try await receive(request, context: context, appName: nil) }
        }
        router.post("google/rtdn/:app") { request, context in
            try await counted { try await receive(request, context: context, appName: try context.parameters.require("app")) }
        }
    }

    private func counted(_ body: () async throws -> (Response, String)) async throws -> Response {
        do {
            let (response, outcome) = try await body()
            metrics.submission(path: "play_notification", outcome: outcome)
            return response
        } catch let failure as any StorekeeperFailure where ![.unavailable, .internal].contains(failure.apiError.kind) {
            metrics.submission(path: "play_notification", outcome: "refused")
            throw failure.apiError
        } catch {
            metrics.submission(path: "play_notification", outcome: "retry")
            throw error
        }
    }

    /// Counts a refused push for its source (a digest and a redacted prefix, never the body) and returns the error.
    private func reject(_ body: String, context: StorekeeperRequestContext, _ failure: any StorekeeperFailure) async -> StorekeeperError {
        let error = failure.apiError
        metrics.verificationFailed(reason: "play_notification_\(error.code)")
        let source = context.clientAddress ?? "unknown"
        context.logger.notice("Play notification refused", metadata: ["code": "\(error.code)", "source": "\(source)"])
        do {
            try await ledger.countRefusal(source: source, reason: error.code, format: "play", body: body)
        } catch {
            // The refusal stands; only its count is missing.
        }
        return error
    }

    func receive(_ request: Request, context: StorekeeperRequestContext, appName: String?) async throws -> (Response, String) {
        let text = String(buffer: try await request.body.collectBody(limit: context.maxUploadSize))
        let push = try? PlayJSON.decode(PubSubPushRequest.self, from: Array(text.utf8))
        let notification = try? push?.developerNotification()
        // The app first (the token's audience is the app's), then the token, then what the body says.
        let app: AppRegistry.App
        if let appName {
            guard let named = apps.apps.first(where: { $0.configuration.name == appName }), named.googlePlay != nil else {
                throw await reject(text, context: context, InboundRefusal.unknownApp(appName))
            }
            app = named
        } else if let found = notification?.packageName.flatMap(apps.app(packageName:)) {
            app = found
        } else if let only = apps.apps.filter({ $0.googlePlay != nil }).first, apps.apps.filter({ $0.googlePlay != nil }).count == 1 {
            app = only
        } else {
            throw await reject(text, context: context, InboundRefusal.wrongApp("the push names no package this server sells under"))
        }
        guard let play = app.googlePlay, let verifier = play.push else {
            throw await reject(
                text,
                context: context,
                InboundRefusal.unverified(
                    code: "push_not_configured",
                    message: "apps.\(app.configuration.name).googlePlay.push.audience and .serviceAccount are not set",
                    what: "push"
                )
            )
        }
        do {
            _ = try await verifier.verify(authorization: request.headers[.authorization])
        } catch PlayAuthError.keysUnavailable(let why) {
            throw StorekeeperError.retry("google_keys_unavailable", "Google's signing keys could not be fetched: \(why)")
        } catch {
            throw await reject(text, context: context, InboundRefusal.unverified(code: "invalid_push_token", message: "\(error)", what: "push"))
        }
        guard let push, let notification else {
            throw await reject(text, context: context, InboundRefusal.missingFields("not a Pub/Sub push of a Play developer notification"))
        }
        guard notification.packageName == play.configuration.packageName else {
            throw await reject(
                text,
                context: context,
                InboundRefusal.wrongApp("the notification is for package \(notification.packageName ?? "(none)")")
            )
        }
        guard let messageId = push.message.messageId, !messageId.isEmpty, messageId.utf8.count <= 100,
            messageId.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            throw await reject(text, context: context, InboundRefusal.missingFields("the push message has no messageId"))
        }
        let id = "play:" + messageId
        let type: String =
            switch notification.content {
            case .subscription(let note): "SUBSCRIPTION_" + (note.notificationType?.name ?? "\(note.notificationType?.rawValue ?? 0)")
            case .oneTimeProduct(let note): note.notificationType?.name ?? "ONE_TIME_PRODUCT"
            case .voidedPurchase: "VOIDED_PURCHASE"
            case .test: "TEST_NOTIFICATION"
            case .pendingRefundReview: "PENDING_REFUND_REVIEW"
            case .unknown: "UNKNOWN"
            }
        let stored = try await ledger.store(
            .init(
                id: id,
                format: "play",
                bundleId: play.configuration.packageName,
                notificationType: type,
                subtype: nil,
                originalTransactionId: nil,
                transactionId: try InputText.check(notification.voidedPurchaseNotification?.orderId, field: "orderId", maxBytes: 100),
                signedDate: notification.eventTimeMillis?.date,
                environment: nil,
                body: text
            ),
            applying: nil
        )
        if stored { intake.onStored() }
        context.logger.info(
            "Play notification received",
            metadata: ["storekeeper.notification.id": "\(id)", "type": "\(type)", "duplicate": "\(!stored)"]
        )
        let status = stored ? "stored" : "duplicate"
        return (try context.json(Answer(status: status, id: id)), status)
    }
}

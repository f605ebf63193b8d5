import AppStoreWire
import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Apple's notification webhooks: `POST /apple/notifications/v2` (signedPayload) and `/apple/notifications/v1`
/// (legacy JSON), each also per app as `/apple/notifications/v2/{app}`.
///
/// A notification is answered 200 only after its body is durably stored in the inbox (a duplicate is answered
/// 200 and stored once; a V1 body without its shared secret). A payload that fails verification is counted per
/// source and reason, never stored whole, and answered 4xx; a storage failure is a 5xx so Apple retries.
struct AppleNotificationsController {
    let apps: AppRegistry
    let ledger: Ledger
    let inbox: NotificationInbox
    let refusals: NotificationRefusalStore
    let intake: NotificationIntake
    let metrics: ServerMetrics

    struct SignedBody: Decodable { var signedPayload: String }
    struct Answer: Encodable {
        var status: String
        var id: String
    }

    func add(to routes: APIRoutes) {
        let router = routes.router
        router.post("apple/notifications/v2") { request, context in
            try await counted("notification_v2") { try await receiveV2(request, context: context, appName: nil) }
        }
        router.post("apple/notifications/v2/:app") { request, context in
            try await counted("notification_v2") {
                try await receiveV2(request, context: context, appName: try context.parameters.require("app"))
            }
        }
        router.post("apple/notifications/v1") { request, context in
            try await counted("notification_v1") { try await receiveV1(request, context: context, appName: nil) }
        }
        router.post("apple/notifications/v1/:app") { request, context in
            try await counted("notification_v1") {
                try await receiveV1(request, context: context, appName: try context.parameters.require("app"))
            }
        }
    }

    /// Counts a webhook call under its path: `stored` or `duplicate` (told by the handler), `refused` (a 4xx: Apple
    /// will not be asked again) or `retry` (a 5xx: Apple sends it again).
    private func counted(_ path: String, _ body: () async throws -> (Response, String)) async throws -> Response {
        do {
            let (response, outcome) = try await body()
            metrics.submission(path: path, outcome: outcome)
            return response
        } catch let failure as any StorekeeperFailure where ![.unavailable, .internal].contains(failure.apiError.kind) {
            let error = failure.apiError
            metrics.submission(path: path, outcome: "refused")
            throw error
        } catch {
            metrics.submission(path: path, outcome: "retry")
            throw error
        }
    }

    private func body(_ request: Request, context: StorekeeperRequestContext) async throws -> String {
        String(buffer: try await request.body.collectBody(limit: context.maxUploadSize))
    }

    private func app(named name: String?, bundleId: () -> String?) throws -> AppRegistry.App {
        if let name {
            guard let app = apps.apps.first(where: { $0.configuration.name == name }) else {
                throw InboundRefusal.unknownApp(name)
            }
            return app
        }
        if apps.apps.count == 1 { return apps.apps[0] }
        guard let app = bundleId().flatMap(apps.app(bundleId:)) else {
            throw InboundRefusal.wrongApp("the notification is for an app this server does not serve")
        }
        return app
    }

    /// Counts a refused payload for its source (a digest and a short redacted prefix, never the body) and returns
    /// the error to throw.
    private func reject(_ body: String, format: String, context: StorekeeperRequestContext, error: StorekeeperError) async -> StorekeeperError {
        metrics.verificationFailed(reason: "notification_\(error.code)")
        let source = context.clientAddress ?? "unknown"
        context.logger.notice(
            "notification refused",
            metadata: ["code": "\(error.code)", "source": "\(source)", "format": "\(format)"]
        )
        do {
            try await ledger.countRefusal(source: source, reason: error.code, format: format, body: body)
        } catch {
            // The refusal itself stands; only its count is missing.
        }
        return error
    }

    func receiveV2(_ request: Request, context: StorekeeperRequestContext, appName: String?) async throws -> (Response, String) {
        let text = try await body(request, context: context)
        guard let signed = try? AppStoreJSON.decodePayload(SignedBody.self, from: Array(text.utf8)) else {
            throw await reject(text, format: "v2", context: context, error: .invalidInput("malformed_json", "expected {\"signedPayload\": \"…\"}"))
        }
        let app: AppRegistry.App
        do {
            app = try self.app(named: appName) {
                (try? SignedDataVerifier.decodeUnverified(signed.signedPayload, as: ResponseBodyV2DecodedPayload.self))?.payload.data?.bundleId
            }
        } catch let failure as any StorekeeperFailure {
            let error = failure.apiError
            throw await reject(text, format: "v2", context: context, error: error)
        }
        let stored: NotificationIntake.Stored
        do {
            stored = try await intake.storeV2(signed.signedPayload, body: text, app: app, path: "notification_v2")
        } catch let failure as any StorekeeperFailure where failure.apiError.outcome == .rejected {
            let error = failure.apiError
            throw await reject(text, format: "v2", context: context, error: error)
        }
        context.logger.info(
            "notification received",
            metadata: [
                "storekeeper.notification.uuid": "\(stored.id)", "type": "\(stored.type)", "duplicate": "\(!stored.isNew)",
            ]
        )
        let status = stored.isNew ? "stored" : "duplicate"
        return (try context.json(Answer(status: status, id: stored.id)), status)
    }

    func receiveV1(_ request: Request, context: StorekeeperRequestContext, appName: String?) async throws -> (Response, String) {
        let text = try await body(request, context: context)
        guard let notification = try? AppStoreJSON.makeDecoder().decode(ResponseBodyV1.self, from: Data(text.utf8)) else {
            throw await reject(text, format: "v1", context: context, error: .invalidInput("malformed_json", "not a V1 notification body"))
        }
        let app: AppRegistry.App
        do {
            app = try self.app(named: appName) { notification.bid }
        } catch let failure as any StorekeeperFailure {
            let error = failure.apiError
            throw await reject(text, format: "v1", context: context, error: error)
        }
        guard notification.bid == app.configuration.bundleId else {
            throw await reject(text, format: "v1", context: context, error: InboundRefusal.wrongApp("bid is not this app's bundle id").apiError)
        }
        // V1 bodies are unsigned: the app-specific shared secret in `password` is what proves Apple sent it.
        guard let secret = app.configuration.sharedSecret, let password = notification.password,
            SHA256.hash(data: Data(secret.utf8)) == SHA256.hash(data: Data(password.utf8))
        else {
            throw await reject(
                text,
                format: "v1",
                context: context,
                error: InboundRefusal.wrongPassword.apiError
            )
        }
        // The body is unsigned: its entries are only a hint (processing asks verifyReceipt about `latest_receipt`),
        // and it is stored without the shared secret, deduplicated on the hash of what Apple sent.
        let latest = notification.unifiedReceipt?.latestReceiptInfo?.max { ($0.purchaseDateMs ?? 0) < ($1.purchaseDateMs ?? 0) }
        let id = "v1:" + SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
        guard let redacted = NotificationRedaction.redactV1(text) else {
            throw await reject(text, format: "v1", context: context, error: .invalidInput("malformed_json", "not a V1 notification body"))
        }
        let stored = try await ledger.store(
            .init(
                id: id,
                format: "v1",
                bundleId: app.configuration.bundleId,
                notificationType: try InputText.check(notification.notificationType?.rawValue, field: "notificationType", maxBytes: 64),
                subtype: nil,
                originalTransactionId: try InputText.check(latest?.originalTransactionId, field: "originalTransactionId", maxBytes: 64),
                transactionId: try InputText.check(latest?.transactionId, field: "transactionId", maxBytes: 64),
                signedDate: nil,
                environment: try InputText.check(notification.environment, field: "environment", maxBytes: 32),
                body: redacted
            ),
            applying: nil
        )
        if stored { intake.onStored() }
        let status = stored ? "stored" : "duplicate"
        return (try context.json(Answer(status: status, id: id)), status)
    }
}

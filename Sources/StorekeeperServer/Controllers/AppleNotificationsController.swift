import AppStoreWire
import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore
import StorekeeperCore
import StorekeeperStorage

/// Apple's notification webhooks: `POST /apple/notifications/v2` (signedPayload) and `/apple/notifications/v1`
/// (legacy JSON), each also per app as `/apple/notifications/v2/{app}`.
///
/// A notification is answered 200 only after its raw body is durably stored in the inbox (a duplicate is answered
/// 200 and stored once). A payload that fails verification is recorded as rejected and answered 4xx; a storage
/// failure is a 5xx so Apple retries.
struct AppleNotificationsController<Context: RequestContext> {
    let apps: AppRegistry
    let inbox: NotificationInbox
    let intake: NotificationIntake
    let auth: Authenticator
    let metrics: ServerMetrics
    let maxBodyBytes: Int

    struct SignedBody: Decodable { var signedPayload: String }
    struct Answer: Encodable { var status: String; var id: String }

    func add(to router: Router<Context>) {
        router.post("apple/notifications/v2") { request, context in try await receiveV2(request, context: context, appName: nil) }
        router.post("apple/notifications/v2/:app") { request, context in
            try await receiveV2(request, context: context, appName: try context.parameters.require("app"))
        }
        router.post("apple/notifications/v1") { request, context in try await receiveV1(request, context: context, appName: nil) }
        router.post("apple/notifications/v1/:app") { request, context in
            try await receiveV1(request, context: context, appName: try context.parameters.require("app"))
        }
        let v1 = router.group("v1")
        v1.get("admin/notifications") { request, _ in
            _ = try auth.admin(request)
            let status = request.uri.queryParameters.get("status")
            let items = try await inbox.list(status: status, limit: min(request.uri.queryParameters.get("limit", as: Int.self) ?? 100, 1000))
            return try APIJSON.response(
                NotificationList(
                    notifications: items.map(NotificationList.Item.init)))
        }
        v1.get("admin/notifications/:id") { request, context in
            _ = try auth.admin(request)
            let id = try context.parameters.require("id")
            guard let stored = try await inbox.find(id) else {
                throw StorekeeperError.notFound("unknown_notification", "no notification \(id) in the inbox")
            }
            return try APIJSON.response(NotificationDetail(notification: .init(stored), body: stored.received.body))
        }
    }

    /// One notification with the body exactly as Apple sent it.
    struct NotificationDetail: Encodable {
        var notification: NotificationList.Item
        var body: String

        func encode(to encoder: any Encoder) throws {
            try notification.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(body, forKey: .body)
        }

        private enum Key: String, CodingKey { case body }
    }

    struct NotificationList: Encodable {
        struct Item: Encodable {
            var id: String
            var format: String
            var bundleId: String?
            var notificationType: String?
            var subtype: String?
            var originalTransactionId: String?
            var signedDate: Date?
            var status: String
            var attempts: Int
            var lastError: String?
            var receivedAt: Date

            init(_ stored: NotificationInbox.Stored) {
                id = stored.received.id
                format = stored.received.format
                bundleId = stored.received.bundleId
                notificationType = stored.received.notificationType
                subtype = stored.received.subtype
                originalTransactionId = stored.received.originalTransactionId
                signedDate = stored.received.signedDate
                status = stored.status
                attempts = stored.attempts
                lastError = stored.lastError
                receivedAt = stored.receivedAt
            }
        }

        var notifications: [Item]
    }

    private func body(_ request: Request) async throws -> String {
        do {
            return String(buffer: try await request.body.collect(upTo: maxBodyBytes))
        } catch {
            throw StorekeeperError(.payloadTooLarge, code: "body_too_large", message: "notification bodies are limited to \(maxBodyBytes) bytes")
        }
    }

    private func app(named name: String?, bundleId: () -> String?) throws -> AppRegistry.App {
        if let name {
            guard let app = apps.apps.first(where: { $0.configuration.name == name }) else {
                throw StorekeeperError.notFound("unknown_app", "no app named \(name)")
            }
            return app
        }
        if apps.apps.count == 1 { return apps.apps[0] }
        guard let app = bundleId().flatMap(apps.app(bundleId:)) else {
            throw StorekeeperError.rejected("wrong_app", "the notification is for an app this server does not serve")
        }
        return app
    }

    /// Records a refused payload (keyed by its hash, so a repeat is stored once) and returns the error to throw.
    private func reject(_ body: String, format: String, bundleId: String?, error: StorekeeperError) async -> StorekeeperError {
        metrics.verificationFailed(reason: "notification_\(error.code)")
        let id = "rejected:" + SHA256.hash(data: Data(body.utf8)).map { String(format: "%02x", $0) }.joined()
        do {
            try await inbox.recordRejected(
                .init(
                    id: id, format: format, bundleId: bundleId, notificationType: nil, subtype: nil, originalTransactionId: nil,
                    transactionId: nil, signedDate: nil, environment: nil, body: String(body.prefix(64 * 1024))),
                reason: "\(error.code): \(error.message)")
        } catch {
            // The refusal itself stands; only its record is missing.
        }
        return error
    }

    func receiveV2(_ request: Request, context: Context, appName: String?) async throws -> Response {
        let text = try await body(request)
        guard let signed = try? AppStoreJSON.decodePayload(SignedBody.self, from: Array(text.utf8)) else {
            throw await reject(text, format: "v2", bundleId: nil, error: .badRequest("malformed_json", "expected {\"signedPayload\": \"…\"}"))
        }
        let app: AppRegistry.App
        do {
            app = try self.app(named: appName) {
                (try? SignedDataVerifier.decodeUnverified(signed.signedPayload, as: ResponseBodyV2DecodedPayload.self))?.payload.data?.bundleId
            }
        } catch let error as StorekeeperError {
            throw await reject(text, format: "v2", bundleId: nil, error: error)
        }
        let stored: NotificationIntake.Stored
        do {
            stored = try await intake.storeV2(signed.signedPayload, body: text, app: app)
        } catch let error as StorekeeperError where error.outcome == .rejected {
            throw await reject(text, format: "v2", bundleId: app.configuration.bundleId, error: error)
        }
        context.logger.info(
            "notification received",
            metadata: [
                "storekeeper.notification.uuid": "\(stored.id)", "type": "\(stored.type)", "duplicate": "\(!stored.isNew)",
            ])
        return try APIJSON.response(Answer(status: stored.isNew ? "stored" : "duplicate", id: stored.id))
    }

    func receiveV1(_ request: Request, context: Context, appName: String?) async throws -> Response {
        let text = try await body(request)
        guard let notification = try? AppStoreJSON.makeDecoder().decode(ResponseBodyV1.self, from: Data(text.utf8)) else {
            throw await reject(text, format: "v1", bundleId: nil, error: .badRequest("malformed_json", "not a V1 notification body"))
        }
        let app: AppRegistry.App
        do {
            app = try self.app(named: appName) { notification.bid }
        } catch let error as StorekeeperError {
            throw await reject(text, format: "v1", bundleId: notification.bid, error: error)
        }
        guard notification.bid == app.configuration.bundleId else {
            throw await reject(text, format: "v1", bundleId: notification.bid, error: .rejected("wrong_app", "bid is not this app's bundle id"))
        }
        // V1 bodies are unsigned: the app-specific shared secret in `password` is what proves Apple sent it.
        guard let secret = app.configuration.sharedSecret, let password = notification.password,
            SHA256.hash(data: Data(secret.utf8)) == SHA256.hash(data: Data(password.utf8))
        else {
            throw await reject(
                text, format: "v1", bundleId: notification.bid,
                error: .rejected(.forbidden, "invalid_password", "the shared secret does not match (or none is configured)"))
        }
        let latest = notification.unifiedReceipt?.latestReceiptInfo?.max { ($0.purchaseDateMs ?? 0) < ($1.purchaseDateMs ?? 0) }
        let id = "v1:" + SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
        let stored = try await inbox.recordIfNew(
            .init(
                id: id, format: "v1", bundleId: app.configuration.bundleId, notificationType: notification.notificationType?.rawValue,
                subtype: nil, originalTransactionId: latest?.originalTransactionId, transactionId: latest?.transactionId,
                signedDate: nil, environment: notification.environment, body: text))
        if stored { intake.onStored() }
        return try APIJSON.response(Answer(status: stored ? "stored" : "duplicate", id: id))
    }
}

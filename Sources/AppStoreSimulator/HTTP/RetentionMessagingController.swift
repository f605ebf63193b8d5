import AppStoreWire
import Foundation
import Hummingbird
import NIOCore

/// The Retention Messaging API (`/inApps/v1/messaging/…`) behind the Server API's JWT check, and the operator's
/// controls: send a realtime request now (a customer about to cancel) and review pending content.
struct RetentionMessagingController<Context: RequestContext>: Sendable {
    let api: ServerAPIController<Context>
    let sender: RetentionRequestSender
    var store: SimulatedAppStore { api.store }

    struct SendRequest: Codable {
        var originalTransactionId: String
        var locale: String?
    }

    struct Review: Codable { var approve: Bool }

    /// What a realtime request showed, as the control endpoint reports it.
    struct Shown: Codable {
        var requestIdentifier: String
        var kind: String
        var messageIdentifier: String?
        var productId: String?
        var billingPlanType: String?
        var offerIdentifier: String?
        var failure: String?
        var milliseconds: Double

        init(_ display: RetentionDisplay) {
            requestIdentifier = display.requestIdentifier
            failure = display.failure
            milliseconds = display.milliseconds
            switch display.shown {
            case .message(let id):
                kind = "message"
                messageIdentifier = id
            case .alternateProduct(let id, let product, let plan):
                kind = "alternateProduct"
                messageIdentifier = id
                productId = product
                billingPlanType = plan?.rawValue
            case .promotionalOffer(let id, let offer):
                kind = "promotionalOffer"
                messageIdentifier = id
                offerIdentifier = offer
            case .defaultMessage(let id):
                kind = "defaultMessage"
                messageIdentifier = id
            }
        }
    }

    /// Runs `body`, answering a ``RetentionAPIError`` with Apple's error body.
    func apple(_ request: Request, _ body: @escaping () async throws -> Response) async throws -> Response {
        try await api.guarded(request) {
            do {
                return try await body()
            } catch let error as RetentionAPIError {
                return try api.apiError(HTTPResponse.Status(code: error.status), code: error.code, error.message)
            }
        }
    }

    func add(to router: some RouterMethods<Context>) {
        let messaging = router.group("inApps/v1/messaging")
        messaging.put("image/:id") { request, context in
            try await apple(request) {
                let id = try PathParameter.require("id", in: context)
                let size = request.uri.queryParameters["imageSize"].map { RetentionImageSize(rawValue: String($0)) } ?? .fullSize
                let png = Data(try await request.body.collect(upTo: 8 << 20).readableBytesView)
                try await store.uploadRetentionImage(id, size: size, png: png)
                return Response(status: .ok)
            }
        }
        messaging.delete("image/:id") { request, context in
            try await apple(request) {
                try await store.deleteRetentionImage(try PathParameter.require("id", in: context))
                return Response(status: .ok)
            }
        }
        messaging.get("image/list") { request, _ in
            try await apple(request) { try HTTPJSON.response(await store.retentionImages()) }
        }
        messaging.put("message/:id") { request, context in
            try await apple(request) {
                let id = try PathParameter.require("id", in: context)
                guard let body = try? await HTTPJSON.decode(UploadMessageRequestBody.self, from: request) else {
                    return try api.apiError(.badRequest, code: 4_000_163, "Invalid request. The message body is malformed.")
                }
                try await store.uploadRetentionMessage(id, body)
                return Response(status: .ok)
            }
        }
        messaging.delete("message/:id") { request, context in
            try await apple(request) {
                try await store.deleteRetentionMessage(try PathParameter.require("id", in: context))
                return Response(status: .ok)
            }
        }
        messaging.get("message/list") { request, _ in
            try await apple(request) { try HTTPJSON.response(await store.retentionMessages()) }
        }
        messaging.put("default/:product/:locale") { request, context in
            try await apple(request) {
                let product = try PathParameter.require("product", in: context)
                let locale = try PathParameter.require("locale", in: context)
                let body = try? await HTTPJSON.decode(DefaultConfigurationRequest.self, from: request)
                guard let id = body?.messageIdentifier else {
                    return try api.apiError(.notFound, code: 4_040_015, "Message not found.")
                }
                try await store.configureDefaultRetentionMessage(productId: product, locale: locale, messageId: id)
                return Response(status: .ok)
            }
        }
        messaging.get("default/:product/:locale") { request, context in
            try await apple(request) {
                let id = try await store.defaultRetentionMessage(
                    productId: try PathParameter.require("product", in: context),
                    locale: try PathParameter.require("locale", in: context)
                )
                return try HTTPJSON.response(DefaultConfigurationRequest(messageIdentifier: id))
            }
        }
        messaging.delete("default/:product/:locale") { request, context in
            try await apple(request) {
                try await store.deleteDefaultRetentionMessage(
                    productId: try PathParameter.require("product", in: context),
                    locale: try PathParameter.require("locale", in: context)
                )
                return Response(status: .ok)
            }
        }
        messaging.put("realtime/url") { request, _ in
            try await apple(request) {
                guard let url = (try? await HTTPJSON.decode(RealtimeUrlRequest.self, from: request))?.realtimeURL else {
                    return try api.apiError(.badRequest, code: 4_000_215, "Invalid request. The url is invalid.")
                }
                try await store.configureRetentionRealtimeURL(url)
                return Response(status: .ok)
            }
        }
        messaging.get("realtime/url") { request, _ in
            try await apple(request) { try HTTPJSON.response(RealtimeUrlRequest(realtimeURL: try await store.retentionRealtimeURL())) }
        }
        messaging.delete("realtime/url") { request, _ in
            try await apple(request) {
                await store.deleteRetentionRealtimeURL()
                return Response(status: .ok)
            }
        }
        messaging.post("performanceTest") { request, _ in
            try await apple(request) {
                guard let body = try? await HTTPJSON.decode(PerformanceTestRequest.self, from: request) else {
                    return try api.apiError(.badRequest, code: 4_000_211, "Invalid request. The performance test request is malformed.")
                }
                let started = try await store.startRetentionPerformanceTest(originalTransactionId: body.originalTransactionId)
                let sender = self.sender
                if let id = started.requestId {
                    // Apple runs the test in the background; its result is polled.
                    Task { await sender.runPerformanceTest(id, originalTransactionId: body.originalTransactionId) }
                }
                return try HTTPJSON.response(started)
            }
        }
        messaging.get("performanceTest/result/:id") { request, context in
            try await apple(request) {
                try HTTPJSON.response(try await store.retentionPerformanceTest(try PathParameter.require("id", in: context)))
            }
        }

        let control = router.group("control/retention")
        control.post("requests") { request, _ in
            let body = try await HTTPJSON.decode(SendRequest.self, from: request)
            let locale = body.locale ?? "en-US"
            guard SimulatedAppStore.retentionLocaleIsValid(locale) else {
                throw SimulatorHTTPError(.badRequest, code: "bad_locale", message: "locale \(locale) is not like en-US")
            }
            let display = try await SimulatorError.mapped {
                try await sender.send(originalTransactionId: body.originalTransactionId, locale: locale)
            }
            return try HTTPJSON.response(Shown(display))
        }
        control.post("review") { request, _ in
            let body = try await HTTPJSON.decode(Review.self, from: request)
            await store.reviewRetentionContent(approve: body.approve)
            return Response(status: .ok)
        }
    }
}

import Foundation
import GooglePlayWire
import HTTPTypes
import Hummingbird
import NIOCore

/// Google's side of the simulated Play: the OAuth token endpoint and the Play Developer API's one-time product,
/// voided purchase and order methods under `/androidpublisher/v3`, with Google's paths (custom verbs after a colon),
/// query parameters, int64-as-string JSON and error bodies. Every API call needs a bearer token the token endpoint
/// issued.
public struct PlayAPIController<Context: RequestContext>: Sendable {
    public let store: SimulatedPlayStore
    /// This simulator's own token URL, also accepted as the assertion's audience.
    public let tokenURL: String?

    public init(store: SimulatedPlayStore, tokenURL: String? = nil) {
        self.store = store
        self.tokenURL = tokenURL
    }

    public func add(to router: some RouterMethods<Context>) {
        router.post("token") { request, _ in try await self.token(request) }
        // Google's published ID-token keys (the push tokens' signers), both formats, cached as Google's are.
        router.get("oauth2/v1/certs") { _, _ in
            Self.json(200, await self.store.pushCertificates(), headers: ["cache-control": "public, max-age=3600"])
        }
        router.get("oauth2/v3/certs") { _, _ in
            Self.json(200, try await self.store.pushJWKS(), headers: ["cache-control": "public, max-age=3600"])
        }
        // Cloud Storage's JSON API over the developer account's reports bucket (the earnings reports).
        router.get("storage/v1/b/:bucket/o") { request, context in
            try await self.storage(request, context) { bucket in
                let prefix = request.uri.queryParameters["prefix"].map(String.init) ?? ""
                let objects = try await self.store.reportObjects(bucket: bucket, prefix: prefix)
                return .json(StorageList(items: objects.map { StorageObject(bucket: bucket, name: $0.name, size: String($0.size)) }))
            }
        }
        router.get("storage/v1/b/:bucket/o/:object") { request, context in
            try await self.storage(request, context) { bucket in
                let name = try Self.parameter("object", context)
                let bytes = try await self.store.reportObject(bucket: bucket, name: name)
                guard request.uri.queryParameters["alt"].map(String.init) == "media" else {
                    return .json(StorageObject(bucket: bucket, name: name, size: String(bytes.count)))
                }
                return .media(bytes)
            }
        }
        let app = router.group("androidpublisher/v3/applications/:package")
        app.get("purchases/products/:product/tokens/:token") { request, context in
            try await self.api(request, context) { package in
                try await self.store.productPurchase(
                    packageName: package,
                    productId: try Self.parameter("product", context),
                    token: try Self.parameter("token", context)
                )
            }
        }
        app.post("purchases/products/:product/tokens/:token") { request, context in
            try await self.api(request, context) { package in
                // One route parameter for the GET and its custom verbs (the router keys routes by shape).
                let (token, verb) = try Self.verb(try Self.parameter("token", context))
                let product = try Self.parameter("product", context)
                switch verb {
                case "acknowledge":
                    let body = try await Self.body(AcknowledgeBody.self, request)
                    try await self.store.acknowledge(packageName: package, productId: product, token: token, developerPayload: body?.developerPayload)
                case "consume":
                    try await self.store.consume(packageName: package, productId: product, token: token)
                default:
                    throw PlayStoreError(404, "notFound", "No method \(verb) on purchases.products.")
                }
                return Empty()
            }
        }
        app.get("purchases/subscriptionsv2/tokens/:token") { request, context in
            try await self.api(request, context) { package in
                try await self.store.subscriptionPurchase(packageName: package, token: try Self.parameter("token", context))
            }
        }
        app.post("purchases/subscriptionsv2/tokens/:token") { request, context in
            try await self.api(request, context) { package in
                let (token, verb) = try Self.verb(try Self.parameter("token", context))
                guard verb == "revoke" else { throw PlayStoreError(404, "notFound", "No method \(verb) on purchases.subscriptionsv2.") }
                try await self.store.revokeSubscription(packageName: package, token: token)
                return Empty()
            }
        }
        app.post("purchases/subscriptions/:subscription/tokens/:token") { request, context in
            try await self.api(request, context) { package -> DeferAnswer in
                let (token, verb) = try Self.verb(try Self.parameter("token", context))
                switch verb {
                case "acknowledge":
                    try await self.store.acknowledgeSubscription(packageName: package, token: token)
                case "cancel":
                    _ = try await self.store.subscriptionPurchase(packageName: package, token: token)
                    try await self.store.cancelSubscription(token: token, by: "developer")
                case "defer":
                    guard let body = try await Self.body(DeferBody.self, request), let info = body.deferralInfo,
                        let expected = info.expectedExpiryTimeMillis, let desired = info.desiredExpiryTimeMillis
                    else { throw PlayStoreError.invalid("deferralInfo") }
                    let date = try await self.store.deferSubscription(
                        packageName: package,
                        token: token,
                        expected: expected.date,
                        desired: desired.date
                    )
                    return DeferAnswer(newExpiryTimeMillis: PlayInt64(millis: date))
                default:
                    throw PlayStoreError(404, "notFound", "No method \(verb) on purchases.subscriptions.")
                }
                return DeferAnswer(newExpiryTimeMillis: nil)
            }
        }
        app.get("purchases/productsv2/tokens/:token") { request, context in
            try await self.api(request, context) { package in
                try await self.store.productPurchaseV2(packageName: package, token: try Self.parameter("token", context))
            }
        }
        app.get("purchases/voidedpurchases") { request, context in
            try await self.api(request, context) { package in
                let query = request.uri.queryParameters
                func millis(_ name: String) throws -> Date? {
                    guard let text = query[name[...]].map(String.init) else { return nil }
                    guard let value = Int64(text), value >= 0 else { throw PlayStoreError.invalid(name) }
                    return PlayInt64(value).date
                }
                let type = query["type"].map(String.init) ?? "0"
                guard type == "0" || type == "1" else { throw PlayStoreError.invalid("type") }
                // The REST page spells the paging parameters pageSelection.*; Google's clients send them bare.
                let maxResults = (query["maxResults"] ?? query["pageSelection.maxResults"]).map(String.init).map { Int($0) ?? -1 } ?? 1000
                guard maxResults >= 0 else { throw PlayStoreError.invalid("maxResults") }
                return try await self.store.voidedPurchases(
                    packageName: package,
                    startTime: try millis("startTime"),
                    endTime: try millis("endTime"),
                    includeSubscriptions: type == "1",
                    includePartial: query["includeQuantityBasedPartialRefund"].map(String.init) == "true",
                    maxResults: maxResults == 0 ? 1000 : maxResults,
                    pageToken: (query["token"] ?? query["pageSelection.token"]).map(String.init)
                )
            }
        }
        app.get("orders/:orderVerb") { request, context in
            try await self.api(request, context) { package in
                try await self.store.order(packageName: package, orderId: try Self.parameter("orderVerb", context))
            }
        }
        app.post("orders/:orderVerb") { request, context in
            try await self.api(request, context) { package in
                let (order, verb) = try Self.verb(try Self.parameter("orderVerb", context))
                guard verb == "refund" else { throw PlayStoreError(404, "notFound", "No method \(verb) on orders.") }
                let revoke = request.uri.queryParameters["revoke"].map(String.init) == "true"
                try await self.store.refund(packageName: package, orderId: order, revoke: revoke)
                return Empty()
            }
        }
    }

    struct Empty: Encodable {}

    struct StorageObject: Encodable {
        var kind = "storage#object"
        var bucket: String
        var name: String
        var size: String
        var contentType = "application/zip"
    }

    struct StorageList: Encodable {
        var kind = "storage#objects"
        var items: [StorageObject]
    }

    /// A Cloud Storage answer: JSON metadata, or an object's bytes.
    enum StorageAnswer {
        case json(any Encodable)
        case media([UInt8])
    }

    /// A Cloud Storage method: the same bearer tokens and faults as the Play Developer API, Google's error body.
    private func storage(_ request: Request, _ context: Context, _ body: (String) async throws -> StorageAnswer) async throws -> Response {
        do {
            let authorization = request.headers[.authorization] ?? ""
            guard authorization.hasPrefix("Bearer "),
                await store.isAuthorized(
                    String(authorization.dropFirst(7)),
                    scopes: [PlayReportsClient.storageReadScope, "https://www.googleapis.com/auth/devstorage.full_control"]
                )
            else { throw PlayStoreError(401, "authError", "Invalid Credentials") }
            if await store.isFaulted(method: request.method.rawValue, path: request.uri.path.removingPercentEncoding ?? request.uri.path) {
                throw PlayStoreError(503, "backendError", "The service is currently unavailable.")
            }
            switch try await body(try Self.parameter("bucket", context)) {
            case .json(let value):
                let data = try PlayJSON.encode(value)
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
            case .media(let bytes):
                return Response(status: .ok, headers: [.contentType: "application/zip"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            }
        } catch let error as PlayStoreError {
            let data = (try? PlayJSON.encode(error.body)) ?? Data()
            return Response(
                status: .init(code: error.status),
                headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: data))
            )
        }
    }

    struct AcknowledgeBody: Decodable { var developerPayload: String? }

    struct DeferBody: Decodable {
        struct Info: Decodable {
            var expectedExpiryTimeMillis: PlayInt64?
            var desiredExpiryTimeMillis: PlayInt64?
        }
        var deferralInfo: Info?
    }

    /// `{}` for acknowledge and cancel, the new expiry for defer.
    struct DeferAnswer: Encodable { var newExpiryTimeMillis: PlayInt64? }

    /// The form-encoded JWT bearer grant; answers as Google's token endpoint does.
    private func token(_ request: Request) async throws -> Response {
        let bytes = try await request.body.collect(upTo: 64 * 1024)
        let form = String(buffer: bytes)
        var fields: [String: String] = [:]
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            fields[String(parts[0])] = String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        func failure(_ error: String, _ description: String) -> Response {
            Self.json(400, ["error": error, "error_description": description])
        }
        guard fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            return failure("unsupported_grant_type", "Invalid grant_type.")
        }
        guard let assertion = fields["assertion"] else { return failure("invalid_request", "Missing required parameter: assertion") }
        do {
            let granted = try await store.grant(assertion: assertion, ownAudience: tokenURL)
            return Self.json(200, ["access_token": granted.token, "expires_in": granted.expiresIn, "token_type": "Bearer"])
        } catch let error as PlayStoreError {
            return failure(error.reason, error.message)
        }
    }

    /// An API method: the caller's bearer token first, then `body` with the path's package name; refusals as
    /// Google's error body.
    private func api(_ request: Request, _ context: Context, _ body: (String) async throws -> some Encodable) async throws -> Response {
        do {
            let authorization = request.headers[.authorization] ?? ""
            guard authorization.hasPrefix("Bearer "), await store.isAuthorized(String(authorization.dropFirst(7))) else {
                throw PlayStoreError(401, "authError", "Invalid Credentials")
            }
            if await store.isFaulted(method: request.method.rawValue, path: request.uri.path.removingPercentEncoding ?? request.uri.path) {
                throw PlayStoreError(503, "backendError", "The service is currently unavailable.")
            }
            let value = try await body(try Self.parameter("package", context))
            let data = try PlayJSON.encode(value)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
        } catch let error as PlayStoreError {
            let data = (try? PlayJSON.encode(error.body)) ?? Data()
            return Response(
                status: .init(code: error.status),
                headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: data))
            )
        }
    }

    private static func json(_ status: Int, _ object: [String: any Sendable], headers: [String: String] = [:]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        var fields: HTTPFields = [.contentType: "application/json"]
        for (name, value) in headers { if let field = HTTPField.Name(name) { fields[field] = value } }
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A path parameter, percent-decoded once.
    private static func parameter(_ name: String, _ context: Context) throws -> String {
        guard let raw = context.parameters.get(name), let decoded = raw.removingPercentEncoding, !decoded.isEmpty, decoded.utf8.count <= 1000 else {
            throw PlayStoreError.invalid(name)
        }
        return decoded
    }

    /// `token:acknowledge` → (`token`, `acknowledge`): gRPC transcoding's custom verb after the last colon.
    private static func verb(_ segment: String) throws -> (String, String) {
        guard let colon = segment.lastIndex(of: ":") else { throw PlayStoreError(404, "notFound", "No method named.") }
        return (String(segment[..<colon]), String(segment[segment.index(after: colon)...]))
    }

    private static func body<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T? {
        let bytes = try await request.body.collect(upTo: 64 * 1024)
        guard bytes.readableBytes > 0 else { return nil }
        do {
            return try PlayJSON.decode(type, from: Array(bytes.readableBytesView))
        } catch {
            throw PlayStoreError(400, "parseError", "This API does not support parsing form-encoded input.")
        }
    }
}

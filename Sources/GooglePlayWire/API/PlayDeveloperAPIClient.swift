import Foundation

/// The Play Developer API's purchase, voided-purchase and order methods (`androidpublisher/v3`), with a service
/// account's bearer token. Quota errors, 5xx and lost connections are retried a bounded number of times with
/// exponential back-off and jitter, as Google's clients do; a 401 refreshes the token once.
public struct PlayDeveloperAPIClient: Sendable {
    public static let googleBaseURL = "https://androidpublisher.googleapis.com/"

    public let baseURL: String
    public let tokens: AccessTokenProvider
    public let maximumAttempts: Int
    private let transport: any PlayHTTPTransport
    private let sleep: @Sendable (Duration) async throws -> Void

    public init(
        baseURL: String = PlayDeveloperAPIClient.googleBaseURL,
        tokens: AccessTokenProvider,
        transport: any PlayHTTPTransport,
        maximumAttempts: Int = 4,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? baseURL : baseURL + "/"
        self.tokens = tokens
        self.transport = transport
        self.maximumAttempts = max(1, min(maximumAttempts, 10))
        self.sleep = sleep
    }

    // MARK: Subscriptions

    public func getSubscription(packageName: String, token: String) async throws -> SubscriptionPurchaseV2 {
        try await call("GET", "\(app(packageName))/purchases/subscriptionsv2/tokens/\(segment(token))", as: SubscriptionPurchaseV2.self)
    }

    /// How `subscriptionsv2.revoke` refunds: the latest charge of each item, the unused time's share, or one add-on.
    public enum Revocation: Sendable, Hashable {
        case fullRefund
        case proratedRefund
        case itemBasedRefund(productId: String)
    }

    /// Ends access now (Google then sends `SUBSCRIPTION_REVOKED`).
    public func revokeSubscription(packageName: String, token: String, _ revocation: Revocation) async throws {
        let context: [String: [String: [String: String]]] =
            switch revocation {
            case .fullRefund: ["revocationContext": ["fullRefund": [:]]]
            case .proratedRefund: ["revocationContext": ["proratedRefund": [:]]]
            case .itemBasedRefund(let productId): ["revocationContext": ["itemBasedRefund": ["productId": productId]]]
            }
        try await send("POST", "\(app(packageName))/purchases/subscriptionsv2/tokens/\(segment(token)):revoke", body: context)
    }

    /// Acknowledges a subscription purchase (within three days, or Google refunds and revokes it). Google ignores the
    /// product id in the path since 2025; it is sent all the same.
    public func acknowledgeSubscription(packageName: String, subscriptionId: String, token: String, developerPayload: String? = nil) async throws {
        try await send(
            "POST",
            "\(app(packageName))/purchases/subscriptions/\(segment(subscriptionId))/tokens/\(segment(token)):acknowledge",
            body: Payload(developerPayload: developerPayload)
        )
    }

    /// Stops renewals, as the user would (legacy `subscriptions.cancel`, deprecated by Google in 2026 but served).
    public func cancelSubscription(packageName: String, subscriptionId: String, token: String) async throws {
        try await send(
            "POST",
            "\(app(packageName))/purchases/subscriptions/\(segment(subscriptionId))/tokens/\(segment(token)):cancel",
            body: nil as Payload?
        )
    }

    /// Moves the renewal from `expected` (the current expiry, or Google does nothing) to `desired` (legacy `defer`).
    public func deferSubscription(packageName: String, subscriptionId: String, token: String, expected: Date, desired: Date) async throws -> Date {
        struct Body: Encodable {
            struct Info: Encodable {
                var expectedExpiryTimeMillis: PlayInt64
                var desiredExpiryTimeMillis: PlayInt64
            }
            var deferralInfo: Info
        }
        struct Answer: Decodable { var newExpiryTimeMillis: PlayInt64? }
        let answer = try await call(
            "POST",
            "\(app(packageName))/purchases/subscriptions/\(segment(subscriptionId))/tokens/\(segment(token)):defer",
            body: Body(
                deferralInfo: .init(expectedExpiryTimeMillis: PlayInt64(millis: expected), desiredExpiryTimeMillis: PlayInt64(millis: desired))
            ),
            as: Answer.self
        )
        guard let date = answer.newExpiryTimeMillis?.date else {
            throw PlayDeveloperAPIError(status: 200, reason: nil, message: "defer answered without newExpiryTimeMillis")
        }
        return date
    }

    // MARK: One-time products

    public func getProduct(packageName: String, productId: String, token: String) async throws -> ProductPurchase {
        try await call("GET", "\(app(packageName))/purchases/products/\(segment(productId))/tokens/\(segment(token))", as: ProductPurchase.self)
    }

    public func getProductV2(packageName: String, token: String) async throws -> ProductPurchaseV2 {
        try await call("GET", "\(app(packageName))/purchases/productsv2/tokens/\(segment(token))", as: ProductPurchaseV2.self)
    }

    public func acknowledgeProduct(packageName: String, productId: String, token: String, developerPayload: String? = nil) async throws {
        try await send(
            "POST",
            "\(app(packageName))/purchases/products/\(segment(productId))/tokens/\(segment(token)):acknowledge",
            body: Payload(developerPayload: developerPayload)
        )
    }

    /// Consumes a consumable (which also acknowledges it and lets the user buy it again).
    public func consumeProduct(packageName: String, productId: String, token: String) async throws {
        try await send("POST", "\(app(packageName))/purchases/products/\(segment(productId))/tokens/\(segment(token)):consume", body: nil as Payload?)
    }

    // MARK: Voided purchases and orders

    /// One page of voided purchases, oldest first. Google looks back 30 days at most; `type` 1 includes subscriptions.
    public func listVoidedPurchases(
        packageName: String,
        startTime: Date? = nil,
        endTime: Date? = nil,
        includeSubscriptions: Bool = true,
        includeQuantityBasedPartialRefund: Bool = true,
        maxResults: Int = 1000,
        pageToken: String? = nil
    ) async throws -> VoidedPurchasesListResponse {
        var query = [
            ("type", includeSubscriptions ? "1" : "0"),
            ("includeQuantityBasedPartialRefund", includeQuantityBasedPartialRefund ? "true" : "false"),
            ("maxResults", String(max(1, min(maxResults, 1000)))),
        ]
        if let pageToken {
            query.append(("token", pageToken))
        } else {
            if let startTime { query.append(("startTime", String(PlayInt64(millis: startTime).value))) }
            if let endTime { query.append(("endTime", String(PlayInt64(millis: endTime).value))) }
        }
        return try await call("GET", "\(app(packageName))/purchases/voidedpurchases", query: query, as: VoidedPurchasesListResponse.self)
    }

    /// One order: what the buyer paid, the tax in it and the developer's revenue after Google's fee.
    public func getOrder(packageName: String, orderId: String) async throws -> PlayOrder {
        try await call("GET", "\(app(packageName))/orders/\(segment(orderId))", as: PlayOrder.self)
    }

    /// Refunds an order; `revoke` also ends access now (only revoked refunds reach the voided purchases).
    public func refundOrder(packageName: String, orderId: String, revoke: Bool) async throws {
        try await send(
            "POST",
            "\(app(packageName))/orders/\(segment(orderId)):refund",
            query: [("revoke", revoke ? "true" : "false")],
            body: nil as Payload?
        )
    }

    // MARK: Transport

    struct Payload: Encodable { var developerPayload: String? }

    private func app(_ packageName: String) -> String { "androidpublisher/v3/applications/\(segment(packageName))" }

    /// A path segment with everything but unreserved characters percent-encoded (tokens, ids and package names are
    /// Google's, but a colon or slash inside one must not change the path).
    func segment(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    private func call<T: Decodable>(
        _ method: String,
        _ path: String,
        query: [(String, String)] = [],
        body: (some Encodable)? = nil as Payload?,
        as type: T.Type
    ) async throws -> T {
        let response = try await exchange(method, path, query: query, body: body)
        do {
            return try PlayJSON.decode(type, from: response.body)
        } catch {
            throw PlayDeveloperAPIError(status: response.status, reason: nil, message: "the answer is not a \(type): \(error)")
        }
    }

    private func send(_ method: String, _ path: String, query: [(String, String)] = [], body: (some Encodable)?) async throws {
        _ = try await exchange(method, path, query: query, body: body)
    }

    /// One call to `baseURL + path` with bounded retries; `alt` is Google's answer format (`media` downloads an object).
    func exchange(
        _ method: String,
        _ path: String,
        query: [(String, String)],
        body: (some Encodable)?,
        alt: String = "json"
    ) async throws -> PlayHTTPResponse {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let queryText = (query + [("alt", alt)]).map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
        let url = baseURL + path + "?" + queryText.joined(separator: "&")
        let bytes = try body.map { Array(try PlayJSON.encode($0)) }
        var refreshed = false
        var attempt = 0
        while true {
            attempt += 1
            let failure: PlayDeveloperAPIError
            do {
                let token = try await tokens.token()
                var headers = [("Authorization", "Bearer \(token)"), ("Accept", alt == "json" ? "application/json" : "*/*")]
                if bytes != nil { headers.append(("Content-Type", "application/json")) }
                let response = try await transport.send(PlayHTTPRequest(method: method, url: url, headers: headers, body: bytes))
                if (200..<300).contains(response.status) { return response }
                let error = try? PlayJSON.decode(GoogleAPIErrorBody.self, from: response.body)
                failure = PlayDeveloperAPIError(
                    status: response.status,
                    reason: error?.reason,
                    message: String((error?.error.message ?? "HTTP \(response.status)").prefix(300))
                )
                if response.status == 401, !refreshed {
                    refreshed = true
                    await tokens.invalidate()
                    attempt -= 1
                    continue
                }
            } catch let error as PlayDeveloperAPIError {
                throw error
            } catch let error as PlayAuthError {
                throw error
            } catch {
                failure = PlayDeveloperAPIError(status: 0, reason: nil, message: "no answer: \(error)")
            }
            guard failure.isRetryable, attempt < maximumAttempts else { throw failure }
            // Google's clients: random() × 2^attempt seconds; bounded here to half a second … 8 s.
            let ceiling = min(8.0, 0.5 * pow(2.0, Double(attempt - 1)))
            try await sleep(.milliseconds(Int(Double.random(in: ceiling / 2...ceiling) * 1000)))
        }
    }
}

import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// A client of the App Store Server API: one method per endpoint, a fresh JWT per request, typed errors
/// (``AppStoreServerAPIError``) and bounded retries of retryable failures.
///
/// A POST that is not idempotent (Request a Test Notification, Finish Transaction) is retried only after an
/// answer that says it was not carried out (429, a retryable error code, 5xx), never after a transport
/// failure, when Apple may already have acted on it.
///
/// Every method throws ``AppStoreServerAPIError`` (or `CancellationError` when its task is cancelled while
/// waiting to retry).
public struct AppStoreServerAPIClient: Sendable {
    public let baseURL: AppStoreServerAPIBaseURL
    public let retryPolicy: AppStoreServerAPIRetryPolicy
    /// How long one HTTP exchange may take.
    public let requestTimeout: Duration
    private let httpClient: HTTPClient
    private let tokenGenerator: AppStoreAPITokenGenerator
    private let logger: Logger
    private static let maxResponseBytes = 16 * 1024 * 1024

    /// - Parameters:
    ///   - httpClient: a client the caller owns and shuts down.
    ///   - baseURL: `.production`, `.sandbox`, or any URL such as a local simulator.
    public init(
        httpClient: HTTPClient,
        tokenGenerator: AppStoreAPITokenGenerator,
        baseURL: AppStoreServerAPIBaseURL,
        retryPolicy: AppStoreServerAPIRetryPolicy = .default,
        requestTimeout: Duration = .seconds(30),
        logger: Logger = Logger(label: "AppStoreWire.AppStoreServerAPIClient")
    ) {
        self.httpClient = httpClient
        self.tokenGenerator = tokenGenerator
        self.baseURL = baseURL
        self.retryPolicy = retryPolicy
        self.requestTimeout = requestTimeout
        self.logger = logger
    }

    /// A client of Apple's host for `environment`; throws for `Xcode` and `LocalTesting`, which have none.
    public init(
        httpClient: HTTPClient,
        tokenGenerator: AppStoreAPITokenGenerator,
        environment: AppStoreEnvironment,
        retryPolicy: AppStoreServerAPIRetryPolicy = .default,
        requestTimeout: Duration = .seconds(30),
        logger: Logger = Logger(label: "AppStoreWire.AppStoreServerAPIClient")
    ) throws {
        guard let baseURL = AppStoreServerAPIBaseURL(environment: environment) else {
            throw AppStoreServerAPIError(
                kind: .invalidRequest,
                errorMessage: "no App Store Server API for environment \(environment)",
                attempts: 0
            )
        }
        self.init(
            httpClient: httpClient,
            tokenGenerator: tokenGenerator,
            baseURL: baseURL,
            retryPolicy: retryPolicy,
            requestTimeout: requestTimeout,
            logger: logger
        )
    }

    // MARK: - Transactions

    /// Get Transaction Info: `GET /inApps/v1/transactions/{transactionId}`.
    public func getTransactionInfo(transactionId: String) async throws -> TransactionInfoResponse {
        try await call(.GET, "/inApps/v1/transactions/\(segment(transactionId))")
    }

    /// Get Transaction History (v2): `GET /inApps/v2/history/{transactionId}`, one page.
    public func getTransactionHistory(
        transactionId: String,
        request: TransactionHistoryRequest = .init()
    ) async throws -> HistoryResponse {
        try await call(.GET, "/inApps/v2/history/\(segment(transactionId))", query: request.queryItems)
    }

    /// Get Transaction History V1 (deprecated): `GET /inApps/v1/history/{transactionId}`, one page.
    public func getTransactionHistoryV1(
        transactionId: String,
        request: TransactionHistoryRequest = .init()
    ) async throws -> HistoryResponse {
        try await call(.GET, "/inApps/v1/history/\(segment(transactionId))", query: request.queryItems)
    }

    /// Every page of a transaction history, following `revision` while `hasMore`.
    ///
    /// Starts at `request.revision` (nil = the beginning). The last page's `revision` is where to resume
    /// later (with ascending sort).
    public func getAllTransactionHistory(
        transactionId: String,
        request: TransactionHistoryRequest = .init(),
        version: TransactionHistoryVersion = .v2,
        maxPages: Int = 10_000
    ) async throws -> [HistoryResponse] {
        var request = request
        var pages: [HistoryResponse] = []
        while true {
            let page =
                switch version {
                case .v1: try await getTransactionHistoryV1(transactionId: transactionId, request: request)
                case .v2: try await getTransactionHistory(transactionId: transactionId, request: request)
                }
            pages.append(page)
            guard page.hasMore == true else { return pages }
            request.revision = try nextToken(page.revision, previous: request.revision, pages: pages.count, maxPages)
        }
    }

    /// Look Up Order ID: `GET /inApps/v1/lookup/{orderId}`.
    public func lookUpOrderId(orderId: String) async throws -> OrderLookupResponse {
        try await call(.GET, "/inApps/v1/lookup/\(segment(orderId))")
    }

    /// Get Refund History (v2): `GET /inApps/v2/refund/lookup/{transactionId}`, one page.
    public func getRefundHistory(transactionId: String, revision: String? = nil) async throws -> RefundHistoryResponse {
        try await call(
            .GET,
            "/inApps/v2/refund/lookup/\(segment(transactionId))",
            query: revision.map { [URLQueryItem(name: "revision", value: $0)] } ?? []
        )
    }

    /// Every page of the refund history, following `revision` while `hasMore`.
    public func getAllRefundHistory(
        transactionId: String,
        maxPages: Int = 10_000
    ) async throws
        -> [RefundHistoryResponse]
    {
        var revision: String?
        var pages: [RefundHistoryResponse] = []
        while true {
            let page = try await getRefundHistory(transactionId: transactionId, revision: revision)
            pages.append(page)
            guard page.hasMore == true else { return pages }
            revision = try nextToken(page.revision, previous: revision, pages: pages.count, maxPages)
        }
    }

    /// Get Refund History V1 (deprecated): `GET /inApps/v1/refund/lookup/{originalTransactionId}`.
    public func getRefundHistoryV1(originalTransactionId: String) async throws -> RefundHistoryResponse {
        try await call(.GET, "/inApps/v1/refund/lookup/\(segment(originalTransactionId))")
    }

    /// Get App Transaction Info: `GET /inApps/v1/transactions/appTransactions/{transactionId}`.
    public func getAppTransactionInfo(transactionId: String) async throws -> AppTransactionInfoResponse {
        try await call(.GET, "/inApps/v1/transactions/appTransactions/\(segment(transactionId))")
    }

    /// Set App Account Token: `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`.
    public func setAppAccountToken(originalTransactionId: String, appAccountToken: UUID) async throws {
        try await callWithoutResponse(
            .PUT,
            "/inApps/v1/transactions/\(segment(originalTransactionId))/appAccountToken",
            body: UpdateAppAccountTokenRequest(appAccountToken: appAccountToken)
        )
    }

    /// Finish Transaction: `POST /inApps/v1/transactions/{transactionId}/finish`.
    public func finishTransaction(transactionId: String) async throws {
        try await callWithoutResponse(.POST, "/inApps/v1/transactions/\(segment(transactionId))/finish")
    }

    // MARK: - Multiseat subscriptions (API 1.23; sandbox only, a purchase whose developer manages invitations)

    /// Claim Seat: `POST /groups/v1/transactions/{originalTransactionId}/seats`. Safe to retry with the same
    /// `requestIdentifier`: Apple answers the seat it claimed the first time.
    public func claimSeat(originalTransactionId: String, request: ClaimSeatRequest) async throws -> ClaimSeatResponse {
        try await call(.POST, "/groups/v1/transactions/\(segment(originalTransactionId))/seats", body: request, idempotent: true)
    }

    /// Get Seat Info: `GET /groups/v1/transactions/{originalTransactionId}/seats`.
    public func getSeatInfo(originalTransactionId: String) async throws -> SeatInfoResponse {
        try await call(.GET, "/groups/v1/transactions/\(segment(originalTransactionId))/seats")
    }

    /// Unclaim Seat: `DELETE /groups/v1/transactions/{originalTransactionId}/seats/{seatClaimId}`.
    public func unclaimSeat(originalTransactionId: String, seatClaimId: String) async throws {
        try await callWithoutResponse(.DELETE, "/groups/v1/transactions/\(segment(originalTransactionId))/seats/\(segment(seatClaimId))")
    }

    /// Associate Seat: `POST /groups/v1/transactions/{originalTransactionId}/seats/{seatClaimId}/associate`.
    public func associateSeat(originalTransactionId: String, seatClaimId: String, request: AssociateSeatRequest) async throws {
        try await callWithoutResponse(
            .POST,
            "/groups/v1/transactions/\(segment(originalTransactionId))/seats/\(segment(seatClaimId))/associate",
            body: request,
            idempotent: true
        )
    }

    // MARK: - Retention Messaging

    /// Upload Image: `PUT /inApps/v1/messaging/image/{imageIdentifier}` with the PNG as the body.
    public func uploadRetentionImage(imageIdentifier: UUID, png: Data, size: RetentionImageSize? = nil) async throws {
        try await callWithoutResponse(
            .PUT,
            "/inApps/v1/messaging/image/\(Self.lowercased(imageIdentifier))",
            query: size.map { [URLQueryItem(name: "imageSize", value: $0.rawValue)] } ?? [],
            raw: (png, "image/png"),
            idempotent: false
        )
    }

    /// Delete Image: `DELETE /inApps/v1/messaging/image/{imageIdentifier}`.
    public func deleteRetentionImage(imageIdentifier: UUID) async throws {
        try await callWithoutResponse(.DELETE, "/inApps/v1/messaging/image/\(Self.lowercased(imageIdentifier))", idempotent: false)
    }

    /// Get Image List: `GET /inApps/v1/messaging/image/list`.
    public func getRetentionImageList() async throws -> GetImageListResponse {
        try await call(.GET, "/inApps/v1/messaging/image/list")
    }

    /// Upload Message: `PUT /inApps/v1/messaging/message/{messageIdentifier}`.
    public func uploadRetentionMessage(messageIdentifier: UUID, message: UploadMessageRequestBody) async throws {
        try await callWithoutResponse(
            .PUT,
            "/inApps/v1/messaging/message/\(Self.lowercased(messageIdentifier))",
            body: message,
            // A second upload of the same id is refused (409), so resending after a lost answer is told apart.
            idempotent: false
        )
    }

    /// Delete Message: `DELETE /inApps/v1/messaging/message/{messageIdentifier}`.
    public func deleteRetentionMessage(messageIdentifier: UUID) async throws {
        try await callWithoutResponse(.DELETE, "/inApps/v1/messaging/message/\(Self.lowercased(messageIdentifier))", idempotent: false)
    }

    /// Get Message List: `GET /inApps/v1/messaging/message/list`.
    public func getRetentionMessageList() async throws -> GetMessageListResponse {
        try await call(.GET, "/inApps/v1/messaging/message/list")
    }

    /// Configure Default Message: `PUT /inApps/v1/messaging/default/{productId}/{locale}` (overwrites).
    public func configureDefaultRetentionMessage(productId: String, locale: String, messageIdentifier: UUID) async throws {
        try await callWithoutResponse(
            .PUT,
            "/inApps/v1/messaging/default/\(segment(productId))/\(segment(locale))",
            body: DefaultConfigurationRequest(messageIdentifier: Self.lowercased(messageIdentifier))
        )
    }

    /// Get Default Message: `GET /inApps/v1/messaging/default/{productId}/{locale}`.
    public func getDefaultRetentionMessage(productId: String, locale: String) async throws -> DefaultConfigurationRequest {
        try await call(.GET, "/inApps/v1/messaging/default/\(segment(productId))/\(segment(locale))")
    }

    /// Delete Default Message: `DELETE /inApps/v1/messaging/default/{productId}/{locale}` (200 when none).
    public func deleteDefaultRetentionMessage(productId: String, locale: String) async throws {
        try await callWithoutResponse(.DELETE, "/inApps/v1/messaging/default/\(segment(productId))/\(segment(locale))")
    }

    /// Configure Realtime URL: `PUT /inApps/v1/messaging/realtime/url` (the host's environment's URL).
    public func configureRetentionRealtimeURL(_ url: String) async throws {
        try await callWithoutResponse(.PUT, "/inApps/v1/messaging/realtime/url", body: RealtimeUrlRequest(realtimeURL: url))
    }

    /// Get Realtime URL: `GET /inApps/v1/messaging/realtime/url`.
    public func getRetentionRealtimeURL() async throws -> RealtimeUrlRequest {
        try await call(.GET, "/inApps/v1/messaging/realtime/url")
    }

    /// Delete Realtime URL: `DELETE /inApps/v1/messaging/realtime/url`.
    public func deleteRetentionRealtimeURL() async throws {
        try await callWithoutResponse(.DELETE, "/inApps/v1/messaging/realtime/url")
    }

    /// Initiate Performance Test: `POST /inApps/v1/messaging/performanceTest` (sandbox).
    public func initiateRetentionPerformanceTest(originalTransactionId: String) async throws -> PerformanceTestResponse {
        try await call(.POST, "/inApps/v1/messaging/performanceTest", body: PerformanceTestRequest(originalTransactionId: originalTransactionId))
    }

    /// Get Performance Test Results: `GET /inApps/v1/messaging/performanceTest/result/{requestId}`.
    public func getRetentionPerformanceTestResults(requestId: String) async throws -> PerformanceTestResultResponse {
        try await call(.GET, "/inApps/v1/messaging/performanceTest/result/\(segment(requestId))")
    }

    private static func lowercased(_ id: UUID) -> String { id.uuidString.lowercased() }

    // MARK: - Consumption

    /// Send Consumption Information (v2): `PUT /inApps/v2/transactions/consumption/{transactionId}`.
    public func sendConsumptionInformation(transactionId: String, request: ConsumptionRequest) async throws {
        try await callWithoutResponse(
            .PUT,
            "/inApps/v2/transactions/consumption/\(segment(transactionId))",
            body: request
        )
    }

    /// Send Consumption Information V1: `PUT /inApps/v1/transactions/consumption/{transactionId}`.
    public func sendConsumptionInformationV1(transactionId: String, request: ConsumptionRequestV1) async throws {
        try await callWithoutResponse(
            .PUT,
            "/inApps/v1/transactions/consumption/\(segment(transactionId))",
            body: request
        )
    }

    // MARK: - Subscriptions

    /// Get All Subscription Statuses: `GET /inApps/v1/subscriptions/{transactionId}`, optionally only
    /// subscriptions in the given statuses.
    public func getAllSubscriptionStatuses(
        transactionId: String,
        status: [SubscriptionStatus] = []
    ) async throws -> StatusResponse {
        try await call(
            .GET,
            "/inApps/v1/subscriptions/\(segment(transactionId))",
            query: status.map { URLQueryItem(name: "status", value: String($0.rawValue)) }
        )
    }

    /// Extend a Subscription Renewal Date: `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`.
    public func extendSubscriptionRenewalDate(
        originalTransactionId: String,
        request: ExtendRenewalDateRequest
    ) async throws -> ExtendRenewalDateResponse {
        try await call(.PUT, "/inApps/v1/subscriptions/extend/\(segment(originalTransactionId))", body: request)
    }

    /// Extend Renewal Dates for All Active Subscribers: `POST /inApps/v1/subscriptions/extend/mass`.
    public func extendRenewalDateForAllActiveSubscribers(
        request: MassExtendRenewalDateRequest
    ) async throws -> MassExtendRenewalDateResponse {
        // Apple deduplicates on the request's `requestIdentifier`, so resending after a lost answer is safe.
        try await call(.POST, "/inApps/v1/subscriptions/extend/mass", body: request, idempotent: true)
    }

    /// Get Status of Subscription Renewal Date Extensions:
    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
    public func getStatusOfSubscriptionRenewalDateExtensions(
        productId: String,
        requestIdentifier: String
    ) async throws -> MassExtendRenewalDateStatusResponse {
        try await call(
            .GET,
            "/inApps/v1/subscriptions/extend/mass/\(segment(productId))/\(segment(requestIdentifier))"
        )
    }

    // MARK: - Notifications

    /// Request a Test Notification: `POST /inApps/v1/notifications/test`.
    public func requestTestNotification() async throws -> SendTestNotificationResponse {
        try await call(.POST, "/inApps/v1/notifications/test")
    }

    /// Get Test Notification Status: `GET /inApps/v1/notifications/test/{testNotificationToken}`.
    public func getTestNotificationStatus(testNotificationToken: String) async throws -> CheckTestNotificationResponse {
        try await call(.GET, "/inApps/v1/notifications/test/\(segment(testNotificationToken))")
    }

    /// Get Notification History: `POST /inApps/v1/notifications/history?paginationToken=…`, one page.
    public func getNotificationHistory(
        paginationToken: String? = nil,
        request: NotificationHistoryRequest
    ) async throws -> NotificationHistoryResponse {
        // A read that happens to be a POST: resending it changes nothing.
        try await call(
            .POST,
            "/inApps/v1/notifications/history",
            query: paginationToken.map { [URLQueryItem(name: "paginationToken", value: $0)] } ?? [],
            body: request,
            idempotent: true
        )
    }

    /// Every notification in the range, following `paginationToken` while `hasMore`.
    public func getAllNotificationHistory(
        request: NotificationHistoryRequest,
        maxPages: Int = 10_000
    ) async throws -> [NotificationHistoryResponseItem] {
        var token: String?
        var items: [NotificationHistoryResponseItem] = []
        var pageCount = 0
        while true {
            let page = try await getNotificationHistory(paginationToken: token, request: request)
            pageCount += 1
            items += page.notificationHistory ?? []
            guard page.hasMore == true else { return items }
            token = try nextToken(page.paginationToken, previous: token, pages: pageCount, maxPages)
        }
    }

    // MARK: - Transport

    private struct RawResponse {
        let status: Int
        let headers: HTTPHeaders
        let body: Data
    }

    // Paging must make progress: a page that says "more" without a new token would loop for ever.
    private func nextToken(_ token: String?, previous: String?, pages: Int, _ maxPages: Int) throws -> String {
        guard let token, !token.isEmpty, token != previous else {
            throw AppStoreServerAPIError(
                kind: .malformedResponse,
                errorMessage: "page says hasMore but gives no new paging token"
            )
        }
        guard pages < maxPages else {
            throw AppStoreServerAPIError(kind: .malformedResponse, errorMessage: "more than \(maxPages) pages")
        }
        return token
    }

    private func segment(_ value: String) -> String {
        ServerAPIEncoding.percentEncoded(value)
    }

    /// - Parameter idempotent: whether sending the request twice has the effect of sending it once; nil
    ///   means "unless it is a POST".
    private func call<Response: Decodable>(
        _ method: HTTPMethod,
        _ path: String,
        query: [URLQueryItem] = [],
        body: (any Encodable & Sendable)? = nil,
        idempotent: Bool? = nil
    ) async throws -> Response {
        let raw = try await perform(method, path, query: query, body: body, idempotent: idempotent ?? (method != .POST))
        do {
            return try AppStoreJSON.makeDecoder().decode(Response.self, from: raw.body)
        } catch {
            throw AppStoreServerAPIError(
                kind: .malformedResponse,
                httpStatus: raw.status,
                errorMessage: "could not decode \(Response.self)",
                underlyingError: error
            )
        }
    }

    private func callWithoutResponse(
        _ method: HTTPMethod,
        _ path: String,
        query: [URLQueryItem] = [],
        body: (any Encodable & Sendable)? = nil,
        raw: (data: Data, contentType: String)? = nil,
        idempotent: Bool? = nil
    ) async throws {
        _ = try await perform(method, path, query: query, body: body, raw: raw, idempotent: idempotent ?? (method != .POST))
    }

    private func perform(
        _ method: HTTPMethod,
        _ path: String,
        query: [URLQueryItem],
        body: (any Encodable & Sendable)?,
        raw: (data: Data, contentType: String)? = nil,
        idempotent: Bool
    ) async throws -> RawResponse {
        var url = baseURL.url.absoluteString
        while url.hasSuffix("/") { url.removeLast() }
        url += path
        if !query.isEmpty { url += "?" + ServerAPIEncoding.query(query) }

        let bodyData: Data?
        do {
            bodyData = try body.map { try AppStoreJSON.makeEncoder().encode($0) }
        } catch {
            throw AppStoreServerAPIError(
                kind: .invalidRequest,
                errorMessage: "could not encode the request body",
                attempts: 0,
                underlyingError: error
            )
        }

        var attempt = 0
        while true {
            attempt += 1
            var failure: AppStoreServerAPIError
            do {
                let raw = try await exchange(
                    method,
                    url: url,
                    body: raw?.data ?? bodyData,
                    contentType: raw?.contentType ?? "application/json",
                    attempt: attempt
                )
                if (200..<300).contains(raw.status) { return raw }
                failure = Self.httpError(raw, now: retryPolicy.now())
            } catch {
                failure = error
            }
            failure.attempts = attempt

            guard failure.isRetryable, attempt < retryPolicy.maxAttempts, !Task.isCancelled else { throw failure }
            // Without an answer the request may have been carried out already (a dropped connection or a
            // timeout can come after Apple acted): sending a non-idempotent one again could act twice.
            guard idempotent || failure.kind != .transport else { throw failure }
            var delay = retryPolicy.backoffDelay(retry: attempt)
            if let retryAfter = failure.retryAfter {
                let wait = retryAfter.timeIntervalSince(retryPolicy.now())
                // Too far away to wait for in-line: let the caller schedule the retry.
                guard wait <= AppStoreServerAPIRetryPolicy.seconds(retryPolicy.maxDelay) else { throw failure }
                delay = .nanoseconds(Int64(max(0, wait) * 1e9))
            }
            logger.info(
                "App Store Server API call failed, retrying",
                metadata: [
                    "method": "\(method.rawValue)", "path": "\(path)", "attempt": "\(attempt)",
                    "http": "\(failure.httpStatus.map(String.init) ?? "-")",
                    "errorCode": "\(failure.errorCode.map { String($0.rawValue) } ?? "-")",
                ]
            )
            try await retryPolicy.sleep(delay)
        }
    }

    private func exchange(
        _ method: HTTPMethod,
        url: String,
        body: Data?,
        contentType: String,
        attempt: Int
    )
        async throws(AppStoreServerAPIError)
        -> RawResponse
    {
        var request = HTTPClientRequest(url: url)
        request.method = method
        let token: String
        do {
            // A fresh token per attempt, on the real clock (the policy's clock may be a test double): a
            // retried request must not carry an expired token.
            token = try tokenGenerator.makeToken()
        } catch {
            throw AppStoreServerAPIError(
                kind: .invalidRequest,
                errorMessage: "could not sign the API token",
                attempts: attempt,
                underlyingError: error
            )
        }
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Storekeeper-AppStoreWire")
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(bytes: body))
        }

        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await httpClient.execute(request, timeout: TimeAmount(requestTimeout), logger: logger)
        } catch {
            throw AppStoreServerAPIError(
                kind: Self.isRequestError(error) ? .invalidRequest : .transport,
                errorMessage: "\(error)",
                attempts: attempt,
                underlyingError: error
            )
        }
        let status = Int(response.status.code)
        do {
            bytes = try await response.body.collect(upTo: Self.maxResponseBytes)
        } catch {
            // The status line arrived but the body did not: treat like a dropped connection.
            throw AppStoreServerAPIError(
                kind: .transport,
                httpStatus: status,
                errorMessage: "response body failed: \(error)",
                attempts: attempt,
                underlyingError: error
            )
        }
        return RawResponse(status: status, headers: response.headers, body: Data(bytes.readableBytesView))
    }

    private static func isRequestError(_ error: any Error) -> Bool {
        guard let error = error as? HTTPClientError else { return false }
        return error == .invalidURL || error == .emptyHost || error == .emptyScheme
    }

    private static func httpError(_ raw: RawResponse, now: Date) -> AppStoreServerAPIError {
        // 401 (bad JWT) has no body; other errors carry {errorCode, errorMessage}.
        let decoded = try? JSONDecoder().decode(APIErrorBody.self, from: raw.body)
        var message = decoded?.errorMessage
        if decoded == nil, !raw.body.isEmpty {
            message = String(decoding: raw.body.prefix(512), as: UTF8.self)
        }
        return AppStoreServerAPIError(
            kind: .httpStatus,
            httpStatus: raw.status,
            errorCode: decoded?.errorCode,
            errorMessage: message,
            retryAfter: raw.headers.first(name: "Retry-After").flatMap { retryAfterDate($0, now: now) }
        )
    }

    /// Apple's `Retry-After` is a UNIX time in milliseconds; a small number is read as RFC 9110
    /// delay-seconds, which proxies in front of a simulator may send.
    static func retryAfterDate(_ value: String, now: Date) -> Date? {
        guard let number = Int64(value.trimmingCharacters(in: .whitespaces)), number >= 0 else { return nil }
        if number >= 100_000_000_000 { return ServerAPIEncoding.date(milliseconds: number) }
        return now.addingTimeInterval(TimeInterval(number))
    }
}

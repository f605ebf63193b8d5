import AsyncHTTPClient
import Foundation
import StorekeeperTestSupport
import Synchronization
import Testing

@testable import AppStoreWire

/// Error mapping, retries with back-off and paging, over a local socket.
@Suite("AppStoreServerAPIClient errors, retries and paging")
struct AppStoreServerAPIClientRetryTests {
    /// Answers the n-th request (0-based) with `script(n, request)`.
    private func run<T: Sendable>(
        maxAttempts: Int = 3,
        maxDelay: Duration = .seconds(30),
        now: Date = Date(timeIntervalSince1970: 1_700_000_000),
        requestTimeout: Duration = .seconds(10),
        script: @escaping @Sendable (Int, LocalHTTPServer.Request) -> LocalHTTPServer.Response,
        _ call: @escaping (AppStoreServerAPIClient) async throws -> T
    ) async throws -> (
        result: Result<T, AppStoreServerAPIError>, requests: [LocalHTTPServer.Request], sleeps: [Duration]
    ) {
        let counter = Mutex(0)
        let sleeps = SleepRecorder()
        let identity = TestSigningIdentity()
        return try await withLocalServer(handler: { request in
            let index = counter.withLock { value in
                defer { value += 1 }
                return value
            }
            return script(index, request)
        }) { server, httpClient in
            let client = AppStoreServerAPIClient(
                httpClient: httpClient,
                tokenGenerator: try identity.tokenGenerator(),
                baseURL: AppStoreServerAPIBaseURL(url: server.baseURL),
                retryPolicy: AppStoreServerAPIRetryPolicy(
                    maxAttempts: maxAttempts,
                    initialDelay: .milliseconds(100),
                    maxDelay: maxDelay,
                    jitter: false,
                    sleep: sleeps.sleep,
                    now: { now }
                ),
                requestTimeout: requestTimeout
            )
            let result: Result<T, AppStoreServerAPIError>
            do {
                result = .success(try await call(client))
            } catch let error as AppStoreServerAPIError {
                result = .failure(error)
            }
            return (result, server.requests, sleeps.recorded)
        }
    }

    private func error<T>(_ result: Result<T, AppStoreServerAPIError>) throws -> AppStoreServerAPIError {
        guard case .failure(let error) = result else {
            Issue.record("expected an error, got \(result)")
            throw CancellationError()
        }
        return error
    }

    private static let info = #"{"signedTransactionInfo": "ok"}"#

    /// Received, but never answered: NIO's response-header validator drops a head with an invalid field
    /// name, so the client sees only its own timeout, as when an answer is lost after Apple acted.
    private static let lostAnswer = LocalHTTPServer.Response(status: 200, headers: [("Bad Header", "x")])
    /// Short, so a lost answer fails fast.
    private static let lostAnswerTimeout: Duration = .milliseconds(500)

    @Test func rateLimitWaitsUntilRetryAfterThenSucceeds() async throws {
        // Retry-After is the UNIX time in milliseconds: 2.5 s after the injected "now".
        let (result, requests, sleeps) = try await run(script: { index, _ in
            index == 0
                ? .json(
                    #"{"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}"#,
                    status: 429,
                    headers: [("Retry-After", "1700000002500")]
                )
                : .json(Self.info)
        }) { try await $0.getTransactionInfo(transactionId: "1") }
        #expect(try result.get().signedTransactionInfo == "ok")
        #expect(requests.count == 2)
        #expect(sleeps == [.milliseconds(2500)])
    }

    @Test func rateLimitBeyondMaxDelayIsHandedToTheCaller() async throws {
        let (result, requests, sleeps) = try await run(
            maxDelay: .seconds(10),
            script: { _, _ in
                .json(
                    #"{"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}"#,
                    status: 429,
                    headers: [("Retry-After", "1700000060000")]
                )
            }
        ) { try await $0.getTransactionInfo(transactionId: "1") }
        let failure = try error(result)
        #expect(failure.httpStatus == 429)
        #expect(failure.errorCode == .rateLimitExceeded)
        #expect(failure.errorMessage == "Rate limit exceeded.")
        #expect(failure.retryAfter == Date(timeIntervalSince1970: 1_700_000_060))
        #expect(failure.isRetryable)
        #expect(failure.attempts == 1)
        #expect(requests.count == 1)
        #expect(sleeps.isEmpty)
    }

    @Test func rateLimitWithoutRetryAfterBacksOffUntilAttemptsRunOut() async throws {
        let (result, requests, sleeps) = try await run(script: { _, _ in
            .json(#"{"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}"#, status: 429)
        }) { try await $0.getTransactionInfo(transactionId: "1") }
        let failure = try error(result)
        #expect(failure.errorCode == .rateLimitExceeded)
        #expect(failure.retryAfter == nil)
        #expect(failure.attempts == 3)
        #expect(requests.count == 3)
        #expect(sleeps == [.milliseconds(100), .milliseconds(200)])
    }

    @Test func retryableInternalErrorIsRetriedThenSucceeds() async throws {
        let (result, requests, sleeps) = try await run(script: { index, _ in
            index == 0
                ? .json(#"{"errorCode": 5000001, "errorMessage": "An unknown retryable error occurred."}"#, status: 500)
                : .json(Self.info)
        }) { try await $0.getTransactionInfo(transactionId: "1") }
        #expect(try result.get().signedTransactionInfo == "ok")
        #expect(requests.count == 2)
        #expect(sleeps == [.milliseconds(100)])
        // Every attempt carries its own freshly signed token.
        #expect(requests[0].header("Authorization") != requests[1].header("Authorization"))
    }

    @Test(arguments: [4_040_002, 4_040_004, 4_040_006] as [Int32])
    func retryableNotFoundCodesAreRetried(code: Int32) async throws {
        let (result, requests, _) = try await run(script: { index, _ in
            index < 2 ? .json(#"{"errorCode": \#(code), "errorMessage": "later"}"#, status: 404) : .json(Self.info)
        }) { try await $0.getTransactionInfo(transactionId: "1") }
        #expect(try result.get().signedTransactionInfo == "ok")
        #expect(requests.count == 3)
    }

    @Test func finalNotFoundIsNotRetried() async throws {
        let (result, requests, sleeps) = try await run(script: { _, _ in
            .json(#"{"errorCode": 4040010, "errorMessage": "Transaction id not found."}"#, status: 404)
        }) { try await $0.getTransactionInfo(transactionId: "1") }
        let failure = try error(result)
        #expect(failure.kind == .httpStatus)
        #expect(failure.httpStatus == 404)
        #expect(failure.errorCode == .transactionIdNotFound)
        #expect(failure.errorMessage == "Transaction id not found.")
        #expect(!failure.isRetryable)
        #expect(failure.attempts == 1)
        #expect(requests.count == 1)
        #expect(sleeps.isEmpty)
    }

    @Test func generalInternalErrorIsFinal() async throws {
        let (result, requests, _) = try await run(script: { _, _ in
            .json(#"{"errorCode": 5000000, "errorMessage": "An unknown error occurred."}"#, status: 500)
        }) { try await $0.getTransactionInfo(transactionId: "1") }
        #expect(try error(result).errorCode == .generalInternal)
        #expect(requests.count == 1)
    }

    @Test func unauthorizedHasNoBodyAndNoCode() async throws {
        let (result, requests, _) = try await run(script: { _, _ in .empty(401) }) {
            try await $0.getTransactionInfo(transactionId: "1")
        }
        let failure = try error(result)
        #expect(failure.httpStatus == 401)
        #expect(failure.errorCode == nil)
        #expect(failure.errorMessage == nil)
        #expect(!failure.isRetryable)
        #expect(requests.count == 1)
    }

    @Test func gatewayErrorsWithoutACodeAreRetriedWithExponentialBackoff() async throws {
        let (result, requests, sleeps) = try await run(
            maxAttempts: 4,
            script: { _, _ in
                .json("<html>Bad Gateway</html>", status: 502)
            }
        ) { try await $0.getTransactionInfo(transactionId: "1") }
        let failure = try error(result)
        #expect(failure.httpStatus == 502)
        #expect(failure.errorCode == nil)
        #expect(failure.errorMessage == "<html>Bad Gateway</html>")
        #expect(failure.attempts == 4)
        #expect(requests.count == 4)
        #expect(sleeps == [.milliseconds(100), .milliseconds(200), .milliseconds(400)])
    }

    @Test func malformedSuccessBodyIsNotRetried() async throws {
        let (result, requests, _) = try await run(script: { _, _ in .json(#"{"signedTransactionInfo": 42}"#) }) {
            try await $0.getTransactionInfo(transactionId: "1")
        }
        let failure = try error(result)
        #expect(failure.kind == .malformedResponse)
        #expect(failure.underlyingError is DecodingError)
        #expect(requests.count == 1)
    }

    @Test func networkErrorsAreRetriedThenReported() async throws {
        let closed = try ReservedClosedPort()
        let deadBase = URL(string: "http://127.0.0.1:\(closed.port)")!

        let sleeps = SleepRecorder()
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
        let client = AppStoreServerAPIClient(
            httpClient: httpClient,
            tokenGenerator: try TestSigningIdentity().tokenGenerator(),
            baseURL: AppStoreServerAPIBaseURL(url: deadBase),
            retryPolicy: AppStoreServerAPIRetryPolicy(
                maxAttempts: 3,
                initialDelay: .milliseconds(100),
                jitter: false,
                sleep: sleeps.sleep
            ),
            // Short: AsyncHTTPClient keeps retrying a refused connect until the deadline.
            requestTimeout: .milliseconds(300)
        )
        let outcome: Result<TransactionInfoResponse, AppStoreServerAPIError>
        do {
            outcome = .success(try await client.getTransactionInfo(transactionId: "1"))
        } catch let error as AppStoreServerAPIError {
            outcome = .failure(error)
        }
        try await httpClient.shutdown()
        let failure = try error(outcome)
        #expect(failure.kind == .transport)
        #expect(failure.httpStatus == nil)
        #expect(failure.isRetryable)
        #expect(failure.attempts == 3)
        #expect(failure.underlyingError != nil)
        #expect(sleeps.recorded.count == 2)
        withExtendedLifetime(closed) {}
    }

    // MARK: Non-idempotent POSTs

    @Test func testNotificationIsNotResentAfterALostAnswer() async throws {
        let (result, requests, sleeps) = try await run(
            requestTimeout: Self.lostAnswerTimeout,
            script: { index, _ in index == 0 ? Self.lostAnswer : .json(#"{"testNotificationToken": "t"}"#) }
        ) { try await $0.requestTestNotification() }
        let failure = try error(result)
        #expect(failure.kind == .transport)
        #expect(failure.attempts == 1)
        // A second test notification would have been sent.
        #expect(requests.count == 1)
        #expect(sleeps.isEmpty)
    }

    @Test func finishTransactionIsNotResentAfterALostAnswer() async throws {
        let (result, requests, _) = try await run(
            requestTimeout: Self.lostAnswerTimeout,
            script: { index, _ in index == 0 ? Self.lostAnswer : .empty(200) }
        ) { try await $0.finishTransaction(transactionId: "5050") }
        #expect(try error(result).kind == .transport)
        #expect(requests.count == 1)
    }

    @Test(
        arguments: [
            .json(#"{"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}"#, status: 429),
            .json(#"{"errorCode": 5000001, "errorMessage": "An unknown retryable error occurred."}"#, status: 500),
            .json("<html>Service Unavailable</html>", status: 503),
        ] as [LocalHTTPServer.Response]
    )
    func testNotificationIsResentWhenAppleAnswersRetryably(answer: LocalHTTPServer.Response) async throws {
        let (result, requests, sleeps) = try await run(script: { index, _ in
            index == 0 ? answer : .json(#"{"testNotificationToken": "t"}"#)
        }) { try await $0.requestTestNotification() }
        #expect(try result.get().testNotificationToken == "t")
        #expect(requests.map(\.method) == ["POST", "POST"])
        #expect(sleeps == [.milliseconds(100)])
    }

    @Test func massExtendIsResentAfterALostAnswer() async throws {
        let identifier = "758883e8-151b-47b7-abd0-60c4d804c2f5"
        let (result, requests, _) = try await run(
            requestTimeout: Self.lostAnswerTimeout,
            script: { index, _ in index == 0 ? Self.lostAnswer : .json(#"{"requestIdentifier": "\#(identifier)"}"#) }
        ) {
            try await $0.extendRenewalDateForAllActiveSubscribers(
                request: MassExtendRenewalDateRequest(
                    requestIdentifier: identifier,
                    extendByDays: 3,
                    extendReasonCode: .serviceIssueOrOutage,
                    productId: "com.example.monthly"
                )
            )
        }
        #expect(try result.get().requestIdentifier == identifier)
        #expect(requests.count == 2)
        // The same requestIdentifier is what makes the resend safe.
        #expect(requests[0].body == requests[1].body)
        #expect(requests[1].bodyJSON()?["requestIdentifier"] as? String == identifier)
    }

    @Test func notificationHistoryIsResentAfterALostAnswer() async throws {
        let (result, requests, _) = try await run(
            requestTimeout: Self.lostAnswerTimeout,
            script: { index, _ in
                index == 0 ? Self.lostAnswer : .json(#"{"hasMore": false, "notificationHistory": []}"#)
            }
        ) {
            try await $0.getNotificationHistory(
                request: NotificationHistoryRequest(
                    startDate: Date(timeIntervalSince1970: 1_698_000_000),
                    endDate: Date(timeIntervalSince1970: 1_698_100_000)
                )
            )
        }
        #expect(try result.get().hasMore == false)
        #expect(requests.map(\.method) == ["POST", "POST"])
    }

    @Test func putIsResentAfterALostAnswer() async throws {
        let (result, requests, _) = try await run(
            requestTimeout: Self.lostAnswerTimeout,
            script: { index, _ in index == 0 ? Self.lostAnswer : .empty(200) }
        ) {
            try await $0.setAppAccountToken(
                originalTransactionId: "1",
                appAccountToken: UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138")!
            )
        }
        #expect(throws: Never.self) { try result.get() }
        #expect(requests.map(\.method) == ["PUT", "PUT"])
    }

    @Test func environmentsWithoutAServerAreRefused() async throws {
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
        let generator = try TestSigningIdentity().tokenGenerator()
        #expect(throws: AppStoreServerAPIError.self) {
            try AppStoreServerAPIClient(httpClient: httpClient, tokenGenerator: generator, environment: .xcode)
        }
        let sandbox = try? AppStoreServerAPIClient(
            httpClient: httpClient,
            tokenGenerator: generator,
            environment: .sandbox
        )
        #expect(sandbox?.baseURL == .sandbox)
        try await httpClient.shutdown()
    }

    // MARK: Paging

    @Test func transactionHistoryWalksEveryRevision() async throws {
        let (result, requests, _) = try await run(script: { _, request in
            switch request.queryValues("revision").first {
            case nil: .json(#"{"revision": "rev-1", "hasMore": true, "signedTransactions": ["t1", "t2"]}"#)
            case "rev-1": .json(#"{"revision": "rev-2", "hasMore": true, "signedTransactions": ["t3"]}"#)
            default: .json(#"{"revision": "rev-3", "hasMore": false, "signedTransactions": ["t4"]}"#)
            }
        }) {
            try await $0.getAllTransactionHistory(
                transactionId: "100",
                request: TransactionHistoryRequest(productIds: ["p"], sort: .ascending)
            )
        }
        let pages = try result.get()
        #expect(pages.flatMap { $0.signedTransactions ?? [] } == ["t1", "t2", "t3", "t4"])
        #expect(pages.last?.revision == "rev-3")
        #expect(requests.map(\.path) == Array(repeating: "/inApps/v2/history/100", count: 3))
        #expect(requests.map { $0.queryValues("revision") } == [[], ["rev-1"], ["rev-2"]])
        // The filters stay identical from page to page.
        #expect(requests.allSatisfy { $0.queryValues("productId") == ["p"] && $0.queryValues("sort") == ["ASCENDING"] })
    }

    @Test func transactionHistoryV1Walks() async throws {
        let (result, requests, _) = try await run(script: { index, _ in
            index == 0
                ? .json(#"{"revision": "a", "hasMore": true, "signedTransactions": ["t1"]}"#)
                : .json(#"{"revision": "b", "hasMore": false, "signedTransactions": ["t2"]}"#)
        }) { try await $0.getAllTransactionHistory(transactionId: "100", version: .v1) }
        #expect(try result.get().count == 2)
        #expect(requests.map(\.uri) == ["/inApps/v1/history/100", "/inApps/v1/history/100?revision=a"])
    }

    @Test func pagingThatMakesNoProgressStops() async throws {
        let (result, requests, _) = try await run(script: { _, _ in
            .json(#"{"revision": "same", "hasMore": true, "signedTransactions": []}"#)
        }) { try await $0.getAllTransactionHistory(transactionId: "100") }
        #expect(try error(result).kind == .malformedResponse)
        #expect(requests.count == 2)
    }

    @Test func refundHistoryWalksEveryRevision() async throws {
        let (result, requests, _) = try await run(script: { index, _ in
            index == 0
                ? .json(#"{"signedTransactions": ["r1"], "revision": "x", "hasMore": true}"#)
                : .json(#"{"signedTransactions": ["r2"], "revision": "y", "hasMore": false}"#)
        }) { try await $0.getAllRefundHistory(transactionId: "9") }
        #expect(try result.get().flatMap { $0.signedTransactions ?? [] } == ["r1", "r2"])
        #expect(requests.map(\.uri) == ["/inApps/v2/refund/lookup/9", "/inApps/v2/refund/lookup/9?revision=x"])
    }

    @Test func notificationHistoryWalksEveryPaginationToken() async throws {
        let request = NotificationHistoryRequest(
            startDate: Date(timeIntervalSince1970: 1_698_000_000),
            endDate: Date(timeIntervalSince1970: 1_698_100_000),
            transactionId: "42"
        )
        let (result, requests, _) = try await run(script: { _, request in
            switch request.queryValues("paginationToken").first {
            case nil:
                .json(#"{"paginationToken": "p1", "hasMore": true, "notificationHistory": [{"signedPayload": "n1"}]}"#)
            case "p1":
                .json(
                    #"{"paginationToken": "p2", "hasMore": true, "notificationHistory": [{"signedPayload": "n2"}, {"signedPayload": "n3"}]}"#
                )
            default: .json(#"{"hasMore": false, "notificationHistory": [{"signedPayload": "n4"}]}"#)
            }
        }) { try await $0.getAllNotificationHistory(request: request) }
        #expect(try result.get().map(\.signedPayload) == ["n1", "n2", "n3", "n4"])
        #expect(requests.map { $0.queryValues("paginationToken") } == [[], ["p1"], ["p2"]])
        #expect(requests.allSatisfy { $0.method == "POST" && $0.body == requests[0].body })
        #expect(requests[0].bodyJSON()?["transactionId"] as? String == "42")
    }
}

import AsyncHTTPClient
import Foundation
import StorekeeperTestSupport
import Testing

@testable import AppStoreWire

@Suite("ReceiptVerificationClient over a local socket")
struct ReceiptVerificationClientTests {
    /// The app the client is configured for, and the one in ``LegacySamples``.
    private static let bundleId = "com.example.storekeeper"

    /// A minimal status-0 answer with an app receipt of `bundleId`.
    private static func validAnswer(environment: String? = nil, bundleId: String = Self.bundleId) -> String {
        let environment = environment.map { #", "environment": "\#($0)""# } ?? ""
        return #"{"status": 0\#(environment), "receipt": {"bundle_id": "\#(bundleId)"}}"#
    }

    /// Routes `/production/verifyReceipt` and `/sandbox/verifyReceipt` to scripted answers.
    private func verify(
        receipt: String = "BASE64RECEIPT",
        configuration: (URL) -> ReceiptVerificationConfiguration = { base in
            ReceiptVerificationConfiguration(
                bundleId: Self.bundleId,
                productionURL: base.appendingPathComponent("production/verifyReceipt"),
                sandboxURL: base.appendingPathComponent("sandbox/verifyReceipt")
            )
        },
        production: @escaping @Sendable () -> LocalHTTPServer.Response,
        sandbox: @escaping @Sendable () -> LocalHTTPServer.Response = { .json(Self.validAnswer()) }
    ) async throws -> (ReceiptVerificationOutcome, [LocalHTTPServer.Request]) {
        try await withLocalServer(handler: { request in
            request.path.hasPrefix("/sandbox") ? sandbox() : production()
        }) { server, httpClient in
            let client = ReceiptVerificationClient(
                httpClient: httpClient,
                configuration: configuration(server.baseURL)
            )
            let outcome = await client.verify(receiptData: receipt)
            return (outcome, server.requests)
        }
    }

    @Test func validProductionReceipt() async throws {
        let (outcome, requests) = try await verify(
            production: {
                .json(
                    LegacySamples.verifyReceiptResponse.replacingOccurrences(of: "\"Sandbox\"", with: "\"Production\"")
                )
            })
        let response = try #require(outcome.response)
        #expect(response.environment == .production)
        #expect(response.latestReceiptInfo?.first?.productId == "com.example.monthly")
        #expect(requests.count == 1)
        #expect(requests[0].method == "POST")
        #expect(requests[0].path == "/production/verifyReceipt")
        #expect(requests[0].header("Content-Type") == "application/json")
        let body = try #require(requests[0].bodyJSON())
        #expect(body["receipt-data"] as? String == "BASE64RECEIPT")
        #expect(body["password"] == nil)
        #expect(body["exclude-old-transactions"] == nil)
    }

    @Test func sendsSharedSecretAndExcludeOldTransactions() async throws {
        let (outcome, requests) = try await verify(
            configuration: { base in
                ReceiptVerificationConfiguration(
                    bundleId: Self.bundleId,
                    productionURL: base.appendingPathComponent("production/verifyReceipt"),
                    sandboxURL: base.appendingPathComponent("sandbox/verifyReceipt"),
                    sharedSecret: "0123abcd",
                    excludeOldTransactions: true
                )
            },
            production: { .json(Self.validAnswer(environment: "Production")) }
        )
        #expect(outcome.response != nil)
        let body = try #require(requests.first?.bodyJSON())
        #expect(body["password"] as? String == "0123abcd")
        #expect(body["exclude-old-transactions"] as? Bool == true)
    }

    @Test func sandboxReceiptIsResentToSandbox() async throws {
        let (outcome, requests) = try await verify(
            production: { .json(#"{"status": 21007}"#) },
            sandbox: { .json(#"{"status": 0, "receipt": {"bundle_id": "com.example.storekeeper"}}"#) }
        )
        let response = try #require(outcome.response)
        // The sandbox answer had no environment; the client fills in where it came from.
        #expect(response.environment == .sandbox)
        #expect(response.receipt?.bundleId == "com.example.storekeeper")
        #expect(requests.map(\.path) == ["/production/verifyReceipt", "/sandbox/verifyReceipt"])
        // The same body goes to both.
        #expect(requests[0].body == requests[1].body)
    }

    @Test func productionReceiptAtSandboxIsResentToProduction() async throws {
        let (outcome, requests) = try await verify(
            configuration: { base in
                ReceiptVerificationConfiguration(
                    bundleId: Self.bundleId,
                    productionURL: base.appendingPathComponent("production/verifyReceipt"),
                    sandboxURL: base.appendingPathComponent("sandbox/verifyReceipt"),
                    firstEnvironment: .sandbox
                )
            },
            production: { .json(Self.validAnswer(environment: "Production")) },
            sandbox: { .json(#"{"status": 21008}"#) }
        )
        #expect(outcome.response?.environment == .production)
        #expect(requests.map(\.path) == ["/sandbox/verifyReceipt", "/production/verifyReceipt"])
    }

    @Test func doesNotPingPongBetweenEnvironments() async throws {
        let (outcome, requests) = try await verify(
            production: { .json(#"{"status": 21007}"#) },
            sandbox: { .json(#"{"status": 21008}"#) }
        )
        guard case .retryLater(let reason) = outcome else {
            Issue.record("expected retryLater, got \(outcome)")
            return
        }
        #expect(reason.contains("21008"))
        #expect(requests.count == 2)
    }

    @Test func redirectToTheSameEnvironmentIsNotFollowed() async throws {
        let (outcome, requests) = try await verify(production: { .json(#"{"status": 21008}"#) })
        guard case .retryLater = outcome else {
            Issue.record("expected retryLater, got \(outcome)")
            return
        }
        #expect(requests.count == 1)
    }

    @Test(arguments: [21000, 21003, 21004, 21010] as [Int32])
    func finalStatusesAreInvalid(status: Int32) async throws {
        let (outcome, requests) = try await verify(production: { .json(#"{"status": \#(status)}"#) })
        guard case .invalid(let reported, let reason) = outcome else {
            Issue.record("expected invalid, got \(outcome)")
            return
        }
        #expect(reported.rawValue == status)
        #expect(reason.contains(String(status)))
        #expect(requests.count == 1)
    }

    @Test(arguments: [21001, 21002, 21005, 21009] as [Int32])
    func temporaryStatusesAreRetryLater(status: Int32) async throws {
        let (outcome, _) = try await verify(production: { .json(#"{"status": \#(status)}"#) })
        guard case .retryLater(let reason) = outcome else {
            Issue.record("expected retryLater, got \(outcome)")
            return
        }
        #expect(reason.contains(String(status)))
    }

    @Test func expiredIOS6SubscriptionIsValidWithItsReceipt() async throws {
        let (outcome, _) = try await verify(
            production: { .json(#"{"status": 21006, "receipt": {"bundle_id": "com.example.storekeeper"}}"#) })
        #expect(outcome.response?.status == .subscriptionExpired)
        #expect(outcome.response?.receipt?.bundleId == "com.example.storekeeper")
    }

    @Test func internalErrorsFollowIsRetryable() async throws {
        let (retryable, _) = try await verify(production: { .json(#"{"status": 21100, "is-retryable": true}"#) })
        let (final, _) = try await verify(production: { .json(#"{"status": 21100, "is_retryable": false}"#) })
        guard case .retryLater = retryable, case .invalid(let status, _) = final else {
            Issue.record("got \(retryable) and \(final)")
            return
        }
        #expect(status.rawValue == 21100)
    }

    @Test(arguments: [500, 502, 503, 429, 404] as [Int])
    func httpErrorsAreRetryLater(httpStatus: Int) async throws {
        let (outcome, requests) = try await verify(production: { .json("oops", status: httpStatus) })
        guard case .retryLater(let reason) = outcome else {
            Issue.record("expected retryLater, got \(outcome)")
            return
        }
        #expect(reason.contains(String(httpStatus)))
        #expect(requests.count == 1)
    }

    @Test func unreadableAnswerIsRetryLater() async throws {
        let (outcome, _) = try await verify(production: { .json("<html>maintenance</html>") })
        guard case .retryLater(let reason) = outcome else {
            Issue.record("expected retryLater, got \(outcome)")
            return
        }
        #expect(reason.contains("unreadable"))
    }

    @Test func networkErrorIsRetryLater() async throws {
        // A port held by a socket that never listens: connections are refused, and no parallel test can take it.
        let closed = try ReservedClosedPort()
        let deadURL = URL(string: "http://127.0.0.1:\(closed.port)/verifyReceipt")!

        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
        let client = ReceiptVerificationClient(
            httpClient: httpClient,
            configuration: .init(
                bundleId: Self.bundleId,
                productionURL: deadURL,
                sandboxURL: deadURL,
                requestTimeout: .milliseconds(300)
            )
        )
        let outcome = await client.verify(receiptData: "abc")
        try await httpClient.shutdown()
        withExtendedLifetime(closed) {}
        guard case .retryLater(let reason) = outcome else {
            Issue.record("expected retryLater, got \(outcome)")
            return
        }
        #expect(reason.contains("unreachable"))
    }

    @Test func configurationDefaultsToApplesEndpoints() {
        let configuration = ReceiptVerificationConfiguration(bundleId: Self.bundleId, sharedSecret: "topsecret")
        #expect(configuration.bundleId == Self.bundleId)
        #expect(configuration.productionURL.absoluteString == "https://buy.itunes.apple.com/verifyReceipt")
        #expect(configuration.sandboxURL.absoluteString == "https://sandbox.itunes.apple.com/verifyReceipt")
    }

    // MARK: Bundle identifier

    private func expectWrongApp(
        _ outcome: ReceiptVerificationOutcome,
        found: String,
        status: VerifyReceiptStatus = .valid,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .invalid(let reported, let reason) = outcome else {
            Issue.record("expected invalid, got \(outcome)", sourceLocation: sourceLocation)
            return
        }
        #expect(reported == status, sourceLocation: sourceLocation)
        #expect(
            reason == "wrong app: receipt bundle id \(found) is not \(Self.bundleId)",
            sourceLocation: sourceLocation
        )
    }

    @Test func genuineReceiptOfAnotherAppIsInvalid() async throws {
        let (outcome, requests) = try await verify(
            production: {
                .json(
                    LegacySamples.verifyReceiptResponse.replacingOccurrences(
                        of: #""bundle_id": "com.example.storekeeper""#,
                        with: #""bundle_id": "com.other.app""#
                    )
                )
            })
        expectWrongApp(outcome, found: "com.other.app")
        #expect(requests.count == 1)
    }

    @Test func receiptOfTheConfiguredAppIsValid() async throws {
        let (outcome, _) = try await verify(production: { .json(Self.validAnswer()) })
        #expect(outcome.response?.receipt?.bundleId == Self.bundleId)
    }

    @Test func bundleIdsCompareExactly() async throws {
        let (outcome, _) = try await verify(
            production: { .json(Self.validAnswer(bundleId: "com.example.Storekeeper")) })
        expectWrongApp(outcome, found: "com.example.Storekeeper")
    }

    @Test func receiptWithoutABundleIdIsInvalid() async throws {
        let (bare, _) = try await verify(production: { .json(#"{"status": 0, "environment": "Production"}"#) })
        expectWrongApp(bare, found: "(none)")
        let (empty, _) = try await verify(production: { .json(Self.validAnswer(bundleId: "")) })
        expectWrongApp(empty, found: "(empty)")
    }

    @Test func anotherAppsSandboxReceiptIsInvalidAfterTheResend() async throws {
        let (outcome, requests) = try await verify(
            production: { .json(#"{"status": 21007}"#) },
            sandbox: { .json(Self.validAnswer(bundleId: "com.other.app")) }
        )
        expectWrongApp(outcome, found: "com.other.app")
        #expect(requests.map(\.path) == ["/production/verifyReceipt", "/sandbox/verifyReceipt"])
    }

    @Test(arguments: [0, 21006] as [Int32])
    func iOS6StyleReceiptIsCheckedByBid(status: Int32) async throws {
        let (ours, _) = try await verify(
            production: { .json(#"{"status": \#(status), "receipt": {"bid": "com.example.storekeeper"}}"#) })
        #expect(ours.response?.status.rawValue == status)
        #expect(ours.response?.receipt?.bid == Self.bundleId)

        let (theirs, _) = try await verify(
            production: { .json(#"{"status": \#(status), "receipt": {"bid": "com.other.app", "bvrs": "1"}}"#) })
        expectWrongApp(theirs, found: "com.other.app", status: VerifyReceiptStatus(rawValue: status))
    }

    @Test func everyBundleIdTheReceiptNamesMustMatch() async throws {
        let (outcome, _) = try await verify(
            production: {
                .json(#"{"status": 0, "receipt": {"bundle_id": "com.example.storekeeper", "bid": "com.other.app"}}"#)
            })
        expectWrongApp(outcome, found: "com.other.app")
    }
}

#if os(Linux)
// Plays an iPhone through the StoreKit stand-in against a real `storekeeper demo`: Linux only.
import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import StorekeeperAPI
import Testing

@testable import StorekeeperKit

/// The journal-to-server leg against a real `storekeeper demo`: a transaction is finished only after the server
/// answered for it for good, exactly once, whatever failed in between.
@Suite(.serialized) struct PurchaseSubmitterTests {
    static let coins = "com.example.storekeeper.coins.60"

    /// Counts StoreKit `finish()` calls per transaction.
    actor FinishLog {
        var finished: [String] = []
        func finish(_ id: String) { finished.append(id) }
    }

    static func journal() throws -> (PurchaseJournal, URL) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sk-kit-journal-\(UUID().uuidString).json")
        return (try PurchaseJournal(url: url), url)
    }

    /// A guest with an order bought on the simulator, its transaction journaled as the SDK does before submitting.
    static func journaledPurchase(on demo: DemoServer, journal: PurchaseJournal) async throws -> (guest: Credentials, transactionId: String) {
        let guest = try await demo.api().createGuest().created.body.json
        let credentials = Credentials.guest(guest.token)
        let order = try await demo.api(credentials).createOrder(body: .json(.init(productId: coins))).created.body.json
        let bought = try await demo.buy(coins, appAccountToken: order.appAccountToken)
        try await journal.record(
            .init(
                id: bought.transactionId,
                payload: .purchase(signedTransaction: bought.signedTransaction, orderId: order.orderId),
                createdAt: Date()
            )
        )
        return (credentials, bought.transactionId)
    }

    static func coins(_ demo: DemoServer, _ credentials: Credentials) async throws -> Int64 {
        try await demo.api(credentials).getMe().ok.body.json.wallet.additionalProperties["coins"] ?? 0
    }

    // MARK: Tests

    @Test func aDeliveredPurchaseIsFinishedOnceThenLeavesTheJournal() async throws {
        try await DemoServer.run { demo in
            let (journal, url) = try Self.journal()
            defer { try? FileManager.default.removeItem(at: url) }
            let (guest, transactionId) = try await Self.journaledPurchase(on: demo, journal: journal)
            let log = FinishLog()
            let submitter = PurchaseSubmitter(journal: journal, api: demo.api(guest)) { await log.finish($0) }

            let settled = try await submitter.submitDue()
            // Delivered by this submit, or just before by Apple's notification (attributed by the order's token).
            #expect(settled[transactionId]?.isDelivered == true, "\(String(describing: settled[transactionId]))")
            #expect(await log.finished == [transactionId])
            #expect(try await PurchaseJournal(url: url).all().isEmpty)
            #expect(try await Self.coins(demo, guest) == 60)
            // Nothing left: a second pass sends nothing and finishes nothing.
            #expect(try await submitter.submitDue().isEmpty)
            #expect(await log.finished == [transactionId])
        }
    }

    @Test func whileTheServerIsUnreachableTheTransactionIsKeptUnfinished() async throws {
        try await DemoServer.run { demo in
            let (journal, url) = try Self.journal()
            defer { try? FileManager.default.removeItem(at: url) }
            let (guest, transactionId) = try await Self.journaledPurchase(on: demo, journal: journal)
            let log = FinishLog()
            let nowhere = StorekeeperConnection.client(serverURL: URL(string: "http://127.0.0.1:\(try DemoServer.freePort())")!) { guest }
            let offline = PurchaseSubmitter(journal: journal, api: nowhere, retry: RetryPolicy(base: .seconds(2), cap: .seconds(60))) {
                await log.finish($0)
            }
            let now = Date()
            guard case .kept = try await offline.submitDue(now: now)[transactionId] else {
                Issue.record("an unreachable server settled the purchase")
                return
            }
            let kept = try #require(try await PurchaseJournal(url: url).all().first)
            #expect(kept.attempts == 1 && kept.lastError?.hasPrefix("transport") == true)
            #expect(kept.notBefore >= now && kept.notBefore <= now + 2)
            #expect(await log.finished.isEmpty, "never finished before the server answered")

            // The server is back (and the app relaunched): the same journal delivers it.
            let online = PurchaseSubmitter(journal: try PurchaseJournal(url: url), api: demo.api(guest)) { await log.finish($0) }
            #expect(try await online.submitDue(now: now + 3)[transactionId]?.isDelivered == true)
            #expect(await log.finished == [transactionId])
            #expect(try await Self.coins(demo, guest) == 60)
        }
    }

    /// Answers every purchase submission as the server does during a database outage (503, outcome `retry`),
    /// without passing it on.
    struct Outage: ClientMiddleware {
        func intercept(
            _ request: HTTPRequest,
            body: HTTPBody?,
            baseURL: URL,
            operationID: String,
            next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
        ) async throws -> (HTTPResponse, HTTPBody?) {
            guard operationID == "submitPurchase" else { return try await next(request, body, baseURL) }
            let answer = #"{"code":"database_unavailable","message":"the database cannot be reached","outcome":"retry"}"#
            return (HTTPResponse(status: .serviceUnavailable, headerFields: [.contentType: "application/json"]), HTTPBody(answer))
        }
    }

    @Test func aRetryAnswerKeepsTheTransactionUntilTheServerDelivers() async throws {
        try await DemoServer.run { demo in
            let (journal, url) = try Self.journal()
            defer { try? FileManager.default.removeItem(at: url) }
            let (guest, transactionId) = try await Self.journaledPurchase(on: demo, journal: journal)
            let log = FinishLog()
            let failing = Client(
                serverURL: demo.serverURL,
                transport: URLSessionTransport(),
                middlewares: [CredentialsMiddleware(credentials: { guest }), Outage()]
            )
            let now = Date()
            let settled = try await PurchaseSubmitter(journal: journal, api: failing) { await log.finish($0) }.submitDue(now: now)
            #expect(settled[transactionId] == .kept(reason: "server unavailable"))
            #expect(await log.finished.isEmpty)
            #expect(try await PurchaseJournal(url: url).all().map(\.id) == [transactionId])

            let recovered = PurchaseSubmitter(journal: try PurchaseJournal(url: url), api: demo.api(guest)) { await log.finish($0) }
            #expect(try await recovered.submitDue(now: now + 3600)[transactionId]?.isDelivered == true)
            #expect(await log.finished == [transactionId])
            #expect(try await Self.coins(demo, guest) == 60)
        }
    }

    @Test func aForgedTransactionIsRejectedFinishedAndRemoved() async throws {
        try await DemoServer.run { demo in
            let (journal, url) = try Self.journal()
            defer { try? FileManager.default.removeItem(at: url) }
            let guest = Credentials.guest(try await demo.api().createGuest().created.body.json.token)
            try await journal.record(.init(id: "forged", payload: .purchase(signedTransaction: "e30.e30.AAAA", orderId: nil), createdAt: Date()))
            let log = FinishLog()
            let settled = try await PurchaseSubmitter(journal: journal, api: demo.api(guest)) { await log.finish($0) }.submitDue()
            guard case .rejected = settled["forged"] else {
                Issue.record("a forged transaction was \(String(describing: settled["forged"]))")
                return
            }
            #expect(await log.finished == ["forged"])
            #expect(await journal.all().isEmpty)
        }
    }

    /// The app died after the server delivered and before the journal heard: the journal submits again, the server
    /// recognises the transaction, and the user is credited once.
    @Test func aResubmissionAfterACrashCreditsOnce() async throws {
        try await DemoServer.run { demo in
            let (journal, url) = try Self.journal()
            defer { try? FileManager.default.removeItem(at: url) }
            let (guest, transactionId) = try await Self.journaledPurchase(on: demo, journal: journal)
            guard case .purchase(let jws, let orderId) = try #require(await journal.all().first).payload else { return }
            _ = try await demo.api(guest).submitPurchase(body: .json(.init(signedTransaction: jws, orderId: orderId))).ok.body.json

            let log = FinishLog()
            let relaunched = PurchaseSubmitter(journal: try PurchaseJournal(url: url), api: demo.api(guest)) { await log.finish($0) }
            #expect(try await relaunched.submitDue()[transactionId] == .delivered(alreadyDelivered: true))
            #expect(await log.finished == [transactionId])
            #expect(try await Self.coins(demo, guest) == 60)
        }
    }

    /// A spend journaled with its idempotency key and sent twice (the first answer was lost) is charged once.
    @Test func aSpendSentTwiceIsChargedOnce() async throws {
        try await DemoServer.run { demo in
            let (journal, url) = try Self.journal()
            defer { try? FileManager.default.removeItem(at: url) }
            let (guest, _) = try await Self.journaledPurchase(on: demo, journal: journal)
            let submitter = PurchaseSubmitter(journal: journal, api: demo.api(guest)) { _ in }
            try await submitter.submitDue()
            let key = UUID().uuidString.lowercased()
            let spend = PurchaseJournal.Entry(id: key, payload: .spend(amount: 25, idempotencyKey: key, reason: "chapter 3"), createdAt: Date())
            try await journal.record(spend)
            // The first send reached the server; its answer was lost with the app.
            _ = try await demo.api(guest).spendCoins(body: .json(.init(amount: 25, idempotencyKey: key, reason: "chapter 3"))).ok.body.json
            #expect(try await submitter.submitDue()[key] == .delivered(alreadyDelivered: false))
            #expect(try await Self.coins(demo, guest) == 35)
            #expect(await journal.all().isEmpty)
        }
    }
}
#endif

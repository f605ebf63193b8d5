import AppStoreSimulator
import AppStoreWire
import Foundation
import Logging
import SQLKit
import StorekeeperCore
import StorekeeperStorage
import Testing

@testable import StorekeeperLedger
@testable import StorekeeperServer

/// The ledger applies a batch of store messages together (plans that are only deliveries and a state merge share
/// set-based statements) or, when that fails, one by one in savepoints. Both paths must leave the same records: a
/// corpus of the simulator's messages, applied each way to two copies of one database with the same clock, must
/// leave every table equal row for row.
@Suite struct BatchedIsolatedEquivalenceTests {
    static let monthly = "com.example.storekeeper.membership.monthly.standard"
    static let priced = "com.example.storekeeper.membership.monthly"

    @Test func aCorpusOfStoreMessagesLeavesTheSameRecordsTogetherAndOneByOne() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let store = server.store
            // Customers who bought through the app (delivered by the client's submission).
            var subscriptions: [String: String] = [:]
            var accounts: [String: String] = [:]
            for user in ["renews", "cancels", "fails", "priced", "extended", "upgrades"] {
                let account = try await store.createAccount().id
                accounts[user] = account
                // The price rises only on the product "priced" holds.
                let product = ["upgrades": "com.example.storekeeper.vipA", "priced": Self.priced][user] ?? Self.monthly
                let (orderId, purchase) = try await server.orderAndBuy(product, user: user, account: account)
                #expect(try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders(user), orderId: orderId).status == 200)
                subscriptions[user] = purchase.transaction.originalTransactionId
            }
            var oneTime: [String: String] = [:]
            for (user, product) in [("refunded", "com.example.storekeeper.coins.60"), ("declined", "com.example.storekeeper.chapter.2")] {
                let account = try await store.createAccount().id
                let (orderId, purchase) = try await server.orderAndBuy(product, user: user, account: account)
                #expect(try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders(user), orderId: orderId).status == 200)
                oneTime[user] = try #require(purchase.transaction.transactionId)
            }
            // A purchase the app never submitted: only the store's message delivers it.
            _ = try await server.orderAndBuy("com.example.storekeeper.coins.300", user: "lost", account: try await store.createAccount().id)
            // What happens next, in the store.
            try await store.setAutoRenew(false, originalTransactionId: try #require(subscriptions["cancels"]))
            try await store.setBillingFails(true, account: try #require(accounts["fails"]))
            try await store.raisePrice(productId: Self.priced, to: 11_990, requiresConsent: true)
            try await store.requestRefund(transactionId: try #require(oneTime["refunded"]))
            try await store.requestRefund(transactionId: try #require(oneTime["declined"]))
            // Apple decides hours after the question.
            try await store.advance(by: 3_600)
            try await store.decideRefund(transactionId: try #require(oneTime["refunded"]), approve: true)
            try await store.decideRefund(transactionId: try #require(oneTime["declined"]), approve: false)
            _ = try await store.purchase(
                productId: "com.example.storekeeper.vipB",
                account: try #require(accounts["upgrades"]),
                appAccountToken: nil
            )
            try await store.advance(by: 32 * 86_400)
            _ = try await store.extendRenewalDate(originalTransactionId: try #require(subscriptions["extended"]), days: 10)
            try await store.consentToPriceIncrease(originalTransactionId: try #require(subscriptions["priced"]))
            try await store.setBillingFails(false, account: try #require(accounts["fails"]))
            try await store.advance(by: 3 * 86_400)
            try await store.reverseRefund(transactionId: try #require(oneTime["refunded"]))
            try await store.advance(by: 31 * 86_400)

            // The corpus: every notification the store sent, and each subscription's status as the Server API tells it.
            var corpus = await store.sentNotifications().map { Self.message($0, bundleId: "com.example.storekeeper") }
            for original in subscriptions.values.sorted() {
                for group in try await store.subscriptionStatuses(anyTransactionId: original).data ?? [] {
                    for item in group.lastTransactions ?? [] {
                        guard let signed = item.signedTransactionInfo else { continue }
                        let transaction = try SignedDataVerifier.decodeUnverifiedPayload(signed, as: JWSTransactionDecodedPayload.self)
                        let renewal = try item.signedRenewalInfo.map {
                            try SignedDataVerifier.decodeUnverifiedPayload($0, as: JWSRenewalInfoDecodedPayload.self)
                        }
                        corpus.append(
                            StoreMessage.appleStatus(
                                original: original,
                                bundleId: "com.example.storekeeper",
                                environment: .sandbox,
                                signedDate: await store.currentDate,
                                transaction: transaction,
                                signedTransaction: signed,
                                renewal: renewal,
                                status: item.status
                            )
                        )
                    }
                }
            }
            let plans = corpus.map(LifecyclePlanner.plan)
            let kinds = Set(corpus.map { "\($0.kind)".prefix { $0 != "(" } })
            // The corpus covers both paths and the kinds that move money.
            #expect(plans.contains { $0.isBatchable } && plans.contains { !$0.isBatchable })
            for kind in [
                "purchased", "renewed", "expired", "billingFailed", "priceChange", "refunded", "refundDeclined",
                "refundReversed", "consumptionQuestion", "renewalExtended", "planChanged", "status",
            ] {
                #expect(kinds.contains(Substring(kind)), "the corpus has no \(kind) message: \(kinds.sorted())")
            }

            // Two copies of the server's database, the corpus applied to each with one fixed clock.
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sk-equivalence-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let paths = ["together", "isolated"].map { directory.appendingPathComponent("\($0).sqlite").path }
            try await server.withSideConnection { provider in
                try await provider.withSession { db in
                    for path in paths { try await db.raw("VACUUM INTO \(bind: path)").run() }
                }
            }
            let catalog = try Catalog.load(from: ServerHarness.catalogURL.appendingPathComponent("storekeeper-catalog.json"))
            let clock = await store.currentDate
            var tables: [[String: [String]]] = []
            for (path, together) in zip(paths, [true, false]) {
                let provider = try await SQLiteDatabaseProvider(location: .file(path))
                do {
                    let ledger = Ledger(
                        provider: provider,
                        rules: LedgerRules(catalog: { catalog }, transferPolicy: .refuse, coinClawback: .debt),
                        clock: { clock },
                        logger: Logger(label: "test.equivalence")
                    )
                    let before = try await Self.rows(provider)
                    let (failed, appliedTogether) = try await ledger.apply(corpus, markProcessed: false, together: together)
                    #expect(failed.isEmpty, "\(failed)")
                    #expect(appliedTogether == together, "the \(together ? "batched" : "isolated") path ran")
                    let after = try await Self.rows(provider)
                    // The corpus changed things: grants, audit entries, subscriptions, wallet entries.
                    for table in ["entitlement_grants", "audit_entries", "subscriptions", "wallet_entries", "store_transactions"] {
                        #expect(after[table] != before[table], "\(table) did not change")
                    }
                    tables.append(after)
                } catch {
                    try? await provider.close()
                    throw error
                }
                try await provider.close()
            }
            #expect(tables[0].keys.sorted() == tables[1].keys.sorted())
            for table in tables[0].keys.sorted() {
                let (batched, isolated) = (tables[0][table] ?? [], tables[1][table] ?? [])
                #expect(batched == isolated, "\(table): batched \(Set(batched).subtracting(isolated)) isolated \(Set(isolated).subtracting(batched))")
            }
        }
    }

    /// A notification as the inbox would apply it.
    static func message(_ notification: SimulatedNotification, bundleId: String) -> StoreMessage {
        let payload = notification.payload
        let transaction = try? payload.data?.signedTransactionInfo.map {
            try SignedDataVerifier.decodeUnverifiedPayload($0, as: JWSTransactionDecodedPayload.self)
        }
        let renewal = try? payload.data?.signedRenewalInfo.map {
            try SignedDataVerifier.decodeUnverifiedPayload($0, as: JWSRenewalInfoDecodedPayload.self)
        }
        return StoreMessage.appleNotification(
            id: notification.notificationUUID,
            payload: payload,
            bundleId: bundleId,
            environment: StoreEnvironment(storeName: payload.data?.environment?.rawValue ?? "Sandbox"),
            receivedAt: payload.signedDate ?? Date(),
            transaction: transaction ?? nil,
            renewal: renewal ?? nil,
            appTransactionId: nil
        )
    }

    /// Every table's rows, each row as its columns quoted and joined, sorted.
    static func rows(_ provider: any DatabaseProvider) async throws -> [String: [String]] {
        try await provider.withSession { db in
            var tables: [String: [String]] = [:]
            let names = try await db.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all()
                .map { try $0.decode(column: "name", as: String.self) }
            for name in names {
                let columns = try await db.raw("SELECT name FROM pragma_table_info(\(bind: name))").all()
                    .map { try $0.decode(column: "name", as: String.self) }
                // The analytics queue's ids follow the order rows were written in: which subscriptions it holds is
                // what must agree.
                let distinct = name == "analytics_dirty"
                let row = (distinct ? ["original_transaction_id"] : columns).map { "quote(\"\($0)\")" }.joined(separator: " || '|' || ")
                tables[name] = try await db.raw("SELECT \(unsafeRaw: distinct ? "DISTINCT " : "")\(unsafeRaw: row) AS r FROM \"\(unsafeRaw: name)\"")
                    .all()
                    .map { try $0.decode(column: "r", as: String.self) }.sorted()
            }
            return tables
        }
    }
}

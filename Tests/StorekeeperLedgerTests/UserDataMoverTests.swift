import Foundation
import SQLKit
import StorageTestSupport
import StorekeeperCore
import StorekeeperStorage
import Testing

@testable import StorekeeperLedger

/// "Move this user's data" is one method that covers every user-keyed table: checked against the schema itself, so
/// a table added later without being taught to move fails here.
@Suite struct UserDataMoverTests {
    typealias F = LedgerFixtures

    /// Tables whose `user_id` is history or bookkeeping that stays true of who it was (or moves by its own rule).
    static let history: Set<String> = ["audit_entries", "wallet_entries", "events", "user_event_sequences", "wallets", "pending_transactions"]

    static func userKeyedTables(_ provider: any DatabaseProvider) async throws -> [String] {
        try await provider.withSession { db in
            switch provider.kind {
            case .sqlite:
                var tables: [String] = []
                for row in try await db.raw("SELECT name FROM sqlite_master WHERE type = 'table'").all() {
                    let name = try row.decode(column: "name", as: String.self)
                    let columns = try await db.raw("SELECT name FROM pragma_table_info(\(bind: name))").all()
                        .map { try $0.decode(column: "name", as: String.self) }
                    if columns.contains("user_id") { tables.append(name) }
                }
                return tables.sorted()
            case .postgres:
                return try await db.raw(
                    "SELECT table_name FROM information_schema.columns WHERE column_name = 'user_id' AND table_schema = 'public'"
                ).all().map { try $0.decode(column: "table_name", as: String.self) }.sorted()
            }
        }
    }

    @Test func aMergeLeavesNothingOfTheGuestInAnyUserKeyedTable() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await F.ledger(on: provider)
            let guest = try await ledger.issueGuest().user
            let account = UserID(rawValue: "acct")
            // The guest owns something in every kind of row: transactions, bindings, grants, coins, an order, a
            // subscription, a refund, a refund question, an offer nonce.
            _ = try await F.deliver(ledger, F.transaction("g-coins", product: F.coins), product: F.coins, to: guest.rawValue)
            _ = try await F.deliver(ledger, F.transaction("g-unlock", product: F.unlock), product: F.unlock, to: guest.rawValue)
            _ = try await F.deliver(ledger, F.transaction("g-month", product: F.monthly), product: F.monthly, to: guest.rawValue)
            try await ledger.createOrder(
                Order(
                    id: "ord_g",
                    user: guest,
                    bundleId: "com.example",
                    productId: "unlock",
                    appAccountToken: UUID(),
                    status: .created,
                    createdAt: Date(),
                    expiresAt: Date() + 3600,
                    transactionId: nil
                )
            )
            _ = try await ledger.recordOfferNonce(UUID(), user: guest, productId: "monthly", offerId: "o", campaignId: "c")
            _ = try await ledger.write { uow in
                try await StoreMessages.applySnapshots(
                    [
                        (
                            SubscriptionSnapshot(
                                originalTransactionId: "g-month",
                                bundleId: "com.example",
                                productId: "monthly",
                                environment: .sandbox,
                                state: .active,
                                event: "SUBSCRIBED",
                                signedDate: F.t0
                            ), .notification("n1")
                        )
                    ],
                    in: uow
                )
                _ = try await Revocations.revoke(
                    transactionId: "g-unlock",
                    at: F.t0,
                    kind: .refund,
                    revocationType: nil,
                    revocationPercentage: nil,
                    policy: .debt,
                    decidedAt: F.t0,
                    cause: .notification("n2"),
                    in: uow
                )
                _ = try await ConsumptionRequestsTable.insert(
                    id: "q1",
                    bundleId: "com.example",
                    environment: "Sandbox",
                    transactionId: "g-coins",
                    originalTransactionId: "g-coins",
                    user: guest,
                    reason: nil,
                    requestedAt: F.t0,
                    now: uow.now,
                    on: uow.db
                )
                try await uow.finish()
            }
            let tables = try await Self.userKeyedTables(provider)
            let movable = tables.filter { !Self.history.contains($0) }
            // Every movable table holds a row of the guest before the merge (the fixture covers them all).
            for table in movable {
                #expect(try await F.count(provider, "\(table) WHERE user_id = '\(guest.rawValue)'") > 0, "\(table) has a guest row")
            }
            let summary = try await ledger.mergeGuest(guest, into: account)
            #expect(summary.coins == 10)
            for table in movable {
                #expect(try await F.count(provider, "\(table) WHERE user_id = '\(guest.rawValue)'") == 0, "\(table) moved (\(provider.kind))")
            }
            #expect(try await F.balance(provider, "acct") == 10)
            #expect(try await F.balance(provider, guest.rawValue) == 0)
            let merged = try await ledger.events(after: 0, user: account, limit: 100).filter { $0.event.type == .userMerged }
            #expect(merged.count == 1)
            #expect(try await ledger.mergeGuest(guest, into: account).transactions == 0, "a second merge moves nothing")
        }
    }
}

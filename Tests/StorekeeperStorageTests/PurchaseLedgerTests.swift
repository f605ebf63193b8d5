import Foundation
import SQLKit
import StorekeeperCore
import StorekeeperStorage
import Testing

/// The ledger under concurrent, mixed batches: duplicates, another user's replay, stacked passes, many users.
@Suite struct PurchaseLedgerTests {
    static let coins = CatalogProduct(id: "coins", kind: .consumable, coins: 10)
    static let pass = CatalogProduct(id: "pass", kind: .nonRenewing, entitlement: "pass", duration: CatalogDuration(value: 1, unit: .month))
    static let unlock = CatalogProduct(id: "unlock", kind: .nonConsumable, entitlement: "unlock")

    static func transaction(_ id: String, product: CatalogProduct, original: String? = nil) -> VerifiedTransaction {
        VerifiedTransaction(
            transactionId: id, originalTransactionId: original ?? id, bundleId: "com.example", productId: product.id,
            environment: "Sandbox", purchaseDate: Date(timeIntervalSince1970: 1_800_000_000), source: .signedTransaction)
    }

    static func count(_ provider: any DatabaseProvider, _ sql: String) async throws -> Int {
        try await provider.withSession { db in
            Int(try await db.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: sql)").first()!.decode(column: "n", as: Int64.self))
        }
    }

    // MARK: Tests

    @Test func concurrentMixedDeliveriesEachHappenOnce() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
            let ledger = PurchaseLedger(provider: provider, maximumBatch: 16)
            let alice = UserID(rawValue: "alice")
            let bob = UserID(rawValue: "bob")
            // 40 coin purchases across 8 users, each submitted 3 times; one unlock of alice's replayed by bob;
            // three passes of carol bought at once.
            var jobs: [(VerifiedTransaction, CatalogProduct, UserID)] = []
            for index in 0..<40 {
                let user = UserID(rawValue: "user-\(index % 8)")
                for _ in 0..<3 { jobs.append((Self.transaction("c\(index)", product: Self.coins), Self.coins, user)) }
            }
            for _ in 0..<5 { jobs.append((Self.transaction("u1", product: Self.unlock), Self.unlock, alice)) }
            for index in 0..<3 { jobs.append((Self.transaction("p\(index)", product: Self.pass), Self.pass, UserID(rawValue: "carol"))) }
            let outcomes = try await withThrowingTaskGroup(of: DeliveryResult.self) { group in
                for (transaction, product, user) in jobs.shuffled() {
                    group.addTask {
                        try await ledger.deliver(transaction, product: product, submitter: user, policy: .refuse)
                    }
                }
                // Bob's replay races alice's deliveries; whoever binds first owns it, the other is refused.
                group.addTask {
                    try await ledger.deliver(Self.transaction("u1", product: Self.unlock), product: Self.unlock, submitter: bob, policy: .refuse)
                }
                return try await group.reduce(into: [DeliveryResult]()) { $0.append($1) }
            }
            let fresh = outcomes.filter { if case .delivered(let d) = $0 { return d.newlyDelivered } else { return false } }
            #expect(fresh.count == 40 + 1 + 3, "\(provider.kind)")
            #expect(outcomes.filter { if case .ownedByAnotherUser = $0 { return true } else { return false } }.count == 1)
            #expect(try await Self.count(provider, "apple_transactions") == 44)
            #expect(try await Self.count(provider, "wallet_entries") == 40)
            for user in 0..<8 {
                let balance = try await provider.withSession { db in
                    try await db.raw("SELECT balance FROM wallets WHERE user_id = \(bind: "user-\(user)")").first()!
                        .decode(column: "balance", as: Int64.self)
                }
                #expect(balance == 50, "5 purchases of 10 coins each")
            }
            // Each ledger entry's balance_after is a running balance: per user they are 10, 20, ..., 50.
            let afters = try await provider.withSession { db in
                try await db.raw("SELECT balance_after FROM wallet_entries WHERE user_id = 'user-0' ORDER BY balance_after").all()
                    .map { try $0.decode(column: "balance_after", as: Int64.self) }
            }
            #expect(afters == [10, 20, 30, 40, 50])
            let passes = try await AccountStore(provider: provider).snapshot(of: UserID(rawValue: "carol")).grants.sorted { $0.start < $1.start }
            #expect(passes.count == 3)
            for (earlier, later) in zip(passes, passes.dropFirst()) { #expect(earlier.end == later.start, "passes stack") }
            let audit = try await Self.count(provider, "audit_entries WHERE action IN ('wallet.credited', 'entitlement.granted')")
            #expect(audit == 44)
        }
    }

    @Test func unattributedPurchasesAreParkedOnce() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
            let ledger = PurchaseLedger(provider: provider)
            for _ in 0..<3 {
                let result = try await ledger.deliver(Self.transaction("orphan", product: Self.unlock), product: Self.unlock, submitter: nil, policy: .refuse)
                #expect(result == .parked(transactionId: "orphan"))
            }
            #expect(try await ledger.pending().map(\.transactionId) == ["orphan"])
            _ = try await ledger.deliver(
                Self.transaction("orphan", product: Self.unlock), product: Self.unlock, submitter: UserID(rawValue: "dan"), policy: .refuse)
            #expect(try await ledger.pending().isEmpty, "delivered later, it leaves the recovery list")
        }
    }
}

import Foundation
import SQLKit
import StorageTestSupport
import StorekeeperCore
import StorekeeperStorage
import Testing

@testable import StorekeeperLedger

/// The delivery planner under concurrent, mixed batches: duplicates, another user's replay, stacked passes, many
/// users, transfers and parks — each a variant of one plan, exactly once.
@Suite struct DeliveryPlannerTests {
    typealias F = LedgerFixtures

    @Test func concurrentMixedDeliveriesEachHappenOnce() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await F.ledger(on: provider, maximumBatch: 16)
            // 40 coin purchases across 8 users, each submitted 3 times; one unlock of alice's replayed by bob;
            // three passes of carol bought at once.
            var jobs: [(VerifiedTransaction, CatalogProduct, String)] = []
            for index in 0..<40 {
                for _ in 0..<3 { jobs.append((F.transaction("c\(index)", product: F.coins, price: 990), F.coins, "user-\(index % 8)")) }
            }
            for _ in 0..<5 { jobs.append((F.transaction("u1", product: F.unlock), F.unlock, "alice")) }
            for index in 0..<3 { jobs.append((F.transaction("p\(index)", product: F.pass), F.pass, "carol")) }
            let outcomes = try await withThrowingTaskGroup(of: DeliveryResult.self) { group in
                for (transaction, product, user) in jobs.shuffled() {
                    group.addTask { try await F.deliver(ledger, transaction, product: product, to: user) }
                }
                // Bob's replay races alice's deliveries; whoever binds first owns it, the other is refused.
                group.addTask { try await F.deliver(ledger, F.transaction("u1", product: F.unlock), product: F.unlock, to: "bob") }
                return try await group.reduce(into: [DeliveryResult]()) { $0.append($1) }
            }
            let fresh = outcomes.filter { if case .delivered(let d) = $0 { return d.newlyDelivered } else { return false } }
            #expect(fresh.count == 40 + 1 + 3, "\(provider.kind)")
            #expect(outcomes.filter { if case .ownedByAnotherUser = $0 { return true } else { return false } }.count == 1)
            #expect(try await F.count(provider, "store_transactions") == 44)
            #expect(try await F.count(provider, "wallet_entries") == 40)
            for user in 0..<8 { #expect(try await F.balance(provider, "user-\(user)") == 50, "5 purchases of 10 coins each") }
            // Each entry's balance_after is a running balance: per user they are 10, 20, ..., 50.
            let afters = try await provider.withSession { db in
                try await db.raw("SELECT balance_after FROM wallet_entries WHERE user_id = 'user-0' ORDER BY balance_after").all()
                    .map { try $0.decode(column: "balance_after", as: Int64.self) }
            }
            #expect(afters == [10, 20, 30, 40, 50])
            let passes = try await AccountStore(provider: provider).snapshot(of: UserID(rawValue: "carol")).grants.sorted { $0.start < $1.start }
            #expect(passes.count == 3)
            for (earlier, later) in zip(passes, passes.dropFirst()) { #expect(earlier.end == later.start, "passes stack") }
            #expect(try await F.count(provider, "audit_entries WHERE action IN ('wallet.credited', 'entitlement.granted')") == 44)
            // The money columns are stored with every delivered transaction.
            #expect(try await F.count(provider, "store_transactions WHERE price = 990 AND currency = 'USD' AND storefront = 'USA'") == 40)
        }
    }

    @Test func unattributedPurchasesAreParkedOnceAndLeaveTheListWhenDelivered() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await F.ledger(on: provider)
            let pending = PendingTransactionStore(provider: provider)
            for _ in 0..<3 {
                let result = try await F.deliver(ledger, F.transaction("orphan", product: F.unlock, price: 4990), product: F.unlock, to: nil)
                #expect(result == .parked(transactionId: "orphan"))
            }
            let listed = try await pending.list()
            #expect(listed.map(\.transactionId) == ["orphan"])
            #expect(listed.first?.commerce.price == 4990, "a parked purchase keeps what it earned")
            #expect(try await pending.parkedTransaction("orphan")?.commerce.currency == "USD")
            _ = try await F.deliver(ledger, F.transaction("orphan", product: F.unlock), product: F.unlock, to: "dan")
            #expect(try await pending.list().isEmpty, "delivered later, it leaves the recovery list")
        }
    }

    @Test func transferMovesTheSubscriptionAndRepeatsAreFollowers() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await F.ledger(on: provider, policy: .transfer)
            _ = try await F.deliver(ledger, F.transaction("m1", product: F.monthly), product: F.monthly, to: "ann", policy: .transfer)
            // The renewal, submitted by bob three times at once: one transfer, two repeats of its answer.
            let renewal = F.transaction("m2", product: F.monthly, original: "m1")
            let results = try await withThrowingTaskGroup(of: DeliveryResult.self) { group in
                for _ in 0..<3 { group.addTask { try await F.deliver(ledger, renewal, product: F.monthly, to: "bob", policy: .transfer) } }
                return try await group.reduce(into: [DeliveryResult]()) { $0.append($1) }
            }
            let deliveries = results.compactMap { if case .delivered(let d) = $0 { d } else { nil } }
            #expect(deliveries.count == 3)
            #expect(deliveries.allSatisfy { $0.user == UserID(rawValue: "bob") })
            #expect(deliveries.filter(\.newlyDelivered).count == 1)
            #expect(try await F.count(provider, "transaction_owners WHERE user_id = 'bob'") == 1)
            #expect(try await F.count(provider, "entitlement_grants WHERE user_id = 'ann'") == 0, "ann's grant moved with the subscription")
            #expect(try await F.count(provider, "audit_entries WHERE action = 'entitlement.transferred_out' AND user_id = 'ann'") == 1)
            let events = try await ledger.events(after: 0, limit: 100)
            #expect(events.filter { $0.event.type == .transferred }.map(\.event.user.rawValue).sorted() == ["ann", "bob"])
        }
    }

    @Test func aRefusedSubmitterChangesNothingButIsAudited() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await F.ledger(on: provider)
            _ = try await F.deliver(ledger, F.transaction("u9", product: F.unlock), product: F.unlock, to: "ann")
            let replay = try await F.deliver(ledger, F.transaction("u9", product: F.unlock), product: F.unlock, to: "mallory")
            #expect(replay == .ownedByAnotherUser(transactionId: "u9"))
            #expect(try await F.count(provider, "entitlement_grants WHERE user_id = 'mallory'") == 0)
            #expect(try await F.count(provider, "audit_entries WHERE action = 'transaction.claim_refused' AND user_id = 'ann'") == 1)
        }
    }

    @Test func aRoundPastTheWalletLimitFailsAloneNotItsNeighbours() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await F.ledger(on: provider)
            _ = try await ledger.adjust(
                user: UserID(rawValue: "rich"),
                amount: WalletLimits.maximumAmount,
                idempotencyKey: "seed",
                admin: "ops",
                reason: nil
            )
            // Push the balance to just under the limit, so a 10-coin purchase cannot fit.
            try await provider.withSession { db in
                try await db.raw("UPDATE wallets SET balance = \(bind: WalletLimits.maximumBalance - 5) WHERE user_id = 'rich'").run()
            }
            let results = await withTaskGroup(of: (String, Result<DeliveryResult, any Error>).self) { group in
                for (id, user) in [("x1", "rich"), ("x2", "poor"), ("x3", "poor")] {
                    group.addTask {
                        do {
                            return (id, .success(try await F.deliver(ledger, F.transaction(id, product: F.coins), product: F.coins, to: user)))
                        } catch {
                            return (id, .failure(error))
                        }
                    }
                }
                return await group.reduce(into: [String: Result<DeliveryResult, any Error>]()) { $0[$1.0] = $1.1 }
            }
            #expect((try? results["x1"]?.get()) == nil, "past the limit: refused")
            #expect((try? results["x2"]?.get()) != nil)
            #expect((try? results["x3"]?.get()) != nil)
            #expect(try await F.balance(provider, "poor") == 20)
            #expect(try await F.count(provider, "store_transactions WHERE transaction_id = 'x1'") == 0, "nothing of x1 was kept")
        }
    }
}

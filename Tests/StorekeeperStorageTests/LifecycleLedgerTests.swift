import Foundation
import SQLKit
import StorekeeperCore
import StorekeeperStorage
import Testing

/// Refunds, reversals and subscription state in storage: idempotent, order-proof, audited.
@Suite struct LifecycleLedgerTests {
    static let coins = PurchaseLedgerTests.coins
    static let unlock = PurchaseLedgerTests.unlock
    static let monthly = CatalogProduct(
        id: "monthly", kind: .autoRenewable, entitlement: "member", subscriptionGroup: "g", level: 1)

    static func balance(_ provider: any DatabaseProvider, _ user: String) async throws -> Int64 {
        try await provider.withSession { db in
            try await db.raw("SELECT balance FROM wallets WHERE user_id = \(bind: user)").first()?
                .decode(column: "balance", as: Int64.self) ?? 0
        }
    }

    static func revoke(
        _ provider: any DatabaseProvider, _ id: String, signed: Date, policy: CoinClawbackPolicy = .debt
    ) async throws -> LifecycleLedger.RevocationOutcome {
        try await provider.withTransaction { db in
            try await LifecycleLedger.revoke(
                transactionId: id, at: signed, kind: .refund, policy: policy, decidedAt: signed, cause: "test", now: signed,
                kind: provider.kind, on: db)
        }
    }

    static func reinstate(_ provider: any DatabaseProvider, _ id: String, signed: Date) async throws -> Bool {
        try await provider.withTransaction { db in
            try await LifecycleLedger.reinstate(transactionId: id, decidedAt: signed, cause: "test", now: signed, kind: provider.kind, on: db)
        }
    }

    @Test func aSecondRefundChangesNothingAndAReversalRestores() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
            let ledger = PurchaseLedger(provider: provider)
            let t0 = Date(timeIntervalSince1970: 1_800_000_000)
            _ = try await ledger.deliver(
                PurchaseLedgerTests.transaction("c1", product: Self.coins), product: Self.coins,
                submitter: UserID(rawValue: "ann"), policy: .refuse)
            #expect(try await Self.balance(provider, "ann") == 10)
            guard case .revoked(_, let taken, 0) = try await Self.revoke(provider, "c1", signed: t0 + 10) else {
                Issue.record("not revoked")
                return
            }
            #expect(taken == 10)
            #expect(try await Self.revoke(provider, "c1", signed: t0 + 20) == .alreadyRevoked)
            #expect(try await Self.balance(provider, "ann") == 0)
            #expect(try await Self.reinstate(provider, "c1", signed: t0 + 30))
            #expect(try await Self.balance(provider, "ann") == 10)
            // A refund signed before the reversal, delivered late, changes nothing.
            #expect(try await Self.revoke(provider, "c1", signed: t0 + 15) == .alreadyRevoked)
            #expect(try await Self.balance(provider, "ann") == 10)
            // A genuinely new refund after the reversal takes the coins again, under a new cause.
            guard case .revoked = try await Self.revoke(provider, "c1", signed: t0 + 40) else {
                Issue.record("second refund not applied")
                return
            }
            #expect(try await Self.balance(provider, "ann") == 0)
            #expect(try await Self.revoke(provider, "missing", signed: t0) == .notDelivered)
        }
    }

    @Test func aReversalBeforeItsRefundWins() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
            let ledger = PurchaseLedger(provider: provider)
            let t0 = Date(timeIntervalSince1970: 1_800_000_000)
            _ = try await ledger.deliver(
                PurchaseLedgerTests.transaction("u1", product: Self.unlock), product: Self.unlock,
                submitter: UserID(rawValue: "bob"), policy: .refuse)
            #expect(try await Self.reinstate(provider, "u1", signed: t0 + 20) == false)
            #expect(try await Self.revoke(provider, "u1", signed: t0 + 10) == .alreadyRevoked)
            let revoked = try await provider.withSession { db in
                try await db.raw("SELECT revoked_at FROM entitlement_grants WHERE transaction_id = 'u1'").first()?
                    .decode(column: "revoked_at", as: Int64?.self)
            }
            #expect(revoked == nil)
        }
    }

    @Test func floorPolicyForgivesWhatWasSpent() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
            let ledger = PurchaseLedger(provider: provider)
            let wallet = WalletStore(provider: provider)
            _ = try await ledger.deliver(
                PurchaseLedgerTests.transaction("c9", product: Self.coins), product: Self.coins,
                submitter: UserID(rawValue: "cy"), policy: .refuse)
            _ = try await wallet.spend(user: UserID(rawValue: "cy"), amount: 7, idempotencyKey: "k", reason: nil)
            let outcome = try await Self.revoke(provider, "c9", signed: Date(), policy: .floor)
            #expect(outcome == .revoked(user: UserID(rawValue: "cy"), coinsTaken: 3, coinsForgiven: 7))
            #expect(try await Self.balance(provider, "cy") == 0)
        }
    }

    @Test func olderMessagesDoNotRollSubscriptionStateBack() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
            let t0 = Date(timeIntervalSince1970: 1_800_000_000)
            func snapshot(_ state: SubscriptionState, _ signed: Date, event: String) -> SubscriptionSnapshot {
                SubscriptionSnapshot(
                    originalTransactionId: "o1", bundleId: "b", productId: "monthly", environment: "Sandbox", state: state,
                    autoRenew: true, expiresAt: t0 + 86_400 * 30, event: event, signedDate: signed)
            }
            let store = SubscriptionStore(provider: provider)
            for (state, seconds, event, applies) in [
                (SubscriptionState.active, 10.0, "SUBSCRIBED", true), (.expired, 30, "EXPIRED", true), (.active, 20, "DID_RENEW", false),
            ] {
                let message = snapshot(state, t0 + seconds, event: event)
                let applied = try await provider.withTransaction { db in
                    try await LifecycleLedger.applySnapshot(message, cause: "test", now: t0, kind: provider.kind, on: db)
                }
                #expect(applied == applies, "\(event)")
            }
            #expect(try await store.find("o1")?.state == .expired)
            #expect(try await store.find("o1")?.lastEvent == "EXPIRED")
        }
    }
}

import Foundation
import SQLKit
import StorageTestSupport
import StorekeeperCore
import StorekeeperStorage
import Testing

@testable import StorekeeperLedger

/// Refunds, reversals and subscription state through the ledger: idempotent, order-proof, audited, announced.
@Suite struct RevocationsTests {
    typealias F = LedgerFixtures

    static func revoke(
        _ ledger: Ledger,
        _ id: String,
        signed: Date,
        policy: CoinClawbackPolicy = .debt
    ) async throws -> Revocations.Outcome {
        try await ledger.write { uow in
            let outcome = try await Revocations.revoke(
                transactionId: id,
                at: signed,
                kind: .refund,
                revocationType: "REFUND_FULL",
                revocationPercentage: nil,
                policy: policy,
                decidedAt: signed,
                cause: .notification("test-\(signed.timeIntervalSince1970)"),
                in: uow
            )
            try await uow.finish()
            return outcome
        }
    }

    static func reinstate(_ ledger: Ledger, _ id: String, signed: Date) async throws -> Bool {
        try await ledger.write { uow in
            let done = try await Revocations.reinstate(transactionId: id, decidedAt: signed, cause: .notification("test"), in: uow)
            try await uow.finish()
            return done
        }
    }

    @Test func aSecondRefundChangesNothingAndAReversalRestores() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await F.ledger(on: provider)
            let t0 = F.t0
            _ = try await F.deliver(ledger, F.transaction("c1", product: F.coins), product: F.coins, to: "ann")
            #expect(try await F.balance(provider, "ann") == 10)
            guard case .revoked(_, let taken, 0) = try await Self.revoke(ledger, "c1", signed: t0 + 10) else {
                Issue.record("not revoked")
                return
            }
            #expect(taken == 10)
            #expect(try await Self.revoke(ledger, "c1", signed: t0 + 20) == .alreadyRevoked)
            #expect(try await F.balance(provider, "ann") == 0)
            #expect(try await Self.reinstate(ledger, "c1", signed: t0 + 30))
            #expect(try await F.balance(provider, "ann") == 10)
            // A refund signed before the reversal, delivered late, changes nothing.
            #expect(try await Self.revoke(ledger, "c1", signed: t0 + 15) == .alreadyRevoked)
            #expect(try await F.balance(provider, "ann") == 10)
            // A genuinely new refund after the reversal takes the coins again, under a new key.
            guard case .revoked = try await Self.revoke(ledger, "c1", signed: t0 + 40) else {
                Issue.record("second refund not applied")
                return
            }
            #expect(try await F.balance(provider, "ann") == 0)
            #expect(try await Self.revoke(ledger, "missing", signed: t0) == .notDelivered)
            // How Apple revoked it is kept with the transaction.
            #expect(try await F.count(provider, "store_transactions WHERE transaction_id = 'c1' AND revocation_type = 'REFUND_FULL'") == 1)
            // Refunded twice, reversed once: announced in that order on ann's sequence.
            let types = try await ledger.events(after: 0, user: UserID(rawValue: "ann"), limit: 100).map(\.event.type)
            #expect(types.filter { [.refunded, .reinstated].contains($0) } == [.refunded, .reinstated, .refunded])
        }
    }

    @Test func aReversalBeforeItsRefundWins() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await F.ledger(on: provider)
            _ = try await F.deliver(ledger, F.transaction("u1", product: F.unlock), product: F.unlock, to: "bob")
            #expect(try await Self.reinstate(ledger, "u1", signed: F.t0 + 20) == false)
            #expect(try await Self.revoke(ledger, "u1", signed: F.t0 + 10) == .alreadyRevoked)
            #expect(try await F.count(provider, "entitlement_grants WHERE transaction_id = 'u1' AND revoked_at IS NULL") == 1)
        }
    }

    @Test func floorPolicyForgivesWhatWasSpent() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await F.ledger(on: provider)
            _ = try await F.deliver(ledger, F.transaction("c9", product: F.coins), product: F.coins, to: "cy")
            _ = try await ledger.spend(user: UserID(rawValue: "cy"), amount: 7, idempotencyKey: "k", reason: nil)
            let outcome = try await Self.revoke(ledger, "c9", signed: Date(), policy: .floor)
            #expect(outcome == .revoked(user: UserID(rawValue: "cy"), coinsTaken: 3, coinsForgiven: 7))
            #expect(try await F.balance(provider, "cy") == 0)
        }
    }

    @Test func olderMessagesDoNotRollSubscriptionStateBack() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await F.ledger(on: provider)
            _ = try await F.deliver(ledger, F.transaction("o1", product: F.monthly), product: F.monthly, to: "dee")
            func snapshot(_ state: SubscriptionState, _ seconds: Double, event: String) -> SubscriptionSnapshot {
                SubscriptionSnapshot(
                    originalTransactionId: "o1",
                    bundleId: "b",
                    productId: "monthly",
                    environment: .sandbox,
                    state: state,
                    autoRenew: true,
                    expiresAt: F.t0 + 86_400 * 30,
                    event: event,
                    signedDate: F.t0 + seconds
                )
            }
            for (state, seconds, event, applies) in [
                (SubscriptionState.active, 10.0, "SUBSCRIBED", true), (.expired, 30, "EXPIRED", true), (.active, 20, "DID_RENEW", false),
            ] {
                let message = snapshot(state, seconds, event: event)
                let applied = try await ledger.write { uow in
                    let applied = try await StoreMessages.applySnapshots([(message, .notification(event))], in: uow)
                    try await uow.finish()
                    return applied
                }
                #expect(applied == [applies], "\(event)")
            }
            let store = SubscriptionStore(provider: provider)
            #expect(try await store.find("o1")?.state == .expired)
            #expect(try await store.find("o1")?.lastEvent == "EXPIRED")
            let changes = try await ledger.events(after: 0, user: UserID(rawValue: "dee"), limit: 100)
                .filter { $0.event.type == .subscriptionChanged }.map { $0.event.details["state"] }
            #expect(changes == ["active", "expired"], "one event per change of state, none for the stale message")
        }
    }
}

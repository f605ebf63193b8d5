import Foundation
import Logging
import SQLKit
import StorageTestSupport
import StorekeeperCore
import StorekeeperStorage
import Synchronization
import Testing

@testable import StorekeeperLedger

/// Issue 32, item 3: an operator's log line commits in the transaction of the change it records. Each batch here
/// gets its own second (the clock moves one second per batch), so a line and a change share a timestamp only when
/// they shared a transaction.
@Suite struct OperatorLogTests {
    static func ledger(on provider: any DatabaseProvider) async throws -> Ledger {
        try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
        let ticks = Mutex(LedgerFixtures.t0)
        return Ledger(
            provider: provider,
            rules: LedgerRules(catalog: { LedgerFixtures.catalog }, transferPolicy: .refuse, coinClawback: .debt),
            clock: {
                ticks.withLock {
                    $0 += 1
                    return $0
                }
            },
            logger: Logger(label: "test.ledger")
        )
    }

    static func lines(_ provider: any DatabaseProvider) async throws -> [(action: String, at: Int64)] {
        try await provider.withSession { db in
            try await db.raw("SELECT action, created_at FROM operator_actions ORDER BY id").all().map {
                (try $0.decode(column: "action", as: String.self), try $0.decode(column: "created_at", as: Int64.self))
            }
        }
    }

    static func auditTimes(_ provider: any DatabaseProvider, _ action: String) async throws -> [Int64] {
        try await provider.withSession { db in
            try await db.raw("SELECT created_at FROM audit_entries WHERE action = \(bind: action) ORDER BY id").all().map {
                try $0.decode(column: "created_at", as: Int64.self)
            }
        }
    }

    static func action(_ name: String) -> OperatorAction {
        OperatorAction(operatorName: "sam", role: "support", action: name, subject: "ann", detail: "goodwill")
    }

    @Test func theLineCommitsWithTheChangeAndOnlyOnce() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await Self.ledger(on: provider)
            let ann = UserID(rawValue: "ann")
            _ = try await ledger.logging(Self.action("entitlement.granted")) {
                // Two changes: the line goes with the first.
                _ = try await ledger.grantEntitlement(user: ann, entitlement: "pro", until: nil, admin: "sam", reason: "goodwill")
                _ = try await ledger.grantEntitlement(user: ann, entitlement: "extra", until: nil, admin: "sam", reason: "goodwill")
            }
            let lines = try await Self.lines(provider)
            let grants = try await Self.auditTimes(provider, "entitlement.granted")
            #expect(lines.map(\.action) == ["entitlement.granted"])
            #expect(grants.count == 2 && grants[0] != grants[1], "two transactions")
            #expect(lines.first?.at == grants.first, "the line shares the first change's transaction")
        }
    }

    @Test func aRefusedChangeLeavesNoLineAndTheNextChangeTakesIt() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await Self.ledger(on: provider)
            let ann = UserID(rawValue: "ann")
            // Nothing to revoke: refused inside the transaction, so the line rolls back with it.
            await #expect(throws: SupportError.entitlementNotActive("pro", user: ann)) {
                try await ledger.logging(Self.action("entitlement.revoked")) {
                    try await ledger.revokeEntitlement(user: ann, entitlement: "pro", admin: "sam", reason: "error")
                }
            }
            #expect(try await Self.lines(provider).isEmpty)
            // A first write that fails leaves the line to the next one.
            _ = try await ledger.logging(Self.action("entitlement.granted")) {
                _ = try? await ledger.revokeEntitlement(user: ann, entitlement: "pro", admin: "sam", reason: "error")
                return try await ledger.grantEntitlement(user: ann, entitlement: "pro", until: nil, admin: "sam", reason: "goodwill")
            }
            let lines = try await Self.lines(provider)
            #expect(lines.map(\.action) == ["entitlement.granted"])
            #expect(lines.first?.at == (try await Self.auditTimes(provider, "entitlement.granted")).first)
        }
    }

    @Test func anActionThatWroteNothingIsLoggedOnItsOwn() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await Self.ledger(on: provider)
            let answer = try await ledger.logging(Self.action("subscription.extension_requested")) { 42 }
            #expect(answer == 42)
            #expect(try await Self.lines(provider).map(\.action) == ["subscription.extension_requested"])
            // Outside an action, writes carry no line.
            _ = try await ledger.grantEntitlement(user: UserID(rawValue: "bob"), entitlement: "pro", until: nil, admin: "sam", reason: "x")
            #expect(try await Self.lines(provider).count == 1)
        }
    }
}

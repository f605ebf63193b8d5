import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m019CommitmentPlans = Migration("019_commitment_plans") { db, _ in
        // Monthly billing with a 12-month commitment (API 1.21): the plan and where the commitment stands.
        let statements: [SQLQueryString] = [
            "ALTER TABLE subscriptions ADD COLUMN billing_plan TEXT",
            "ALTER TABLE subscriptions ADD COLUMN commitment_payments INTEGER",
            "ALTER TABLE subscriptions ADD COLUMN commitment_total INTEGER",
            "ALTER TABLE subscriptions ADD COLUMN commitment_ends_at BIGINT",
            "ALTER TABLE subscriptions ADD COLUMN commitment_price BIGINT",
            "ALTER TABLE subscriptions ADD COLUMN commitment_renews INTEGER",
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}

import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m023TeamSeats = Migration("023_team_seats") { db, _ in
        // The rosters of multiseat subscriptions whose developer manages invitations: each invitation and seat
        // claim, keyed by the request identifier Apple's Claim Seat is called with (persisted before the call,
        // so a retry claims the same seat), and what each claim lent the member until it was released.
        let statements: [SQLQueryString] = [
            """
            CREATE TABLE team_seats (id TEXT PRIMARY KEY, bundle_id TEXT NOT NULL, environment TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL, purchaser_id TEXT NOT NULL, member_id TEXT,
                invitation_hash TEXT UNIQUE, invitation_expires_at BIGINT, status TEXT NOT NULL,
                seat_claim_id TEXT UNIQUE, app_transaction_id TEXT, created_at BIGINT NOT NULL, claimed_at BIGINT,
                released_at BIGINT, release_reason TEXT)
            """,
            "CREATE INDEX team_seats_by_original ON team_seats (original_transaction_id, status)",
            "CREATE INDEX team_seats_by_member ON team_seats (member_id)",
            "CREATE INDEX team_seats_by_purchaser ON team_seats (purchaser_id)",
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}

import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m003SubscriptionLifecycle = Migration("003_subscription_lifecycle") { db, _ in
        let statements: [SQLQueryString] = [
            "ALTER TABLE notifications ADD COLUMN claimed_until BIGINT",
            "CREATE INDEX notifications_in_order ON notifications (status, signed_date, received_at)",
            """
            CREATE TABLE subscriptions (
                original_transaction_id TEXT PRIMARY KEY, user_id TEXT, bundle_id TEXT NOT NULL,
                product_id TEXT NOT NULL, subscription_group TEXT, environment TEXT NOT NULL, state TEXT NOT NULL,
                expiration_reason TEXT, auto_renew INTEGER, auto_renew_product_id TEXT, expires_at BIGINT,
                grace_expires_at BIGINT, offer_type INTEGER, offer_id TEXT, price_increase TEXT,
                latest_transaction_id TEXT, last_event TEXT NOT NULL, last_signed_date BIGINT NOT NULL,
                checked_at BIGINT, updated_at BIGINT NOT NULL)
            """,
            "CREATE INDEX subscriptions_by_state ON subscriptions (state, expires_at)",
            "CREATE INDEX subscriptions_by_user ON subscriptions (user_id)",
            """
            CREATE TABLE revocations (
                transaction_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
                product_id TEXT NOT NULL, product_kind TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL,
                revoked_at BIGINT NOT NULL, generation INTEGER NOT NULL, coins_taken BIGINT NOT NULL,
                coins_forgiven BIGINT NOT NULL, decided_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE consumption_requests (
                id TEXT PRIMARY KEY, bundle_id TEXT NOT NULL, environment TEXT NOT NULL, transaction_id TEXT NOT NULL,
                original_transaction_id TEXT, user_id TEXT, reason TEXT, requested_at BIGINT NOT NULL,
                deadline_at BIGINT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL,
                next_attempt_at BIGINT NOT NULL, claimed_until BIGINT, answer TEXT, last_error TEXT,
                answered_at BIGINT, updated_at BIGINT NOT NULL)
            """,
            "CREATE INDEX consumption_requests_due ON consumption_requests (status, next_attempt_at)",
            "CREATE INDEX consumption_requests_by_transaction ON consumption_requests (transaction_id)",
            """
            CREATE TABLE job_state (
                name TEXT PRIMARY KEY, lease_owner TEXT, lease_until BIGINT, cursor TEXT, updated_at BIGINT NOT NULL)
            """,
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}

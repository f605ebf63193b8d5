import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m008MoneyAndOutbox = Migration("008_money_and_outbox") { db, kind in
        var statements: [SQLQueryString] = [
            // What each purchase earned and how it was offered, from every path that carries it.
            "ALTER TABLE apple_transactions ADD COLUMN price BIGINT",
            "ALTER TABLE apple_transactions ADD COLUMN currency TEXT",
            "ALTER TABLE apple_transactions ADD COLUMN storefront TEXT",
            "ALTER TABLE apple_transactions ADD COLUMN storefront_id TEXT",
            "ALTER TABLE apple_transactions ADD COLUMN offer_id TEXT",
            "ALTER TABLE apple_transactions ADD COLUMN offer_discount_type TEXT",
            "ALTER TABLE apple_transactions ADD COLUMN offer_period TEXT",
            "ALTER TABLE apple_transactions ADD COLUMN app_transaction_id TEXT",
            "ALTER TABLE apple_transactions ADD COLUMN transaction_reason TEXT",
            "ALTER TABLE apple_transactions ADD COLUMN web_order_line_item_id TEXT",
            "ALTER TABLE apple_transactions ADD COLUMN ownership_type TEXT",
            "ALTER TABLE apple_transactions ADD COLUMN revocation_type TEXT",
            "ALTER TABLE apple_transactions ADD COLUMN revocation_percentage INTEGER",
            // A parked purchase keeps the same details (JSON) until it is delivered.
            "ALTER TABLE pending_transactions ADD COLUMN commerce TEXT",
            // The outbox: a per-user sequence (gap-free, commit-ordered) and a global position in commit order.
            "CREATE TABLE user_event_sequences (user_id TEXT PRIMARY KEY, last_seq BIGINT NOT NULL)",
        ]
        statements.append(
            kind == .postgres
                ? """
                CREATE TABLE events (
                    position BIGSERIAL PRIMARY KEY, user_id TEXT NOT NULL, user_seq BIGINT NOT NULL, type TEXT NOT NULL,
                    subject TEXT NOT NULL, occurred_at BIGINT NOT NULL, payload TEXT NOT NULL, UNIQUE (user_id, user_seq))
                """
                : """
                CREATE TABLE events (
                    position INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT NOT NULL, user_seq BIGINT NOT NULL,
                    type TEXT NOT NULL, subject TEXT NOT NULL, occurred_at BIGINT NOT NULL, payload TEXT NOT NULL,
                    UNIQUE (user_id, user_seq))
                """
        )
        for statement in statements { try await db.raw(statement).run() }
    }
}

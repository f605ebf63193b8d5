import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m001Purchases = Migration("001_purchases") { db, kind in
        let statements: [SQLQueryString] = [
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY, kind TEXT NOT NULL, merged_into TEXT, created_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE orders (
                id TEXT PRIMARY KEY, user_id TEXT NOT NULL, bundle_id TEXT NOT NULL, product_id TEXT NOT NULL,
                app_account_token TEXT NOT NULL UNIQUE, status TEXT NOT NULL, created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, transaction_id TEXT)
            """,
            "CREATE INDEX orders_by_user ON orders (user_id, created_at)",
            """
            CREATE TABLE transaction_owners (
                original_transaction_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, bundle_id TEXT NOT NULL,
                product_id TEXT NOT NULL, bound_at BIGINT NOT NULL)
            """,
            "CREATE INDEX transaction_owners_by_user ON transaction_owners (user_id)",
            """
            CREATE TABLE apple_transactions (
                transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT NOT NULL, user_id TEXT NOT NULL,
                bundle_id TEXT NOT NULL, product_id TEXT NOT NULL, product_kind TEXT NOT NULL,
                environment TEXT NOT NULL, quantity INTEGER NOT NULL, purchase_date BIGINT NOT NULL,
                expires_date BIGINT, subscription_group TEXT, offer_type INTEGER, app_account_token TEXT,
                order_id TEXT, source TEXT NOT NULL, delivered_at BIGINT NOT NULL, signed_data TEXT)
            """,
            "CREATE INDEX apple_transactions_by_user ON apple_transactions (user_id, purchase_date)",
            "CREATE INDEX apple_transactions_by_original ON apple_transactions (original_transaction_id)",
            """
            CREATE TABLE entitlement_grants (
                transaction_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, entitlement TEXT NOT NULL,
                product_id TEXT NOT NULL, product_kind TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
                starts_at BIGINT NOT NULL, ends_at BIGINT, environment TEXT NOT NULL, revoked_at BIGINT,
                created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX entitlement_grants_by_user ON entitlement_grants (user_id, entitlement)",
            "CREATE INDEX entitlement_grants_by_original ON entitlement_grants (original_transaction_id)",
            """
            CREATE TABLE wallets (
                user_id TEXT NOT NULL, currency TEXT NOT NULL, balance BIGINT NOT NULL,
                PRIMARY KEY (user_id, currency))
            """,
            """
            CREATE TABLE wallet_entries (
                cause TEXT PRIMARY KEY, user_id TEXT NOT NULL, currency TEXT NOT NULL, amount BIGINT NOT NULL,
                balance_after BIGINT NOT NULL, reason TEXT, created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX wallet_entries_by_user ON wallet_entries (user_id, created_at)",
            kind == .postgres
                ? """
                CREATE TABLE audit_entries (
                    id BIGSERIAL PRIMARY KEY, user_id TEXT NOT NULL, action TEXT NOT NULL, subject TEXT NOT NULL,
                    amount BIGINT, period_start BIGINT, period_end BIGINT, cause TEXT NOT NULL, detail TEXT,
                    created_at BIGINT NOT NULL)
                """
                : """
                CREATE TABLE audit_entries (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT NOT NULL, action TEXT NOT NULL,
                    subject TEXT NOT NULL, amount BIGINT, period_start BIGINT, period_end BIGINT,
                    cause TEXT NOT NULL, detail TEXT, created_at BIGINT NOT NULL)
                """,
            "CREATE INDEX audit_entries_by_user ON audit_entries (user_id, id)",
            """
            CREATE TABLE pending_transactions (
                transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT NOT NULL, bundle_id TEXT NOT NULL,
                product_id TEXT NOT NULL, environment TEXT NOT NULL, reason TEXT NOT NULL, signed_data TEXT,
                created_at BIGINT NOT NULL, resolved_at BIGINT)
            """,
            """
            CREATE TABLE offer_nonces (
                nonce TEXT PRIMARY KEY, user_id TEXT NOT NULL, product_id TEXT NOT NULL, offer_id TEXT NOT NULL,
                campaign_id TEXT NOT NULL, created_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE catalog_entries (
                kind TEXT NOT NULL, id TEXT NOT NULL, definition TEXT NOT NULL, updated_at BIGINT NOT NULL,
                PRIMARY KEY (kind, id))
            """,
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}

import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    /// The subscription analytics' rollups: daily cells (stock metrics as changes), cohort cells, each subscription's
    /// facts as last rolled up, and a queue of subscriptions whose facts changed. Triggers fill the queue in the
    /// transaction that changes a fact, whichever path wrote it, so a rollup can lag but never miss a change.
    static let m030SubscriptionRollups = Migration("030_subscription_rollups") { db, kind in
        let dims =
            "app TEXT NOT NULL, store TEXT NOT NULL, product_id TEXT NOT NULL, storefront TEXT NOT NULL, offer TEXT NOT NULL, "
            + "currency TEXT NOT NULL, metric TEXT NOT NULL, value BIGINT NOT NULL"
        let id = kind == .postgres ? "id BIGSERIAL PRIMARY KEY" : "id INTEGER PRIMARY KEY AUTOINCREMENT"
        var statements: [SQLQueryString] = [
            """
            CREATE TABLE analytics_days (day TEXT NOT NULL, \(unsafeRaw: dims),
                PRIMARY KEY (metric, day, app, store, product_id, storefront, offer, currency))
            """,
            """
            CREATE TABLE analytics_cohorts (cohort TEXT NOT NULL, age INTEGER NOT NULL, \(unsafeRaw: dims),
                PRIMARY KEY (cohort, age, metric, app, store, product_id, storefront, offer, currency))
            """,
            "CREATE TABLE analytics_subscriptions (original_transaction_id TEXT PRIMARY KEY, facts TEXT NOT NULL)",
            "CREATE TABLE analytics_dirty (\(unsafeRaw: id), original_transaction_id TEXT NOT NULL)",
            // The stores' expiry messages by subscription (the only notifications read by original transaction; a
            // partial index, so other messages pay nothing for it).
            "CREATE INDEX notifications_expiries ON notifications (original_transaction_id) WHERE notification_type LIKE '%EXPIRED'",
            "CREATE TABLE exchange_rates (day TEXT NOT NULL, currency TEXT NOT NULL, micros BIGINT NOT NULL, PRIMARY KEY (currency, day))",
        ]
        // (table, event, condition on NEW)
        let triggers: [(String, String, String)] = [
            ("store_transactions", "INSERT", "NEW.product_kind = 'autoRenewable'"),
            (
                "store_transactions", "UPDATE OF revocation_type, revocation_percentage, expires_date, price",
                "NEW.product_kind = 'autoRenewable'"
            ),
            ("revocations", "INSERT", "NEW.product_kind = 'autoRenewable'"),
            ("revocations", "UPDATE OF status, revoked_at, kind", "NEW.product_kind = 'autoRenewable'"),
            ("notifications", "INSERT", "NEW.original_transaction_id IS NOT NULL"),
            ("notifications", "UPDATE OF original_transaction_id", "NEW.original_transaction_id IS NOT NULL"),
            ("subscriptions", "INSERT", "NEW.state = 'expired'"),
            ("subscriptions", "UPDATE OF state, expiration_reason, expires_at", "NEW.state = 'expired' OR OLD.state = 'expired'"),
        ]
        if kind == .postgres {
            statements.append(
                """
                CREATE FUNCTION analytics_mark() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO analytics_dirty (original_transaction_id) VALUES (NEW.original_transaction_id);
                    RETURN NULL;
                END $$
                """
            )
        }
        for (index, (table, event, condition)) in triggers.enumerated() {
            let name = "analytics_mark_\(index)"
            if kind == .postgres {
                statements.append(
                    """
                    CREATE TRIGGER \(unsafeRaw: name) AFTER \(unsafeRaw: event) ON \(unsafeRaw: table) FOR EACH ROW
                    WHEN (\(unsafeRaw: condition)) EXECUTE FUNCTION analytics_mark()
                    """
                )
            } else {
                statements.append(
                    """
                    CREATE TRIGGER \(unsafeRaw: name) AFTER \(unsafeRaw: event) ON \(unsafeRaw: table) FOR EACH ROW
                    WHEN \(unsafeRaw: condition) BEGIN
                        INSERT INTO analytics_dirty (original_transaction_id) VALUES (NEW.original_transaction_id);
                    END
                    """
                )
            }
        }
        // Subscriptions delivered before this version are rolled up by the first refreshes.
        statements.append(
            """
            INSERT INTO analytics_dirty (original_transaction_id)
            SELECT DISTINCT original_transaction_id FROM store_transactions WHERE product_kind = 'autoRenewable'
            """
        )
        for statement in statements { try await db.raw(statement).run() }
    }
}

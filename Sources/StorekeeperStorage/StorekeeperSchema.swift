import Foundation
import SQLKit
import StorekeeperCore

/// Storekeeper's tables, as an append-only list of migrations. Timestamps are epoch milliseconds (BIGINT) and ids
/// are text, so one set of statements runs on SQLite and PostgreSQL; the only dialect switch is the audit id.
public enum StorekeeperSchema {
    public static let migrations: [Migration] = [
        Migration("001_purchases") { db, kind in
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
        },
        Migration("002_notification_inbox") { db, _ in
            let statements: [SQLQueryString] = [
                """
                CREATE TABLE notifications (
                    id TEXT PRIMARY KEY, format TEXT NOT NULL, bundle_id TEXT, notification_type TEXT, subtype TEXT,
                    original_transaction_id TEXT, transaction_id TEXT, signed_date BIGINT, environment TEXT,
                    body TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL, last_error TEXT,
                    received_at BIGINT NOT NULL, processed_at BIGINT, next_attempt_at BIGINT)
                """,
                "CREATE INDEX notifications_by_status ON notifications (status, next_attempt_at)",
                "CREATE INDEX notifications_by_original ON notifications (original_transaction_id, signed_date)",
            ]
            for statement in statements { try await db.raw(statement).run() }
        },
        Migration("003_subscription_lifecycle") { db, _ in
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
        },
        Migration("004_grant_order_and_subscription_receipts") { db, _ in
            let statements: [SQLQueryString] = [
                // endReplacedPeriods finds "the next start of this subscription" for each live grant: an index seek.
                "CREATE INDEX entitlement_grants_by_original_start ON entitlement_grants (original_transaction_id, starts_at)",
                "DROP INDEX entitlement_grants_by_original",
                // The latest legacy receipt per subscription, for verifyReceipt renewal checks.
                """
                CREATE TABLE subscription_receipts (
                    original_transaction_id TEXT PRIMARY KEY, bundle_id TEXT NOT NULL, environment TEXT NOT NULL,
                    receipt TEXT NOT NULL, updated_at BIGINT NOT NULL)
                """,
            ]
            for statement in statements { try await db.raw(statement).run() }
        },
        Migration("005_notification_headers") { db, _ in
            let statements: [SQLQueryString] = [
                // JWS headers (certificate chains) shared by stored notification bodies; see CompactNotificationBody.
                "CREATE TABLE notification_headers (digest TEXT PRIMARY KEY, header TEXT NOT NULL)",
                // NULL: the body is stored raw.
                "ALTER TABLE notifications ADD COLUMN body_format TEXT",
            ]
            for statement in statements { try await db.raw(statement).run() }
        },
        Migration("006_drop_notifications_by_original") { db, _ in
            // No query reads notifications by original transaction (processing claims them in signedDate order
            // through notifications_in_order), while every stored notification paid for this index with a write
            // to a random page of it.
            try await db.raw("DROP INDEX notifications_by_original").run()
        },
        Migration("007_hardening") { db, _ in
            let statements: [SQLQueryString] = [
                // Guests hold a server-issued credential; only its SHA-256 is kept.
                """
                CREATE TABLE guest_credentials (
                    guest_id TEXT PRIMARY KEY, digest TEXT NOT NULL, origin TEXT NOT NULL, created_at BIGINT NOT NULL)
                """,
                // Refused webhook bodies are counted per source and reason, with one digest and a short prefix.
                """
                CREATE TABLE notification_refusals (
                    source TEXT NOT NULL, reason TEXT NOT NULL, format TEXT NOT NULL, count BIGINT NOT NULL,
                    digest TEXT NOT NULL, prefix TEXT NOT NULL, first_seen BIGINT NOT NULL, last_seen BIGINT NOT NULL,
                    PRIMARY KEY (source, reason, format))
                """,
                // A parked purchase keeps what delivering it needs (receipt entries have no JWS), and who assigned it.
                "ALTER TABLE pending_transactions ADD COLUMN purchase_date BIGINT",
                "ALTER TABLE pending_transactions ADD COLUMN expires_date BIGINT",
                "ALTER TABLE pending_transactions ADD COLUMN quantity INTEGER",
                "ALTER TABLE pending_transactions ADD COLUMN offer_type INTEGER",
                "ALTER TABLE pending_transactions ADD COLUMN app_account_token TEXT",
                "ALTER TABLE pending_transactions ADD COLUMN subscription_group TEXT",
                "ALTER TABLE pending_transactions ADD COLUMN source TEXT",
                "ALTER TABLE pending_transactions ADD COLUMN resolved_by TEXT",
                "ALTER TABLE pending_transactions ADD COLUMN assigned_user TEXT",
                // `/health` writes here: a database that reads but cannot write is not healthy.
                "CREATE TABLE health_probes (instance TEXT PRIMARY KEY, checked_at BIGINT NOT NULL)",
                // The subscription and refund rows a merge or transfer moves with their user.
                "CREATE INDEX revocations_by_user ON revocations (user_id)",
                "CREATE INDEX consumption_requests_by_user ON consumption_requests (user_id)",
            ]
            for statement in statements { try await db.raw(statement).run() }
            // Bodies stored before this release: V1 bodies lose their shared secret, refused bodies become counts.
            for row in try await db.raw("SELECT id, body FROM notifications WHERE format = 'v1' AND status <> 'rejected'").all() {
                let id = try row.decode(column: "id", as: String.self)
                let body = try row.decode(column: "body", as: String.self)
                let redacted = NotificationRedaction.redactV1(body) ?? NotificationRedaction.prefix(of: body)
                try await db.raw("UPDATE notifications SET body = \(bind: redacted) WHERE id = \(bind: id)").run()
            }
            let refused = try await db.raw(
                """
                SELECT format, COUNT(*) AS n, MIN(received_at) AS first_seen, MAX(received_at) AS last_seen, MAX(id) AS digest
                FROM notifications WHERE status = 'rejected' GROUP BY format
                """
            ).all()
            for row in refused {
                let format = try row.decode(column: "format", as: String.self)
                let digest = String(try row.decode(column: "digest", as: String.self).dropFirst("rejected:".count))
                try await NotificationRefusalsTable.count(
                    source: "stored before 007_hardening",
                    reason: "refused",
                    format: format,
                    count: try row.decode(column: "n", as: Int64.self),
                    digest: digest,
                    prefix: "",
                    firstSeen: Date(millis: try row.decode(column: "first_seen", as: Int64.self)),
                    lastSeen: Date(millis: try row.decode(column: "last_seen", as: Int64.self)),
                    on: db
                )
            }
            try await db.raw("DELETE FROM notifications WHERE status = 'rejected'").run()
        },
        Migration("008_money_and_outbox") { db, kind in
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
        },
        Migration("009_revenue_by_day") { db, _ in
            // The revenue report reads a range of purchase days.
            try await db.raw("CREATE INDEX apple_transactions_by_purchase_date ON apple_transactions (purchase_date)").run()
        },
        Migration("010_backlog_counts") { db, _ in
            // The business metrics count orders that ran out unpaid, by expiry, every few seconds.
            try await db.raw("CREATE INDEX orders_by_status ON orders (status, expires_at)").run()
        },
        Migration("011_reconciliation") { db, _ in
            let statements: [SQLQueryString] = [
                // One row per UTC day reconciled against Apple's sales report, and what disagreed on it.
                """
                CREATE TABLE reconciliation_days (
                    day TEXT PRIMARY KEY, status TEXT NOT NULL, apple_units BIGINT NOT NULL, storekeeper_units BIGINT NOT NULL,
                    apple_refunds BIGINT NOT NULL, storekeeper_refunds BIGINT NOT NULL, findings INTEGER NOT NULL, message TEXT,
                    ran_at BIGINT NOT NULL, runs INTEGER NOT NULL)
                """,
                """
                CREATE TABLE reconciliation_findings (
                    day TEXT NOT NULL, kind TEXT NOT NULL, product_id TEXT NOT NULL, storefront TEXT NOT NULL, currency TEXT NOT NULL,
                    apple_units BIGINT NOT NULL, storekeeper_units BIGINT NOT NULL, apple_amount BIGINT NOT NULL,
                    storekeeper_amount BIGINT NOT NULL, transactions TEXT NOT NULL, detail TEXT NOT NULL, found_at BIGINT NOT NULL,
                    PRIMARY KEY (day, kind, product_id, storefront, currency))
                """,
                // Apple books a refund on the day it refunds: Storekeeper's refunds are read by that day.
                "CREATE INDEX revocations_by_date ON revocations (revoked_at)",
            ]
            for statement in statements { try await db.raw(statement).run() }
        },
        Migration("012_console") { db, kind in
            let statements: [SQLQueryString] = [
                // Operator console sessions: only the SHA-256 of the cookie's token is stored.
                """
                CREATE TABLE console_sessions (
                    token_hash TEXT PRIMARY KEY, operator TEXT NOT NULL, role TEXT NOT NULL, csrf TEXT NOT NULL,
                    created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)
                """,
                "CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at)",
                // What operators did, whoever it concerned (catalog edits and retries concern no user).
                kind == .postgres
                    ? """
                    CREATE TABLE operator_actions (
                        id BIGSERIAL PRIMARY KEY, operator TEXT NOT NULL, role TEXT NOT NULL, action TEXT NOT NULL,
                        subject TEXT NOT NULL, detail TEXT, created_at BIGINT NOT NULL)
                    """
                    : """
                    CREATE TABLE operator_actions (
                        id INTEGER PRIMARY KEY AUTOINCREMENT, operator TEXT NOT NULL, role TEXT NOT NULL, action TEXT NOT NULL,
                        subject TEXT NOT NULL, detail TEXT, created_at BIGINT NOT NULL)
                    """,
                // Support finds a customer by the token their app put on the purchase.
                "CREATE INDEX apple_transactions_by_token ON apple_transactions (app_account_token)",
            ]
            for statement in statements { try await db.raw(statement).run() }
        },
        Migration("013_risk_signals") { db, _ in
            let statements: [SQLQueryString] = [
                // One app install across several app users.
                "CREATE INDEX apple_transactions_by_app_transaction ON apple_transactions (app_transaction_id)",
                // Guests merged into an account (partial: most users were never merged).
                "CREATE INDEX users_by_merged_into ON users (merged_into) WHERE merged_into IS NOT NULL",
                // The few audit entries that are risk signals, without indexing every entry's action.
                """
                CREATE INDEX audit_entries_risky ON audit_entries (user_id)
                WHERE action IN ('risk.introductory_offer_repeated', 'transaction.claim_refused')
                """,
            ]
            for statement in statements { try await db.raw(statement).run() }
        },
        Migration("014_console_inbox_list") { db, _ in
            // The console lists a status's notifications newest first (and by type or day within it).
            try await db.raw("CREATE INDEX notifications_by_received ON notifications (status, received_at)").run()
        },
        Migration("015_webhooks") { db, kind in
            let id = kind == .postgres ? "id BIGSERIAL PRIMARY KEY" : "id INTEGER PRIMARY KEY AUTOINCREMENT"
            let statements: [SQLQueryString] = [
                // Each configured endpoint: how far the outbox (and Apple's notifications) were queued for it, paused.
                """
                CREATE TABLE webhook_endpoints (
                    name TEXT PRIMARY KEY, event_cursor BIGINT NOT NULL, notification_cursor BIGINT NOT NULL,
                    paused INTEGER NOT NULL, updated_at BIGINT NOT NULL)
                """,
                // One delivery of one event (or one Apple notification) to one endpoint. `ordering_key` is the user
                // (or `apple:<original transaction>`): a row is sent only when no older row of its key is pending.
                """
                CREATE TABLE webhook_queue (
                    \(unsafeRaw: id), endpoint TEXT NOT NULL, ordering_key TEXT NOT NULL, event_position BIGINT,
                    notification_id TEXT, origin TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL,
                    created_at BIGINT NOT NULL, next_attempt_at BIGINT NOT NULL, claimed_until BIGINT, last_error TEXT,
                    last_status INTEGER, delivered_at BIGINT)
                """,
                "CREATE INDEX webhook_queue_heads ON webhook_queue (endpoint, status, ordering_key, id)",
                "CREATE INDEX webhook_queue_due ON webhook_queue (endpoint, status, next_attempt_at)",
                // A notification is queued once per endpoint however often the forwarder reads it again.
                """
                CREATE UNIQUE INDEX webhook_queue_forwarded ON webhook_queue (endpoint, notification_id)
                WHERE origin = 'forward'
                """,
                "CREATE INDEX notifications_by_received_at ON notifications (received_at)",
            ]
            for statement in statements { try await db.raw(statement).run() }
        },
        Migration("016_events_by_time") { db, _ in
            // A webhook replay of a time range reads the outbox by when events happened.
            try await db.raw("CREATE INDEX events_by_occurred_at ON events (occurred_at)").run()
        },
        Migration("017_finished_transactions") { db, _ in
            let statements: [SQLQueryString] = [
                // When Apple confirmed a delivered consumable finished (Finish Transaction), or why it never will.
                "ALTER TABLE apple_transactions ADD COLUMN finished_at BIGINT",
                "ALTER TABLE apple_transactions ADD COLUMN finish_error TEXT",
                // The few consumables still to finish, without indexing every transaction.
                """
                CREATE INDEX apple_transactions_unfinished ON apple_transactions (delivered_at)
                WHERE finished_at IS NULL AND finish_error IS NULL AND product_kind = 'consumable'
                """,
            ]
            for statement in statements { try await db.raw(statement).run() }
        },
        Migration("018_account_tokens") { db, _ in
            let statements: [SQLQueryString] = [
                // Each user's own app account token, made when Storekeeper first has to tell Apple who bought something.
                "ALTER TABLE users ADD COLUMN app_account_token TEXT",
                "CREATE UNIQUE INDEX users_by_app_account_token ON users (app_account_token) WHERE app_account_token IS NOT NULL",
                // Purchases that reached a user without a token of their own: the user's token is set at Apple (Set
                // App Account Token), so renewals and notifications name the user. `set_token` is what Apple confirmed.
                """
                CREATE TABLE account_tokens (
                    original_transaction_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL, created_at BIGINT NOT NULL, set_at BIGINT, set_token TEXT, error TEXT)
                """,
                "CREATE INDEX account_tokens_due ON account_tokens (created_at) WHERE set_at IS NULL AND error IS NULL",
                "CREATE INDEX account_tokens_by_user ON account_tokens (user_id)",
                // Why Apple could not name the app install of a delivered transaction that came without its
                // appTransactionId (a legacy receipt, a transaction signed before iOS 18.4): Get App Transaction Info.
                "ALTER TABLE apple_transactions ADD COLUMN app_transaction_error TEXT",
                """
                CREATE INDEX apple_transactions_without_install ON apple_transactions (delivered_at)
                WHERE app_transaction_id IS NULL AND app_transaction_error IS NULL
                """,
            ]
            for statement in statements { try await db.raw(statement).run() }
        },
        Migration("019_commitment_plans") { db, _ in
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
        },
        Migration("020_retention_requests") { db, _ in
            // Retention Messaging requests answered, so a replayed one is refused (pruned past their freshness).
            let statements: [SQLQueryString] = [
                "CREATE TABLE retention_requests (request_id TEXT PRIMARY KEY, signed_at BIGINT NOT NULL, seen_at BIGINT NOT NULL)",
                "CREATE INDEX retention_requests_by_signed_at ON retention_requests (signed_at)",
            ]
            for statement in statements { try await db.raw(statement).run() }
        },
        Migration("021_guest_expiry") { db, _ in
            // Issued guests by age, for expiring those that never bought anything.
            try await db.raw("CREATE INDEX guest_credentials_by_created ON guest_credentials (created_at) WHERE origin = 'issued'").run()
        },
        Migration("022_retention_answers") { db, _ in
            // Storekeeper's Retention Messaging answers per subscription, so a retention offer redeemed later is
            // attributed to the answer (rule) that offered it; and the retention offers' transactions by date.
            let statements: [SQLQueryString] = [
                """
                CREATE TABLE retention_answers (original_transaction_id TEXT NOT NULL, answered_at BIGINT NOT NULL,
                    rule_id TEXT NOT NULL, kind TEXT NOT NULL, offer_id TEXT,
                    PRIMARY KEY (original_transaction_id, answered_at, rule_id))
                """,
                "CREATE INDEX apple_transactions_retention_offers ON apple_transactions (purchase_date) WHERE offer_type = 5",
            ]
            for statement in statements { try await db.raw(statement).run() }
        },
        Migration("023_team_seats") { db, _ in
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
        },
        Migration("024_analytics_counts") { db, _ in
            // Apple's Analytics Reports counts per report day, as reconciliation read them: by product, territory,
            // measure and the app's download source (the reports' new dimension), replaced when a day is read again.
            try await db.raw(
                """
                CREATE TABLE analytics_counts (day TEXT NOT NULL, app_apple_id TEXT NOT NULL, product_id TEXT NOT NULL,
                    territory TEXT NOT NULL, measure TEXT NOT NULL, download_source TEXT NOT NULL, counts BIGINT NOT NULL,
                    PRIMARY KEY (day, app_apple_id, product_id, territory, measure, download_source))
                """
            ).run()
        },
        Migration("025_refunded_seats") { db, _ in
            // Seats of a multiseat purchase Apple refunded (REFUND / SEATS): revenue takes their price back.
            try await db.raw("ALTER TABLE apple_transactions ADD COLUMN refunded_seats INTEGER").run()
        },
        Migration("026_pruning_indexes") { db, _ in
            // Pruning asks, per event or notification, whether a webhook delivery of it is still pending.
            let statements: [SQLQueryString] = [
                "CREATE INDEX webhook_queue_by_event ON webhook_queue (event_position) WHERE event_position IS NOT NULL",
                "CREATE INDEX webhook_queue_by_notification ON webhook_queue (notification_id) WHERE notification_id IS NOT NULL",
            ]
            for statement in statements { try await db.raw(statement).run() }
        },
    ]
}

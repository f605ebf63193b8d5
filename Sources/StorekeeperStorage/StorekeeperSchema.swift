import Foundation
import SQLKit
import StorekeeperCore

/// Storekeeper's tables, as an append-only list of migrations. Timestamps are epoch milliseconds (BIGINT) and ids
/// are text, so one set of statements runs on SQLite and PostgreSQL; the only dialect switch is the audit id.
public enum StorekeeperSchema {
    public static let migrations: [Migration] = [
        m001Purchases,
        m002NotificationInbox,
        m003SubscriptionLifecycle,
        m004GrantOrderAndSubscriptionReceipts,
        m005NotificationHeaders,
        m006DropNotificationsByOriginal,
        m007Hardening,
        m008MoneyAndOutbox,
        m009RevenueByDay,
        m010BacklogCounts,
        m011Reconciliation,
        m012Console,
        m013RiskSignals,
        m014ConsoleInboxList,
        m015Webhooks,
        m016EventsByTime,
        m017FinishedTransactions,
        m018AccountTokens,
        m019CommitmentPlans,
        m020RetentionRequests,
        m021GuestExpiry,
        m022RetentionAnswers,
        m023TeamSeats,
        m024AnalyticsCounts,
        m025RefundedSeats,
        m026PruningIndexes,
        m027StoreTransactions,
        m028PurchaseTokens,
        m029StoreFees,
        m030SubscriptionRollups,
    ]
}

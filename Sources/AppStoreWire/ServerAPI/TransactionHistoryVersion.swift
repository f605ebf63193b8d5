/// Which Get Transaction History endpoint to call.
public enum TransactionHistoryVersion: Sendable, Hashable {
    /// `/inApps/v1/history` (deprecated 2024; omits finished consumables).
    case v1
    /// `/inApps/v2/history`.
    case v2
}

/// Bounds on wallet numbers, so no balance or amount from outside can overflow 64-bit arithmetic anywhere.
public enum WalletLimits {
    /// The largest absolute balance a wallet may reach; a credit or debit past it is refused (`balance_limit`).
    public static let maximumBalance: Int64 = 1_000_000_000_000_000
    /// The largest absolute amount one spend or admin adjustment may move.
    public static let maximumAmount: Int64 = 1_000_000_000_000

    /// Refused: the entry would take the balance past ``maximumBalance`` (or the balance already is).
    public static func limitReached(_ detail: String) -> WalletError { .balanceLimit(detail) }
}

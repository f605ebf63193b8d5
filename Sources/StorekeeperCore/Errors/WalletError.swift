/// Why a wallet refused a movement of coins.
public enum WalletError: StorekeeperFailure, Hashable {
    /// A spend outside 1 ... the limit.
    case invalidSpend
    /// An adjustment of zero or beyond ± the limit.
    case invalidAdjustment
    /// The balance would pass ±``WalletLimits/maximumBalance``.
    case balanceLimit(String)
    /// A guest's coins and purchases merge only into a signed-in account.
    case accountRequired

    public var apiError: StorekeeperError {
        switch self {
        case .invalidSpend: .invalidInput("invalid_amount", "amount must be 1-\(WalletLimits.maximumAmount)")
        case .invalidAdjustment: .invalidInput("invalid_amount", "amount must be non-zero and at most ±\(WalletLimits.maximumAmount)")
        case .accountRequired: StorekeeperError(.notPermitted, code: "account_required", message: "a guest merges into a signed-in account")
        case .balanceLimit(let detail):
            StorekeeperError(
                .conflict,
                code: "balance_limit",
                message: "the wallet would pass its limit of ±\(WalletLimits.maximumBalance): \(detail)"
            )
        }
    }
}

/// A fault inside the writer itself: never the caller's doing, always a 500 and a log line.
public enum LedgerError: StorekeeperFailure, Hashable {
    /// A command ended without a result (its batch failed before reaching it).
    case noResult
    /// A wallet entry's cause named another user; the balance is not answered.
    case inconsistent(String)
    /// Deliveries that depend on each other did not settle.
    case deliveryDidNotSettle
    /// An event was written for a user whose sequence was not read first.
    case noEventSequence(UserID)
    /// A new guest id was unusable or issued before (random, so only by a fault).
    case guestIdReused

    public var apiError: StorekeeperError {
        switch self {
        case .noResult: StorekeeperError(.internal, code: "ledger_no_result", message: "a ledger command ended without a result")
        case .inconsistent(let what): StorekeeperError(.internal, code: "ledger_inconsistent", message: what)
        case .deliveryDidNotSettle: StorekeeperError(.internal, code: "delivery_rounds", message: "delivery did not settle; retry")
        case .noEventSequence(let user): StorekeeperError(.internal, code: "event_sequence", message: "no sequence for \(user)")
        case .guestIdReused: StorekeeperError(.internal, code: "guest_id", message: "a guest id was issued twice; ask again")
        }
    }
}

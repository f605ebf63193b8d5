import PostgresNIO
import SQLiteNIO

/// What a driver error means for the caller, decided in one place for both engines.
public enum DatabaseFailure {
    /// A unique key refused a row another transaction committed first (a race the caller can answer by reading).
    public static func isUniqueViolation(_ error: any Error) -> Bool {
        if let error = error as? PSQLError { return error.serverInfo?[.sqlState] == PostgresError.Code.uniqueViolation.raw }
        if let error = error as? SQLiteError {
            return error.reason == .constraintUniqueFailed || error.reason == .constraintPrimaryKeyFailed
        }
        return false
    }

    /// Why a whole transaction failed, as the ledger counts it: `deadlock` (PostgreSQL 40P01), `serialization`
    /// (40001), `unique` (a race with another server), `database` (the database itself), or `other`.
    public static func cause(_ error: any Error) -> String {
        if let lost = error as? SavepointLost { return cause(lost.failure) }
        if let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] {
            if state == "40P01" { return "deadlock" }
            if state == "40001" { return "serialization" }
        }
        if isUniqueViolation(error) { return "unique" }
        return isDatabaseFault(error) ? "database" : "other"
    }

    /// The database itself failed (a full disk, an I/O error, a lost connection), not the caller's data: a driver
    /// error that is neither a unique violation nor invalid input.
    public static func isDatabaseFault(_ error: any Error) -> Bool {
        if error is SavepointLost { return true }
        guard error is PSQLError || error is SQLiteError else { return false }
        return !isUniqueViolation(error) && !isInvalidInput(error)
    }

    /// The input itself cannot be stored (PostgreSQL's data exceptions, class 22: a NUL byte in text, a number out
    /// of range, bad encoding): the request is at fault, not the database.
    public static func isInvalidInput(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return false }
        return state.hasPrefix("22")
    }
}

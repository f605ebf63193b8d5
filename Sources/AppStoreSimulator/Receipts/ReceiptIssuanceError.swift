/// Why the simulator could not issue a receipt or load its receipt-signing identity.
public enum ReceiptIssuanceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The persisted keys or certificates are unreadable or do not belong together.
    case invalidSigningIdentity(String)
    /// A transaction carries a value the receipt format cannot hold.
    case invalidTransaction(String)

    public var description: String {
        switch self {
        case .invalidSigningIdentity(let reason): "invalid receipt-signing identity: \(reason)"
        case .invalidTransaction(let reason): "transaction cannot be put in a receipt: \(reason)"
        }
    }
}

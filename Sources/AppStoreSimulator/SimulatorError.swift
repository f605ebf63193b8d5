/// Why the simulated App Store refused an action, as a device or a test would see it.
public enum SimulatorError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidCatalog(String)
    case unknownProduct(String)
    case unknownAccount(String)
    case unknownTransaction(String)
    case notAllowed(String)

    public var description: String {
        switch self {
        case .invalidCatalog(let reason): "invalid catalog: \(reason)"
        case .unknownProduct(let id): "unknown product \(id)"
        case .unknownAccount(let id): "unknown Apple account \(id)"
        case .unknownTransaction(let id): "unknown transaction \(id)"
        case .notAllowed(let reason): "not allowed: \(reason)"
        }
    }
}

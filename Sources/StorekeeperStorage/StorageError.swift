/// Storage failures a caller can act on, with nothing about drivers or HTTP in them.
public enum StorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The configuration cannot work (a bad URL, say).
    case configuration(String)
    /// A migration failed; nothing after it was applied.
    case migration(name: String, reason: String)
    /// A stored value this version cannot read (written by something else): the operation stops rather than guess.
    case unreadable(String)

    public var description: String {
        switch self {
        case .configuration(let reason): "storage configuration: \(reason)"
        case .migration(let name, let reason): "migration \(name) failed: \(reason)"
        case .unreadable(let what): "unreadable stored value: \(what)"
        }
    }
}

import StorekeeperCore

/// What an admin key (or a console operator's role) may do. Each admin operation names the one it needs in
/// openapi.yaml's `security` requirement; `admin` holds them all.
public enum AdminScope: String, Sendable, Hashable, CaseIterable, Comparable {
    case admin
    case usersRead = "users:read"
    case usersWrite = "users:write"
    case walletWrite = "wallet:write"
    case catalogRead = "catalog:read"
    case catalogWrite = "catalog:write"
    case reportsRead = "reports:read"
    /// What reports are computed with: the analytics' exchange rates, a rebuild of the rollups.
    case reportsWrite = "reports:write"
    case eventsRead = "events:read"
    case webhooksWrite = "webhooks:write"
    case notificationsRead = "notifications:read"
    case notificationsWrite = "notifications:write"
    case jobsRun = "jobs:run"

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// The scope the admin operation at `METHOD path` declares; a missing or unknown one is a wiring mistake the
    /// server refuses to start with, so an operation added without a scope is never open to every key.
    static func required(method: String, path: String) throws -> AdminScope {
        let key = "\(method) \(path)"
        guard let declared = declared[key] else {
            throw StorekeeperError(.internal, code: "undeclared_scope", message: "openapi.yaml names no adminKey scope for \(key)")
        }
        guard let scope = AdminScope(rawValue: declared) else {
            throw StorekeeperError(.internal, code: "undeclared_scope", message: "\(key) names an unknown scope \(declared)")
        }
        return scope
    }
}

/// An authenticated admin caller: a key's name (or a console operator's) and the scopes it holds.
public struct AdminCaller: Sendable, Hashable {
    public var name: String
    public var scopes: Set<AdminScope>

    public init(name: String, scopes: Set<AdminScope>) {
        self.name = name
        self.scopes = scopes
    }

    /// Whether the caller may use an operation needing `scope`.
    public func holds(_ scope: AdminScope) -> Bool { scopes.contains(.admin) || scopes.contains(scope) }
}

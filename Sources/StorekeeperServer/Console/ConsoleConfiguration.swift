import Crypto
import Foundation

/// Who may sign in to the operator console at `/admin`, with which role, and for how long a session lasts.
/// Operator secrets are held as SHA-256 digests and never logged.
public struct ConsoleConfiguration: Sendable, CustomStringConvertible {
    /// One operator: a name shown in the audit, a role, and the digest of the secret they sign in with.
    public struct Operator: Sendable, Hashable {
        public var name: String
        public var role: ConsoleRole
        let secretDigest: [UInt8]

        public init(name: String, role: ConsoleRole, secret: String) {
            self.name = name
            self.role = role
            secretDigest = Array(SHA256.hash(data: Data(secret.utf8)))
        }
    }

    public var operators: [Operator]
    /// How long a session lasts from sign-in.
    public var sessionLifetime: Duration
    /// Whether cookies are marked `Secure` (the console is served behind TLS).
    public var secureCookies: Bool

    public init(operators: [Operator] = [], sessionLifetime: Duration = .seconds(8 * 3_600), secureCookies: Bool = false) {
        self.operators = operators
        self.sessionLifetime = sessionLifetime
        self.secureCookies = secureCookies
    }

    /// The operator whose name and secret these are, compared in constant time over the digests.
    func signIn(name: String, secret: String) -> Operator? {
        let digest = Array(SHA256.hash(data: Data(secret.utf8)))
        var found: Operator?
        for candidate in operators {
            var difference: UInt8 = 0
            for (a, b) in zip(candidate.secretDigest, digest) { difference |= a ^ b }
            // Names compare byte for byte.
            if difference == 0 && Array(candidate.name.utf8) == Array(name.utf8) { found = candidate }
        }
        return found
    }

    /// Reads `console.*`: `operators` (`name:role:secret` entries, role `viewer`, `support` or `admin`, secrets of 16+
    /// characters; secret), `sessionMinutes` (480; 5-10080), `secureCookies` (false: inferred from the proxy's
    /// `X-Forwarded-Proto` / `Forwarded`; true marks every cookie Secure).
    init(reader: StrictConfigReader) throws {
        var operators: [Operator] = []
        for item in try reader.list("operators", isSecret: true) ?? [] {
            let parts = item.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3, !parts[0].isEmpty, parts[0].utf8.count <= 64,
                parts[0].utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), let role = ConsoleRole(rawValue: parts[1]), parts[2].count >= 16
            else {
                throw ConfigurationError.invalid(
                    "console.operators entries must be name:role:secret with a role of viewer, support or admin and a secret of 16+ characters"
                )
            }
            guard !operators.contains(where: { $0.name == parts[0] }) else {
                throw ConfigurationError.invalid("console.operators names \(parts[0]) twice")
            }
            operators.append(Operator(name: parts[0], role: role, secret: parts[2]))
        }
        self.init(
            operators: operators,
            sessionLifetime: .seconds(60 * (try reader.int("sessionMinutes", in: 5...10_080, default: 480))),
            secureCookies: try reader.bool("secureCookies", default: false)
        )
    }

    public var description: String {
        "ConsoleConfiguration(operators: \(operators.map { "\($0.name) (\($0.role.rawValue))" }), sessionLifetime: \(sessionLifetime))"
    }
}

/// What an operator may do, as admin API scopes: viewers read, support also acts on customers (entitlements, wallets,
/// purchases to assign, notifications to retry), admins hold every scope (the catalog, webhooks, jobs).
public enum ConsoleRole: String, Sendable, Hashable, Comparable, CaseIterable {
    case viewer, support, admin

    /// The admin scopes the role holds; the console checks its pages and forms against them, as the admin API does.
    public var scopes: Set<AdminScope> {
        let reads: Set<AdminScope> = [.usersRead, .catalogRead, .reportsRead, .eventsRead, .notificationsRead]
        switch self {
        case .viewer: return reads
        case .support: return reads.union([.usersWrite, .walletWrite, .notificationsWrite])
        case .admin: return [.admin]
        }
    }

    func holds(_ scope: AdminScope) -> Bool { scopes.contains(.admin) || scopes.contains(scope) }

    var rank: Int {
        switch self {
        case .viewer: 0
        case .support: 1
        case .admin: 2
        }
    }

    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
}

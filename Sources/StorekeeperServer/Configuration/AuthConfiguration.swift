import Configuration
import Foundation

/// How callers prove who they are. Keys and secrets are held only here and never logged or returned.
public struct AuthConfiguration: Sendable, CustomStringConvertible {
    /// Shared secret for HS256 user tokens issued by the app's backend.
    public var jwtHS256Secret: String?
    /// PEM public key for ES256 user tokens.
    public var jwtES256PublicKeyPEM: String?
    /// Required `iss` and `aud` of user tokens.
    public var jwtIssuer: String?
    public var jwtAudience: String?
    /// Server-to-server API keys: name → key.
    public var apiKeys: [String: String]
    /// Admin API keys: name → key.
    public var adminKeys: [String: String]
    /// The scopes of admin keys, by key name; a key not named here holds `admin` (every scope).
    public var adminKeyScopes: [String: Set<AdminScope>]
    /// Whether guests (a server-issued credential, no account) may buy: App Review requires it.
    public var allowGuests: Bool
    /// Whether guests from before credentials may claim one with Apple-signed proof (`POST /v1/guests/claim`).
    public var allowLegacyGuestClaims: Bool
    /// Allowed clock skew for `exp` / `nbf`.
    public var leeway: Duration
    /// PEM P-256 private key that signs answers to apps that send a nonce (``AnswerSigner``); none: unsigned.
    public var answerSigningKeyPEM: String?
    /// The bearer token `/metrics` asks for (Prometheus' `authorization: {credentials: …}`); none: open.
    public var metricsToken: String?
    /// Guests `POST /v1/guests` issues per client address per hour; 0: no limit.
    public var guestsPerAddressPerHour: Int = 30
    /// How long an issued guest that never did anything (no order, purchase, grant or wallet) is kept; nil: for good.
    public var idleGuestLifetime: Duration? = .seconds(30 * 86_400)

    public init(
        jwtHS256Secret: String? = nil,
        jwtES256PublicKeyPEM: String? = nil,
        jwtIssuer: String? = nil,
        jwtAudience: String? = nil,
        apiKeys: [String: String] = [:],
        adminKeys: [String: String] = [:],
        adminKeyScopes: [String: Set<AdminScope>] = [:],
        allowGuests: Bool = true,
        allowLegacyGuestClaims: Bool = true,
        leeway: Duration = .seconds(60),
        answerSigningKeyPEM: String? = nil,
        metricsToken: String? = nil
    ) {
        self.answerSigningKeyPEM = answerSigningKeyPEM
        self.metricsToken = metricsToken
        self.allowLegacyGuestClaims = allowLegacyGuestClaims
        self.jwtHS256Secret = jwtHS256Secret
        self.jwtES256PublicKeyPEM = jwtES256PublicKeyPEM
        self.jwtIssuer = jwtIssuer
        self.jwtAudience = jwtAudience
        self.apiKeys = apiKeys
        self.adminKeys = adminKeys
        self.adminKeyScopes = adminKeyScopes
        self.allowGuests = allowGuests
        self.leeway = leeway
    }

    /// Reads `auth.*`: `jwt.hs256Secret` (secret), `jwt.es256PublicKey` (PEM file path), `jwt.issuer`,
    /// `jwt.audience`, `apiKeys` and `adminKeys` (`name:key` pairs, an array or one comma-separated string; secret),
    /// `adminKeyScopes` (`name:scope+scope` entries naming an admin key's scopes; unnamed keys hold `admin`),
    /// `guests` (true), `legacyGuestClaims` (true), `answerSigningKey` (PEM file path of the P-256 key that signs
    /// answers), `metricsToken` (secret, 16+ characters: the bearer token `/metrics` asks for),
    /// `guestsPerAddressPerHour` (30; 0: no limit), `guestLifetimeDays` (30: issued guests that never did anything are
    /// deleted after it; 0: kept for good). Environment form:
    /// `AUTH_JWT_HS256SECRET`, `AUTH_ADMIN_KEYS`, `AUTH_ANSWER_SIGNING_KEY`, `AUTH_METRICS_TOKEN`, ...
    init(reader: StrictConfigReader) throws {
        func pairs(_ key: String) throws -> [String: String] {
            var result: [String: String] = [:]
            for item in try reader.list(key, isSecret: true) ?? [] {
                let parts = item.split(separator: ":", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty, parts[1].count >= 16 else {
                    throw ConfigurationError.invalid("auth.\(key) entries must be name:key with a key of 16+ characters")
                }
                guard result.updateValue(parts[1], forKey: parts[0]) == nil else {
                    throw ConfigurationError.invalid("auth.\(key) names \(parts[0]) twice")
                }
            }
            return result
        }
        func file(_ key: String) throws -> String? {
            guard let path = try reader.string(key) else { return nil }
            do {
                return try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ConfigurationError.invalid("auth.\(key): cannot read \(path)")
            }
        }
        let pem = try file("jwt.es256PublicKey")
        let adminKeys = try pairs("adminKeys")
        var scopes: [String: Set<AdminScope>] = [:]
        for item in try reader.list("adminKeyScopes") ?? [] {
            let parts = item.split(separator: ":", maxSplits: 1).map(String.init)
            let named = parts.count == 2 ? parts[1].split(whereSeparator: { $0 == "+" || $0 == " " }) : []
            let parsed = named.compactMap { AdminScope(rawValue: String($0)) }
            guard parts.count == 2, !named.isEmpty, parsed.count == named.count else {
                throw ConfigurationError.invalid(
                    "auth.adminKeyScopes entries must be name:scope+scope with scopes among \(AdminScope.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            guard adminKeys[parts[0]] != nil else {
                throw ConfigurationError.invalid("auth.adminKeyScopes names \(parts[0]), which auth.adminKeys does not")
            }
            guard scopes.updateValue(Set(parsed), forKey: parts[0]) == nil else {
                throw ConfigurationError.invalid("auth.adminKeyScopes names \(parts[0]) twice")
            }
        }
        self.init(
            jwtHS256Secret: try reader.string("jwt.hs256Secret", isSecret: true),
            jwtES256PublicKeyPEM: pem,
            jwtIssuer: try reader.string("jwt.issuer"),
            jwtAudience: try reader.string("jwt.audience"),
            apiKeys: try pairs("apiKeys"),
            adminKeys: adminKeys,
            adminKeyScopes: scopes,
            allowGuests: try reader.bool("guests", default: true),
            allowLegacyGuestClaims: try reader.bool("legacyGuestClaims", default: true),
            answerSigningKeyPEM: try file("answerSigningKey"),
            metricsToken: try reader.string("metricsToken", isSecret: true)
        )
        guestsPerAddressPerHour = try reader.int("guestsPerAddressPerHour", in: 0...1_000_000, default: 30)
        let lifetimeDays = try reader.int("guestLifetimeDays", in: 0...3_650, default: 30)
        idleGuestLifetime = lifetimeDays == 0 ? nil : .seconds(lifetimeDays * 86_400)
        if let token = metricsToken, token.utf8.count < 16 || token.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            throw ConfigurationError.invalid("auth.metricsToken must be 16+ printable characters without spaces")
        }
        if let secret = jwtHS256Secret, secret.utf8.count < 32 {
            throw ConfigurationError.invalid("auth.jwt.hs256Secret must be at least 32 bytes")
        }
    }

    public var description: String {
        "AuthConfiguration(hs256: \(jwtHS256Secret == nil ? "off" : "on"), es256: \(jwtES256PublicKeyPEM == nil ? "off" : "on"), "
            + "apiKeys: \(apiKeys.keys.sorted()), adminKeys: \(adminKeys.keys.sorted().map { "\($0) (\(scopes(ofAdminKey: $0).sorted().map(\.rawValue).joined(separator: "+")))" }), guests: \(allowGuests), "
            + "signed answers: \(answerSigningKeyPEM == nil ? "off" : "on"), metrics: \(metricsToken == nil ? "open" : "token"))"
    }

    /// The scopes the admin key `name` holds.
    public func scopes(ofAdminKey name: String) -> Set<AdminScope> { adminKeyScopes[name] ?? [.admin] }
}

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
    /// Whether guests (a device id, no account) may buy: App Review requires it.
    public var allowGuests: Bool
    /// Allowed clock skew for `exp` / `nbf`.
    public var leeway: Duration

    public init(
        jwtHS256Secret: String? = nil, jwtES256PublicKeyPEM: String? = nil, jwtIssuer: String? = nil,
        jwtAudience: String? = nil, apiKeys: [String: String] = [:], adminKeys: [String: String] = [:],
        allowGuests: Bool = true, leeway: Duration = .seconds(60)
    ) {
        self.jwtHS256Secret = jwtHS256Secret
        self.jwtES256PublicKeyPEM = jwtES256PublicKeyPEM
        self.jwtIssuer = jwtIssuer
        self.jwtAudience = jwtAudience
        self.apiKeys = apiKeys
        self.adminKeys = adminKeys
        self.allowGuests = allowGuests
        self.leeway = leeway
    }

    /// Reads `auth.*`: `jwt.hs256Secret` (secret), `jwt.es256PublicKey` (PEM file path), `jwt.issuer`,
    /// `jwt.audience`, `apiKeys` and `adminKeys` (comma-separated `name:key` pairs, secret), `guests` (true).
    /// Environment form: `AUTH_JWT_HS256_SECRET`, `AUTH_ADMIN_KEYS`, ...
    public init(reader: ConfigReader) throws {
        func pairs(_ key: String) throws -> [String: String] {
            var result: [String: String] = [:]
            for item in reader.stringArray(forKey: ConfigKey(key), isSecret: true, default: []) where !item.isEmpty {
                let parts = item.split(separator: ":", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty, parts[1].count >= 16 else {
                    throw ConfigurationError.invalid("auth.\(key) entries must be name:key with a key of 16+ characters")
                }
                result[parts[0]] = parts[1]
            }
            return result
        }
        var pem: String?
        if let path = reader.string(forKey: "jwt.es256PublicKey") {
            pem = try String(contentsOfFile: path, encoding: .utf8)
        }
        self.init(
            jwtHS256Secret: reader.string(forKey: "jwt.hs256Secret", isSecret: true), jwtES256PublicKeyPEM: pem,
            jwtIssuer: reader.string(forKey: "jwt.issuer"), jwtAudience: reader.string(forKey: "jwt.audience"),
            apiKeys: try pairs("apiKeys"), adminKeys: try pairs("adminKeys"),
            allowGuests: reader.bool(forKey: "guests", default: true))
        if let secret = jwtHS256Secret, secret.utf8.count < 32 {
            throw ConfigurationError.invalid("auth.jwt.hs256Secret must be at least 32 bytes")
        }
    }

    public var description: String {
        "AuthConfiguration(hs256: \(jwtHS256Secret == nil ? "off" : "on"), es256: \(jwtES256PublicKeyPEM == nil ? "off" : "on"), "
            + "apiKeys: \(apiKeys.keys.sorted()), adminKeys: \(adminKeys.keys.sorted()), guests: \(allowGuests))"
    }
}

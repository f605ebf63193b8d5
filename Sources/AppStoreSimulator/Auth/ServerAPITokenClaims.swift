import Foundation

/// The identity an App Store Server API bearer token proved, once ``ServerAPITokenVerifier`` accepted it.
public struct ServerAPITokenClaims: Sendable, Hashable {
    /// The In-App Purchase key that signed (header `kid`).
    public var keyId: String
    /// The App Store Connect issuer id (`iss`).
    public var issuerId: String
    /// The app's bundle id (`bid`).
    public var bundleId: String
    /// `iat`; `nil` when the token has none (Apple accepts that, and its Python library sends none).
    public var issuedAt: Date?
    /// `exp`.
    public var expiresAt: Date

    public init(keyId: String, issuerId: String, bundleId: String, issuedAt: Date?, expiresAt: Date) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }
}

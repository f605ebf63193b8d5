/// Why an ``AppStoreAPITokenGenerator`` could not be created or could not sign.
public enum AppStoreAPITokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key is not a P-256 private key in PEM (PKCS#8 `.p8` or SEC1). The key itself is never included.
    case invalidPrivateKey
    /// The lifetime is not in 1...3600 seconds (Apple rejects tokens valid for more than 60 minutes).
    case invalidTokenLifetime(seconds: Int)
    /// Key id, issuer id or bundle id is empty.
    case missingIdentity(String)

    public var description: String {
        switch self {
        case .invalidPrivateKey: "the In-App Purchase key is not a P-256 private key in PEM form"
        case .invalidTokenLifetime(let seconds): "token lifetime \(seconds)s is outside 1...3600s"
        case .missingIdentity(let field): "\(field) must not be empty"
        }
    }
}

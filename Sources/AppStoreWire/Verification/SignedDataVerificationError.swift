/// Why a piece of App Store signed data was refused, in classes a caller can act on.
///
/// Every case carries a message that names what failed, and every case is final for that input: verification is
/// offline (pinned roots, no revocation lookups), so nothing about it changes by trying again.
public enum SignedDataVerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not a well-formed compact JWS of the expected shape (segments, base64url, JSON, `alg`, `x5c`, size).
    case malformed(String)
    /// The certificate chain is not valid up to a pinned root at the validation time, or lacks Apple's markers.
    case invalidCertificate(String)
    /// The signature does not match the signed bytes and the leaf certificate's key.
    case invalidSignature(String)
    /// The payload belongs to another app (bundle id or App Apple ID).
    case wrongApp(String)
    /// The payload's environment is not one this verifier accepts.
    case wrongEnvironment(String)

    /// A short, stable identifier for logs, metrics and JSON error bodies.
    public var code: String {
        switch self {
        case .malformed: "malformed"
        case .invalidCertificate: "invalid_certificate"
        case .invalidSignature: "invalid_signature"
        case .wrongApp: "wrong_app"
        case .wrongEnvironment: "wrong_environment"
        }
    }

    /// The human-readable reason.
    public var message: String {
        switch self {
        case .malformed(let m), .invalidCertificate(let m), .invalidSignature(let m), .wrongApp(let m),
            .wrongEnvironment(let m):
            m
        }
    }

    public var description: String { "\(code): \(message)" }
}

/// Why an app receipt was rejected by ``AppReceiptParser`` or ``AppReceiptSignatureVerifier``.
///
/// Every failure on untrusted input surfaces as one of these cases; the parser never traps on hostile bytes.
public enum AppReceiptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The receipt (decoded bytes, or base64 text) is larger than the configured limit.
    case tooLarge(size: Int, limit: Int)
    /// The receipt text is not valid base64.
    case invalidBase64
    /// The bytes are not well-formed BER/DER: truncated, nested too deeply, impossible lengths, wrong tags.
    case malformed(reason: String)
    /// The outer `ContentInfo` is not PKCS#7 SignedData, or its encapsulated content is not PKCS#7 data.
    case wrongContentType(String)
    /// A documented attribute carries a value of the wrong ASN.1 type or an unreadable value.
    case invalidAttribute(type: Int, reason: String)
    /// The signer's certificate chain does not lead to a supplied root at the validation time.
    case untrustedCertificateChain(reason: String)
    /// The signature structure is unusable or the signature does not match the content.
    case invalidSignature(reason: String)
    /// The receipt is genuine but belongs to another app.
    case wrongApp(reason: String)

    public var description: String {
        switch self {
        case .tooLarge(let size, let limit):
            return "app receipt too large: \(size) bytes (limit \(limit))"
        case .invalidBase64:
            return "app receipt is not valid base64"
        case .malformed(let reason):
            return "malformed app receipt: \(reason)"
        case .wrongContentType(let type):
            return "app receipt has the wrong content type: \(type)"
        case .invalidAttribute(let type, let reason):
            return "app receipt attribute \(type) is invalid: \(reason)"
        case .untrustedCertificateChain(let reason):
            return "app receipt signer is not trusted: \(reason)"
        case .invalidSignature(let reason):
            return "app receipt signature is invalid: \(reason)"
        case .wrongApp(let reason):
            return "app receipt belongs to another app: \(reason)"
        }
    }
}

/// Why an iOS 6-style transaction receipt was rejected by ``TransactionReceipt``.
public enum TransactionReceiptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The receipt text is larger than the configured limit.
    case tooLarge(size: Int, limit: Int)
    /// The receipt, or its `purchase-info`, is not valid base64.
    case invalidBase64
    /// The decoded text is not a flat old-style property list of strings.
    case malformed(reason: String)
    /// A required key is absent.
    case missingField(String)

    public var description: String {
        switch self {
        case .tooLarge(let size, let limit): return "transaction receipt too large: \(size) bytes (limit \(limit))"
        case .invalidBase64: return "transaction receipt is not valid base64"
        case .malformed(let reason): return "malformed transaction receipt: \(reason)"
        case .missingField(let key): return "transaction receipt has no \"\(key)\""
        }
    }
}

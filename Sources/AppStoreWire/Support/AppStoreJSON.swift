import Foundation

/// JSON coding conventions for Apple's App Store formats.
///
/// Signed payloads and App Store Server API bodies carry dates as UNIX epoch milliseconds (sometimes with a
/// fraction, as StoreKit Testing in Xcode writes them); these coders map them to and from `Date`.
/// Legacy `verifyReceipt` bodies carry everything as strings and do not use `Date` at all.
public enum AppStoreJSON {
    /// A decoder for signed payloads and Server API bodies (dates in epoch milliseconds).
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }

    /// An encoder matching ``makeDecoder()``: dates as epoch milliseconds, keys sorted for stable output.
    public static func makeEncoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Decodes a signed payload's JSON: a fast strict decoder for the plain JSON Apple sends, and `JSONDecoder`
    /// (with ``makeDecoder()``'s conventions) for anything outside it, so the result is always `JSONDecoder`'s.
    public static func decodePayload<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        if let fast = try? bytes.withUnsafeBufferPointer({ try FastJSONDecoder.decode(T.self, from: $0) }) {
            return fast
        }
        return try makeDecoder().decode(T.self, from: Data(bytes))
    }
}

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
}

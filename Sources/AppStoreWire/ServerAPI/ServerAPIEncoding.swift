import Foundation

// Small wire-format helpers for the Server API, kept internal and prefixed so they cannot collide with
// helpers elsewhere in the module.
enum ServerAPIEncoding {
    /// Whole epoch milliseconds: Apple rejects fractional timestamps in requests.
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }

    // RFC 3986 unreserved characters; everything else is escaped, so opaque tokens with `+`, `/` or `=`
    // survive the trip.
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    )

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    static func query(_ items: [URLQueryItem]) -> String {
        items.map { "\(percentEncoded($0.name))=\(percentEncoded($0.value ?? ""))" }.joined(separator: "&")
    }
}

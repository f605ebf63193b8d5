import Foundation
import SQLKit

/// A signed transaction as `store_transactions.signed_data` keeps it: the JWS with its header — the x5c chain,
/// identical on every transaction Apple signs — replaced by a reference to a `notification_headers` row.
///
/// A stored text is `0x01 <sha256 of the header> "." payload "." signature`; anything else is a JWS kept as
/// received. The chain is most of a transaction's 4–5 KB, so each delivery writes about a fifth of that.
public enum StoredSignedData {
    /// Header segments shorter than this stay in place: a reference costs 65 bytes.
    private static let minimumHeaderLength = 200

    /// The texts to store for `jws`, in order, and the headers they refer to.
    static func compact(_ jws: [String?]) -> (texts: [String?], headers: [String: String]) {
        let digests = HeaderDigestCache(capacity: 4)
        var headers: [String: String] = [:]
        let texts = jws.map { jws -> String? in
            guard var jws else { return nil }
            let compacted = jws.withUTF8 { bytes -> String? in
                guard let dot = WordScan.index(of: UInt8(ascii: "."), in: bytes, from: 0), dot >= minimumHeaderLength,
                    !WordScan.containsByte(below: 4, in: UnsafeBufferPointer(rebasing: bytes[dot...]))
                else { return nil }
                let header = UnsafeBufferPointer(rebasing: bytes[..<dot])
                let digest: String
                // A known header is free of marker bytes; any other is scanned.
                if let known = digests.knownHeader(at: bytes), known.length == dot {
                    digest = known.digest
                } else {
                    guard !WordScan.containsByte(below: 4, in: header) else { return nil }
                    digest = digests.digest(of: header)
                }
                if headers[digest] == nil { headers[digest] = String(decoding: header, as: UTF8.self) }
                var out: [UInt8] = [0x01]
                out.reserveCapacity(65 + bytes.count - dot)
                out.append(contentsOf: digest.utf8)
                out.append(contentsOf: bytes[dot...])
                return String(decoding: out, as: UTF8.self)
            }
            return compacted ?? jws
        }
        return (texts, headers)
    }

    /// Compacts `jws` and stores the headers the texts refer to, in the caller's transaction.
    static func prepare(_ jws: [String?], on db: any SQLDatabase) async throws -> [String?] {
        let compacted = compact(jws)
        try await NotificationHeadersTable.insert(compacted.headers, on: db)
        return compacted.texts
    }

    /// The JWS exactly as it was received, from a stored text.
    public static func expand(_ text: String, on db: any SQLDatabase) async throws -> String {
        let digests = CompactNotificationBody.references(in: text)
        guard !digests.isEmpty else { return text }
        return try CompactNotificationBody.expand(text, headers: try await NotificationHeadersTable.find(digests, on: db))
    }
}

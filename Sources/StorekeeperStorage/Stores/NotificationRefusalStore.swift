import Foundation
import SQLKit
import StorekeeperCore

/// Webhook bodies Storekeeper refused (unverifiable, malformed, another app's, a wrong shared secret), kept as
/// counts rather than bodies: one row per source address, reason and format with the latest body's SHA-256 and a
/// short redacted prefix (the ledger counts them, bounded: see `Ledger.countRefusal`).
public struct NotificationRefusalStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// One counted kind of refusal.
    public struct Refusal: Sendable, Hashable {
        public var source: String
        public var reason: String
        public var format: String
        public var count: Int64
        /// SHA-256 (hex) and prefix of the latest refused body of this kind.
        public var digest: String
        public var prefix: String
        public var firstSeen: Date
        public var lastSeen: Date
    }

    /// The counted refusals, most recent first.
    public func list(limit: Int = 100) async throws -> [Refusal] {
        try await provider.withSession { db in
            try await db.raw(
                """
                SELECT source, reason, format, count, digest, prefix, first_seen, last_seen FROM notification_refusals
                ORDER BY last_seen DESC, source, reason, format LIMIT \(bind: limit)
                """
            ).all().map { row in
                Refusal(
                    source: try row.decode(column: "source", as: String.self),
                    reason: try row.decode(column: "reason", as: String.self),
                    format: try row.decode(column: "format", as: String.self),
                    count: try row.decode(column: "count", as: Int64.self),
                    digest: try row.decode(column: "digest", as: String.self),
                    prefix: try row.decode(column: "prefix", as: String.self),
                    firstSeen: Date(millis: try row.decode(column: "first_seen", as: Int64.self)),
                    lastSeen: Date(millis: try row.decode(column: "last_seen", as: Int64.self))
                )
            }
        }
    }
}

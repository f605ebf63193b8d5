import Crypto
import Foundation
import SQLKit
import StorekeeperCore

/// Webhook bodies Storekeeper refused (unverifiable, malformed, another app's, a wrong shared secret), kept as
/// counts rather than bodies: one row per source address, reason and format with the latest body's SHA-256 and a
/// short redacted prefix. Anyone can post to a webhook, so what a refusal stores is bounded: at most
/// ``maximumSources`` rows, after which new sources are counted together under `other`.
public struct NotificationRefusalStore: Sendable {
    public static let maximumSources = 1_000
    public static let overflowSource = "other"

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

    /// Counts one refused body.
    public func record(source: String, reason: String, format: String, body: String, now: Date = Date()) async throws {
        let digest = SHA256.hash(data: Data(body.utf8)).map { String(format: "%02x", $0) }.joined()
        let prefix = NotificationRedaction.prefix(of: body)
        let source = String(source.prefix(64))
        let reason = String(reason.prefix(64))
        try await provider.withTransaction { db in
            let updated = try await Self.bump(source: source, reason: reason, format: format, digest: digest, prefix: prefix, now: now, on: db)
            guard !updated else { return }
            let rows = try await db.raw("SELECT COUNT(*) AS n FROM notification_refusals").first()?.decode(column: "n", as: Int64.self) ?? 0
            let kept = rows < Self.maximumSources ? source : Self.overflowSource
            try await db.raw(
                """
                INSERT INTO notification_refusals (source, reason, format, count, digest, prefix, first_seen, last_seen)
                VALUES (\(bind: kept), \(bind: reason), \(bind: format), 1, \(bind: digest), \(bind: prefix), \(bind: now.millis), \(bind: now.millis))
                ON CONFLICT (source, reason, format) DO UPDATE SET count = notification_refusals.count + 1,
                    digest = excluded.digest, prefix = excluded.prefix, last_seen = excluded.last_seen
                """
            ).run()
        }
    }

    private static func bump(
        source: String, reason: String, format: String, digest: String, prefix: String, now: Date, on db: any SQLDatabase
    ) async throws -> Bool {
        try await db.raw(
            """
            UPDATE notification_refusals SET count = count + 1, digest = \(bind: digest), prefix = \(bind: prefix),
                last_seen = \(bind: now.millis)
            WHERE source = \(bind: source) AND reason = \(bind: reason) AND format = \(bind: format)
            RETURNING count
            """
        ).first() != nil
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
                    source: try row.decode(column: "source", as: String.self), reason: try row.decode(column: "reason", as: String.self),
                    format: try row.decode(column: "format", as: String.self), count: try row.decode(column: "count", as: Int64.self),
                    digest: try row.decode(column: "digest", as: String.self), prefix: try row.decode(column: "prefix", as: String.self),
                    firstSeen: Date(millis: try row.decode(column: "first_seen", as: Int64.self)),
                    lastSeen: Date(millis: try row.decode(column: "last_seen", as: Int64.self)))
            }
        }
    }
}

import Crypto
import Foundation
import SQLKit
import StorekeeperCore
import Synchronization

/// Guest credentials: a guest is a random id plus a secret of 256 bits the server issues once. The credential the
/// client keeps is `<guest id>.<secret>`; only the secret's SHA-256 is stored, so a database copy lets nobody act
/// as a guest. A guest id alone proves nothing.
public final class GuestStore: Sendable {
    let provider: any DatabaseProvider
    /// Credentials verified before (their digest → user): credentials never change, so a hit needs no query.
    private let verified = Mutex<[SHA256.Digest: UserID]>([:])
    private static let cacheLimit = 10_000

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// A new guest and its credential.
    public struct Issued: Sendable, Hashable {
        public var user: UserID
        public var token: String
    }

    /// Issues a new guest (App Review's "buy without signing in": the app asks for one at first launch).
    public func issue(now: Date = Date()) async throws -> Issued {
        let id = Self.randomBase64URL(bytes: 16)
        let secret = Self.randomBase64URL(bytes: 32)
        guard let user = UserID.guest(id: id) else { throw StorekeeperError(.internal, code: "guest_id", message: "bad guest id") }
        try await provider.withTransaction { db in
            try await UserStore.ensure(user, now: now, on: db)
            try await db.raw(
                """
                INSERT INTO guest_credentials (guest_id, digest, origin, created_at)
                VALUES (\(bind: id), \(bind: Self.digest(secret)), 'issued', \(bind: now.millis))
                """
            ).run()
        }
        return Issued(user: user, token: id + "." + secret)
    }

    /// The guest a credential proves, or nil when it proves nothing.
    public func verify(_ token: String) async throws -> UserID? {
        let tokenDigest = SHA256.hash(data: Data(token.utf8))
        if let known = verified.withLock({ $0[tokenDigest] }) { return known }
        guard token.utf8.count <= 300, let dot = token.lastIndex(of: "."), let user = UserID.guest(id: String(token[..<dot])) else {
            return nil
        }
        let secret = String(token[token.index(after: dot)...])
        guard secret.utf8.count >= 22, let guestId = user.guestId else { return nil }
        let stored = try await provider.withSession { db in
            try await db.raw("SELECT digest FROM guest_credentials WHERE guest_id = \(bind: guestId)").first()?
                .decode(column: "digest", as: String.self)
        }
        guard let stored, Self.equalDigests(stored, Self.digest(secret)) else { return nil }
        verified.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[tokenDigest] = user
        }
        return user
    }

    /// The outcome of a legacy guest's claim.
    public enum Claim: Sendable, Hashable {
        case issued(Issued)
        /// The guest has a credential already (issued, or claimed before).
        case alreadyClaimed
        /// None of the transactions Apple vouched for belongs to this guest.
        case notProved
    }

    /// Issues a credential to a guest from before credentials (keyed by its client-chosen device id) when Apple
    /// vouched for a transaction bound to it: the device still holds its StoreKit history, an impostor who only
    /// knows the device id does not. Once only.
    public func claimLegacy(_ guest: UserID, originalTransactionIds: Set<String>, now: Date = Date()) async throws -> Claim {
        guard let guestId = guest.guestId, !originalTransactionIds.isEmpty else { return .notProved }
        let secret = Self.randomBase64URL(bytes: 32)
        return try await provider.withTransaction { db in
            let owned = try await db.raw(
                """
                SELECT original_transaction_id FROM transaction_owners
                WHERE user_id = \(bind: guest.rawValue) AND original_transaction_id IN (\(binds: originalTransactionIds.sorted()))
                LIMIT 1
                """
            ).first()
            guard owned != nil else { return .notProved }
            let inserted = try await db.raw(
                """
                INSERT INTO guest_credentials (guest_id, digest, origin, created_at)
                VALUES (\(bind: guestId), \(bind: Self.digest(secret)), 'claimed', \(bind: now.millis))
                ON CONFLICT (guest_id) DO NOTHING RETURNING guest_id
                """
            ).first()
            guard inserted != nil else { return .alreadyClaimed }
            try await AuditStore.append(
                AuditEntry(
                    action: "guest.claimed", user: guest, subject: guest.rawValue, cause: "guest:claim",
                    detail: "a credential was issued on proof of an Apple-signed transaction of this guest", createdAt: now),
                on: db)
            return .issued(Issued(user: guest, token: guestId + "." + secret))
        }
    }

    static func digest(_ secret: String) -> String {
        SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Compares two hex digests without stopping at the first difference.
    static func equalDigests(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    static func randomBase64URL(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let data = Data((0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

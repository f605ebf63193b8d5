import AppStoreWire
import Crypto
import Foundation
import SQLKit
import StorekeeperCore
import Synchronization

/// Verifies guest credentials: a guest is a random id plus a secret of 256 bits the server issues once (the ledger
/// issues and stores them). The credential the client keeps is `<guest id>.<secret>`; only the secret's SHA-256 is
/// stored, so a database copy lets nobody act as a guest. A guest id alone proves nothing.
public final class GuestStore: Sendable {
    let provider: any DatabaseProvider
    /// Credentials verified before (their digest → user and when): a hit needs no query. Kept ``cacheLifetime``
    /// at most, since an idle guest's credential is deleted after its lifetime (by whichever process expires it).
    private let verified = Mutex<[SHA256.Digest: (user: UserID, at: ContinuousClock.Instant)]>([:])
    private static let cacheLimit = 10_000
    static let cacheLifetime: Duration = .seconds(300)

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// A new guest and its credential.
    public struct Issued: Sendable, Hashable {
        public var user: UserID
        public var token: String

        public init(user: UserID, token: String) {
            self.user = user
            self.token = token
        }
    }

    /// The guest a credential proves, or nil when it proves nothing.
    public func verify(_ token: String) async throws -> UserID? {
        let tokenDigest = SHA256.hash(data: Data(token.utf8))
        let now = ContinuousClock.now
        if let known = verified.withLock({ $0[tokenDigest] }), now - known.at < Self.cacheLifetime { return known.user }
        guard token.utf8.count <= 300, let dot = token.lastIndex(of: "."), let user = UserID.guest(id: String(token[..<dot])) else {
            return nil
        }
        let secret = String(token[token.index(after: dot)...])
        guard secret.utf8.count >= 22, let guestId = user.guestId else { return nil }
        let stored = try await provider.withSession { db in try await GuestCredentialsTable.digest(guestId: guestId, on: db) }
        guard let stored, Self.equalDigests(stored, Self.digest(secret)) else { return nil }
        verified.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[tokenDigest] = (user, now)
        }
        return user
    }

    /// Forgets the verified credentials of `guests` (their credentials were just deleted).
    public func forget(_ guests: Set<UserID>) {
        guard !guests.isEmpty else { return }
        verified.withLock { cache in cache = cache.filter { !guests.contains($0.value.user) } }
    }

    /// The outcome of a legacy guest's claim.
    public enum Claim: Sendable, Hashable {
        case issued(Issued)
        /// The guest has a credential already (issued, or claimed before).
        case alreadyClaimed
        /// None of the transactions Apple vouched for belongs to this guest.
        case notProved
    }

    /// The stored form of a secret: its SHA-256 in lowercase hex.
    public static func digest(_ secret: String) -> String {
        SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Compares two hex digests without stopping at the first difference.
    static func equalDigests(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    /// `bytes` random bytes from the system's generator, as unpadded base64url.
    public static func randomBase64URL(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}

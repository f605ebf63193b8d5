import Crypto
import Foundation
import Synchronization

/// A bounded cache of certificate chains that already validated to a pinned root.
///
/// Keyed by the exact bytes of the JWS protected header, which hold the `x5c` certificates and the algorithm,
/// so a hit skips header parsing as well as path validation. The entry remembers the window in which every
/// certificate of the chain is valid; a payload signed outside it is validated afresh (and fails). The cache is
/// split into independently locked shards so concurrent verifiers almost never wait on one another.
final class VerifiedChainCache: Sendable {
    /// What a validated chain lets the verifier do without touching the certificates again.
    struct Entry: Sendable {
        let leafKey: P256.Signing.PublicKey
        let validFrom: Double
        let validUntil: Double
    }

    private struct Slot: Sendable {
        let header: [UInt8]
        let entry: Entry
    }

    private static let shardCount = 16
    // Each shard maps a header hash to the (almost always single) chains with that hash.
    private let shards: [Shard]

    private final class Shard: Sendable {
        let table = Mutex<[Int: [Slot]]>([:])
    }
    private let capacityPerShard: Int

    /// Creates a cache holding at most about `capacity` chains (at least one per shard).
    init(capacity: Int) {
        self.capacityPerShard = max(1, (capacity + Self.shardCount - 1) / Self.shardCount)
        self.shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    func lookup(header: UnsafeBufferPointer<UInt8>) -> Entry? {
        let hash = Self.hash(header)
        return shards[Self.shard(hash)].table.withLock { table in
            // Compare in place: the hit path allocates nothing.
            table[hash]?.first { slot in
                slot.header.count == header.count
                    && slot.header.withUnsafeBufferPointer { memcmp($0.baseAddress!, header.baseAddress!, header.count) == 0 }
            }?.entry
        }
    }

    func store(header: UnsafeBufferPointer<UInt8>, entry: Entry) {
        let hash = Self.hash(header)
        let slot = Slot(header: Array(header), entry: entry)
        shards[Self.shard(hash)].table.withLock { table in
            var slots = table[hash] ?? []
            slots.removeAll { $0.header == slot.header }
            if slots.isEmpty, table.count >= capacityPerShard, let victim = table.keys.first {
                table.removeValue(forKey: victim)
            }
            slots.append(slot)
            table[hash] = slots
        }
    }

    /// Number of cached chains (for tests and diagnostics).
    var count: Int { shards.reduce(0) { total, shard in total + shard.table.withLock { $0.values.reduce(0) { $0 + $1.count } } } }

    /// Hashes the length and the first 512 bytes, which hold the leaf certificate's serial number and key.
    ///
    /// Equality is always decided on every byte; the hash only picks the bucket, and only chains that validated
    /// to a pinned root are ever stored, so a crafted collision cannot crowd the cache.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes.count)
        hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.prefix(512))))
        return hasher.finalize()
    }

    private static func shard(_ hash: Int) -> Int { Int(UInt(bitPattern: hash) % UInt(shardCount)) }
}

import Foundation

/// The offer-signature nonces already redeemed, each remembered until its signature would be refused as stale
/// anyway, and never more than `capacity` of them.
struct NonceLedger: Sendable {
    let capacity: Int
    private var usableUntil: [String: Date] = [:]
    // Insertion order, consumed from `head`, so pruning and eviction need no scan of the dictionary.
    private var order: [String] = []
    private var head = 0

    init(capacity: Int) {
        precondition(capacity > 0, "a nonce ledger must remember at least one nonce")
        self.capacity = capacity
    }

    var count: Int { usableUntil.count }

    /// Records `nonce`, which a signature can no longer pass with after `usableUntil`; false when it was
    /// already redeemed.
    mutating func redeem(_ nonce: String, usableUntil expiry: Date, now: Date) -> Bool {
        prune(now: now)
        guard usableUntil[nonce] == nil else { return false }
        // Over capacity the oldest redemption is forgotten: a bounded memory is worth a replay window for
        // something that old, and refusing new nonces instead would stop every purchase.
        while usableUntil.count >= capacity { dropHead() }
        usableUntil[nonce] = expiry
        order.append(nonce)
        return true
    }

    /// Forgets nonces from the front whose signatures are stale at `now`: a replay of one fails the freshness
    /// check before the ledger is consulted.
    private mutating func prune(now: Date) {
        while head < order.count, let expiry = usableUntil[order[head]], expiry < now { dropHead() }
        if head >= 1024, head * 2 >= order.count {
            order.removeFirst(head)
            head = 0
        }
    }

    private mutating func dropHead() {
        usableUntil.removeValue(forKey: order[head])
        head += 1
    }
}

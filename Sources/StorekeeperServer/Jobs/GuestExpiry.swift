import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Deletes issued guests that never did anything (no order, purchase, grant, wallet, event or audit entry) once they
/// are older than `auth.guestLifetimeDays`: an app asks for a guest at first launch, and most installs never buy, so
/// without this every launch would leave a user row and a credential for good. Runs every few hours, in pages.
final class GuestExpiry: PeriodicJob {
    let ledger: Ledger
    let guests: GuestStore
    let lifetime: Duration
    let metrics: ServerMetrics
    let logger: Logger

    init(ledger: Ledger, guests: GuestStore, lifetime: Duration, metrics: ServerMetrics, logger: Logger) {
        self.ledger = ledger
        self.guests = guests
        self.lifetime = lifetime
        self.metrics = metrics
        self.logger = logger
    }

    /// Deletes every idle guest created before `now` minus the lifetime, a page at a time; returns how many went.
    func runOnce(now: Date) async throws -> Int {
        let cutoff = now.addingTimeInterval(-Double(lifetime.components.seconds))
        var total = 0
        while true {
            let expired = try await ledger.expireIdleGuests(createdBefore: cutoff)
            // This process stops accepting them at once; the others within GuestStore's cache lifetime.
            guests.forget(Set(expired))
            total += expired.count
            if expired.isEmpty || Task.isCancelled { break }
        }
        if total > 0 { logger.info("idle guests expired", metadata: ["count": "\(total)"]) }
        metrics.runLog.record("expire_guests", items: total)
        return total
    }
}

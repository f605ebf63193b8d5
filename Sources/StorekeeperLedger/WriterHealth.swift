import Foundation
import Synchronization

/// The ledger writer's last failure to commit a batch, cleared by the next commit: what `/health` reads besides its
/// own probe.
final class WriterHealth: Sendable {
    private let last = Mutex<(at: Date, reason: String)?>(nil)

    func committed() { last.withLock { $0 = nil } }

    func failed(_ error: any Error, at now: Date = Date()) { last.withLock { $0 = (now, "\(error)") } }

    /// The failure's reason when it happened at or after `since`.
    func failure(since: Date) -> String? {
        last.withLock { state in state.flatMap { $0.at >= since ? $0.reason : nil } }
    }
}

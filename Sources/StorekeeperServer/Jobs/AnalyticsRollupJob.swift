import Foundation
import StorekeeperStorage

/// Rolls the subscriptions whose facts changed into the analytics' daily and cohort cells, so charts stay seconds
/// behind the ledger and a read has little left to do.
struct AnalyticsRollupJob: PeriodicJob {
    let store: AnalyticsStore

    /// A pass takes at most 50 batches of 500 (the queue's remainder waits for the next pass).
    func runOnce(now: Date) async throws -> Int {
        var rolled = 0
        for _ in 0..<50 {
            let (count, remaining) = try await store.refresh(limit: 500)
            rolled += count
            if count == 0 || remaining == 0 { break }
        }
        return rolled
    }
}

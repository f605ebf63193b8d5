import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger

/// Records retention answers on their users' audit trails after the answer went out, so the realtime path never
/// waits for a commit. Entries queue in memory (at most 10,000; past that the oldest are dropped and logged) and
/// are written in the ledger's batches; a graceful shutdown writes what is queued before the process ends.
final class RetentionRecorder: Service, Sendable {
    struct Entry: Sendable {
        var user: UserID
        var originalTransactionId: String
        var detail: String
        /// The rule that answered, its answer's kind and the offer it carried.
        var ruleId: String
        var kind: String
        var offerId: String?
    }

    private let ledger: Ledger
    private let logger: Logger
    private let stream: AsyncStream<Entry>
    private let continuation: AsyncStream<Entry>.Continuation

    init(ledger: Ledger, logger: Logger) {
        self.ledger = ledger
        self.logger = logger
        (stream, continuation) = AsyncStream.makeStream(of: Entry.self, bufferingPolicy: .bufferingNewest(10_000))
    }

    /// Queues an entry; never waits.
    func record(_ entry: Entry) {
        if case .dropped = continuation.yield(entry) {
            logger.warning("retention audit queue full: the oldest entry was dropped")
        }
    }

    func run() async throws {
        try await withGracefulShutdownHandler {
            for await entry in stream {
                do {
                    try await ledger.recordRetentionAnswer(
                        user: entry.user,
                        originalTransactionId: entry.originalTransactionId,
                        detail: entry.detail,
                        rule: (entry.ruleId, entry.kind, entry.offerId)
                    )
                } catch {
                    logger.notice("a retention answer could not be audited", metadata: ["error": "\(error)"])
                }
            }
        } onGracefulShutdown: {
            self.continuation.finish()
        }
    }
}

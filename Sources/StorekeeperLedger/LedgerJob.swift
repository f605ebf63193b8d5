import StorekeeperCore
import StorekeeperStorage
import Synchronization

/// One command waiting for the ledger's next batch, and where its result goes once the batch commits.
protocol LedgerJob: AnyObject, Sendable {}

/// A delivery: planned with every other delivery of its batch.
final class DeliveryJob: LedgerJob {
    let request: DeliveryRequest
    let result = Mutex<Result<DeliveryResult, any Error>?>(nil)

    init(request: DeliveryRequest) { self.request = request }
}

/// A verified notification to store (and apply, when `message` is given) in the inbox; the result is whether it
/// was new. The message is planned here, on the caller's task, so the writer only executes.
final class InboxJob: LedgerJob {
    let received: NotificationInbox.Received
    let message: PlannedMessage?
    let result = Mutex<Result<Bool, any Error>?>(nil)

    init(received: NotificationInbox.Received, message: StoreMessage?) {
        self.received = received
        self.message = message.map(PlannedMessage.init)
    }
}

/// Any other write: run in its own savepoint inside the batch's transaction.
final class WriteJob: LedgerJob {
    let body: @Sendable (UnitOfWork) async throws -> any Sendable
    /// The write cannot add to the outbox (the webhook queue's own bookkeeping), so its commit wakes no one.
    let quiet: Bool
    let result = Mutex<Result<any Sendable, any Error>?>(nil)

    init(quiet: Bool = false, body: @escaping @Sendable (UnitOfWork) async throws -> any Sendable) {
        self.quiet = quiet
        self.body = body
    }
}

import Crypto
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperStorage
import Synchronization

/// Every write Storekeeper makes, as commands: deliver, apply Apple's messages, park and assign, move a user's data,
/// post to the wallet, record orders, nonces, receipts, leases and queue states.
///
/// The ledger owns the database transactions and the one batching layer: concurrent commands are combined
/// (``BatchCombiner``) into batches run one at a time, each in one database transaction (``LedgerBatch``), so a
/// burst of purchases and notifications costs a few set-based statements and one durable commit. No command
/// returns before the commit that made its change durable. Inside a batch every change goes through a
/// ``UnitOfWork``: the tables' one insert each, the audit entries and the outbox events written with it.
public final class Ledger: Service, Sendable {
    let provider: any DatabaseProvider
    let rules: LedgerRules
    let logger: Logger
    private let combiner: BatchCombiner<any LedgerJob, Void>
    /// Told after each batch's transaction ended: the outbox may have grown (event delivery wakes on it).
    private let commitListeners = CommitListeners()
    /// The writer's last failure to commit a batch (cleared by the next commit), for `/health`.
    private let writerHealth = WriterHealth()

    /// - Parameters:
    ///   - maximumBatch: how many commands may share one database transaction.
    ///   - onRerun: told, with ``DatabaseFailure/cause(_:)``, each time a batch failed as a whole and runs again step
    ///     by step (a metric: on PostgreSQL a `deadlock` there means two servers took rows in different orders).
    ///   - clock: the time each batch records as its `now` (a simulation or a comparison of two runs fixes it).
    public init(
        provider: any DatabaseProvider,
        rules: LedgerRules,
        maximumBatch: Int = 256,
        onRerun: @escaping @Sendable (String) -> Void = { _ in },
        clock: @escaping @Sendable () -> Date = { Date() },
        logger: Logger
    ) {
        self.provider = provider
        self.rules = rules
        self.logger = logger
        let storedHeaders = StoredHeaders()
        let listeners = commitListeners
        let health = writerHealth
        combiner = BatchCombiner(maximumBatch: maximumBatch, dedicatedDrainer: true) { jobs in
            await LedgerBatch.run(
                jobs,
                provider: provider,
                rules: rules,
                storedHeaders: storedHeaders.digests,
                health: health,
                onRerun: onRerun,
                clock: clock,
                logger: logger
            )
            // The webhook sender's own commits must not wake it again (it would spin on its bookkeeping).
            if jobs.contains(where: { ($0 as? WriteJob)?.quiet != true }) { listeners.notify() }
            let committed = jobs.compactMap { job -> [String]? in
                guard let job = job as? InboxJob, case .success? = job.result.withLock({ $0 }) else { return nil }
                return job.received.compactBody.map { Array($0.headers.keys) }
            }
            storedHeaders.add(committed.joined())
            return jobs.map { _ in () }
        }
    }

    /// Runs the ledger's writer as a lifecycle service: batches back to back on a high-priority task of its own,
    /// until graceful shutdown, then what is still queued. Run it after the database's service and before the
    /// services that write through the ledger, so it stops after them and before the database closes. Without it
    /// running, each batch is run by one of its submitters.
    public func run() async throws {
        await combiner.run()
    }

    /// Calls `listener` after every batch the ledger commits (cheap and non-blocking: it runs on the writer).
    public func onCommit(_ listener: @escaping @Sendable () -> Void) {
        commitListeners.add(listener)
    }

    // MARK: Running commands

    /// Runs `body` in the next batch's transaction (in a savepoint of its own when it shares the batch), and returns
    /// its result once that transaction committed. A `quiet` write's commit does not tell the commit listeners.
    func write<T: Sendable>(quiet: Bool = false, _ body: @escaping @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        // An operator's action under way (``logging(_:_:)``) commits its log line with its first write.
        let pending = Self.pendingAction
        let line = pending?.take()
        let job = WriteJob(quiet: quiet) { uow in
            let value = try await body(uow)
            if let line { try await Self.record(line, at: uow.now, in: uow) }
            return value
        }
        await combiner.submit(job)
        let outcome = job.result.withLock { $0 }
        if line != nil {
            if case .success? = outcome { pending?.settle(written: true) } else { pending?.settle(written: false) }
        }
        guard let result = outcome else { throw Self.noResult }
        guard let value = try result.get() as? T else { throw Self.noResult }
        return value
    }

    static let noResult = LedgerError.noResult

    /// Runs `body` again once when a concurrent twin (another process) committed the same unique key first: the
    /// second run finds it.
    func retryingOnRace<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch  where DatabaseFailure.isUniqueViolation(error) {
            return try await body()
        }
    }

    // MARK: Purchases

    /// Delivers one verified transaction exactly once (see ``DeliveryPlanner``), with every other delivery of its
    /// batch.
    public func deliver(_ request: DeliveryRequest) async throws -> DeliveryResult {
        let job = DeliveryJob(request: request)
        await combiner.submit(job)
        guard let result = job.result.withLock({ $0 }) else { throw Self.noResult }
        return try result.get()
    }

    /// Puts a verified transaction on the pending-recovery list (a product the catalog lacks, a purchase the
    /// catalog cannot deliver as it stands), so support can see and deliver it; a second park changes nothing. The
    /// submitter, when known, hears of it through the outbox.
    public func park(_ transaction: VerifiedTransaction, reason: String, submitter: UserID?) async throws {
        try await write { uow in
            try await PendingTransactionsTable.insert([(transaction, reason)], now: uow.now, on: uow.db)
            if let submitter {
                uow.emit(
                    LedgerEvent(
                        type: .parked,
                        user: submitter,
                        subject: transaction.transactionId,
                        occurredAt: uow.now,
                        details: ["transactionId": transaction.transactionId, "productId": transaction.productId, "reason": reason]
                    )
                )
            }
        }
    }

    /// Delivers a parked transaction to `user` on an operator's word: the delivery, the parked row's `resolved_by`
    /// and `assigned_user`, and the user's `transaction.assigned` entry naming the operator and the reason commit
    /// together; a transaction delivered meanwhile is not delivered again.
    public func assign(
        _ transaction: VerifiedTransaction,
        product: CatalogProduct,
        to user: UserID,
        admin: String,
        reason: String
    ) async throws -> Delivery {
        try await write { uow in
            guard try await PendingTransactionsTable.resolve(transaction.transactionId, by: admin, for: user, now: uow.now, on: uow.db) else {
                throw SupportError.notPending(transactionId: transaction.transactionId)
            }
            let request = DeliveryRequest(transaction: transaction, product: product, orderId: nil, submitter: user, policy: .refuse)
            let result = try await DeliveryPlanner.deliver([request], in: uow)[0].get()
            guard case .delivered(let delivery) = result, delivery.newlyDelivered, delivery.user == user else {
                throw SupportError.alreadyDelivered(transactionId: transaction.transactionId)
            }
            uow.record(
                AuditEntry(
                    action: .transactionAssigned,
                    user: user,
                    subject: transaction.transactionId,
                    cause: .admin(admin),
                    detail: "\(transaction.productId) assigned from the pending-recovery list: \(reason)",
                    createdAt: uow.now
                )
            )
            return delivery
        }
    }

    /// Follows subscriptions a client proved with a legacy receipt: their state from `verifyReceipt`'s answer (merged
    /// by date like any other news, so a notification's newer word wins) and the latest receipt, which the renewal
    /// sweep sends to `verifyReceipt` again for apps that have no App Store Server API key.
    public func recordReceipt(_ receipt: String, snapshots: [SubscriptionSnapshot]) async throws {
        guard !snapshots.isEmpty else { return }
        try await write { uow in
            try await StoreMessages.applySnapshots(snapshots.map { ($0, .receipt(original: $0.originalTransactionId)) }, in: uow)
            try await SubscriptionReceiptsTable.upsert(
                snapshots.map { ($0.originalTransactionId, $0.bundleId, $0.environment.rawValue) },
                receipt: receipt,
                now: uow.now,
                on: uow.db
            )
        }
    }

    // MARK: Store messages

    /// Stores a verified notification in the inbox and, when `message` is given, applies it in the same
    /// transaction; whether it was new (a duplicate is stored once and applied once). A notification whose
    /// application fails is stored pending for the processor; only a failed commit throws (Apple must retry).
    public func store(_ received: NotificationInbox.Received, applying message: StoreMessage?) async throws -> Bool {
        let job = InboxJob(received: received, message: message)
        await combiner.submit(job)
        guard let result = job.result.withLock({ $0 }) else { throw Self.noResult }
        return try result.get()
    }

    /// Applies messages (the processor's claimed notifications when `markProcessed`, or statuses Storekeeper asked
    /// Apple for), in `signedDate` order: together when they all apply, otherwise each in a savepoint of its own.
    /// Returns the messages that failed, with why; the others committed (and were marked processed).
    public func apply(_ messages: [StoreMessage], markProcessed: Bool) async throws -> [String: String] {
        try await apply(messages, markProcessed: markProcessed, together: true).failed
    }

    /// ``apply(_:markProcessed:)``, optionally skipping the first try together: the one-by-one path then runs for
    /// every message (the batched and the isolated path must leave the same records). Also says whether the
    /// messages applied together.
    func apply(_ messages: [StoreMessage], markProcessed: Bool, together: Bool) async throws -> (failed: [String: String], together: Bool) {
        guard !messages.isEmpty else { return ([:], together) }
        let ordered = messages.sorted { ($0.signedDate, $0.id) < ($1.signedDate, $1.id) }.map(PlannedMessage.init)
        let rules = self.rules
        let logger = self.logger
        return try await write { uow in
            if together {
                do {
                    try await uow.savepoint("sk_together") { own in
                        try await StoreMessages.deliver(ordered, rules: rules, in: own)
                        _ = try await StoreMessages.applyEffects(ordered, isolated: false, deliveriesDone: true, rules: rules, in: own)
                        if markProcessed { try await NotificationsTable.markProcessed(ordered.map(\.id), now: uow.now, on: uow.db) }
                    }
                    return ([:], true)
                } catch {
                    logger.notice("messages failed together; applying them one by one", metadata: ["error": "\(error)"])
                }
            }
            let failed = try await StoreMessages.applyEffects(ordered, isolated: true, deliveriesDone: false, rules: rules, in: uow)
            if markProcessed {
                try await NotificationsTable.markProcessed(ordered.map(\.id).filter { failed[$0] == nil }, now: uow.now, on: uow.db)
            }
            return (failed.mapValues { "\($0)" }, false)
        }
    }

    /// Counts a refused webhook body under its source, reason and format, with the latest body's SHA-256 and a short
    /// redacted prefix. Anyone can post to a webhook, so at most ``maximumRefusalSources`` sources get rows of their
    /// own; the rest are counted together under ``overflowRefusalSource``.
    public func countRefusal(source: String, reason: String, format: String, body: String) async throws {
        let digest = SHA256.hash(data: Data(body.utf8)).map { String(format: "%02x", $0) }.joined()
        let prefix = NotificationRedaction.prefix(of: body)
        let source = String(source.prefix(64))
        let reason = String(reason.prefix(64))
        try await write { uow in
            var kept = source
            if try await !NotificationRefusalsTable.exists(source: source, reason: reason, format: format, on: uow.db),
                try await NotificationRefusalsTable.rowCount(on: uow.db) >= Self.maximumRefusalSources
            {
                kept = Self.overflowRefusalSource
            }
            try await NotificationRefusalsTable.count(
                source: kept,
                reason: reason,
                format: format,
                digest: digest,
                prefix: prefix,
                firstSeen: uow.now,
                lastSeen: uow.now,
                on: uow.db
            )
        }
    }

    public static let maximumRefusalSources = 1_000
    public static let overflowRefusalSource = "other"

    // MARK: Queues

    /// Claims up to `limit` due notifications, oldest `signedDate` first, leased for `lease` (see ``LeasedQueue``).
    /// `now` is the clock the queue's due times are read on.
    public func claimNotifications(limit: Int, lease: Duration, now: Date = Date()) async throws -> [NotificationInbox.Stored] {
        let kind = provider.kind
        return try await write { uow in
            let rows = try await LeasedQueue.notifications.claim(limit: limit, lease: lease, now: now, kind: kind, on: uow.db)
            return try await NotificationInbox.stored(from: rows, on: uow.db).sorted {
                ($0.received.signedDate ?? $0.receivedAt, $0.received.id) < ($1.received.signedDate ?? $1.receivedAt, $1.received.id)
            }
        }
    }

    /// Records a failed attempt at a notification: retried after `retryAfter`, or a dead letter once its attempts
    /// reach `maxAttempts`.
    public func failNotification(_ id: String, error: String, maxAttempts: Int, retryAfter: Duration, now: Date = Date()) async throws {
        try await write { uow in
            try await LeasedQueue.notifications.fail(id, error: error, maxAttempts: maxAttempts, retryAfter: retryAfter, now: now, on: uow.db)
            // A notification given up is news for the backend: of the customer it concerns, or — when nobody holds the
            // transaction (bought outside the app, never submitted) — on the stream of events about no known user.
            guard let dead = try await NotificationInbox.deadLetter(id, on: uow.db) else { return }
            let user = try await TransactionOwnersTable.owners(of: [dead.originalTransactionId], on: uow.db)[dead.originalTransactionId] ?? .nobody
            var details = ["notificationId": id, "originalTransactionId": dead.originalTransactionId, "error": String(error.prefix(500))]
            if let type = dead.type { details["notificationType"] = type }
            if let subtype = dead.subtype { details["subtype"] = subtype }
            uow.emit(LedgerEvent(type: .notificationDeadLettered, user: user, subject: id, occurredAt: uow.now, details: details))
        }
    }

    /// Puts a dead letter (or a pending notification) back in line now; `not_retryable` when there is none.
    public func retryNotification(_ id: String) async throws {
        try await write { uow in
            guard try await LeasedQueue.notifications.retry(id, now: uow.now, on: uow.db) else {
                throw SupportError.notRetryable(notificationId: id)
            }
        }
    }

    /// Claims due refund questions (leased, skipping rows another process holds on PostgreSQL).
    public func claimConsumptionRequests(limit: Int, lease: Duration, now: Date = Date()) async throws -> [ConsumptionRequestStore.Request] {
        let kind = provider.kind
        return try await write { uow in
            try await LeasedQueue.consumptionRequests.claim(limit: limit, lease: lease, now: now, kind: kind, on: uow.db)
                .map(ConsumptionRequestStore.Request.init(row:))
        }
    }

    /// Records a failed answer; retried after `retryAfter` unless `final` (no consent, past the deadline, or an
    /// error Apple says will not change).
    public func failConsumptionRequest(_ id: String, error: String, final: Bool, retryAfter: Duration, now: Date = Date()) async throws {
        try await write { uow in
            try await LeasedQueue.consumptionRequests.fail(
                id,
                error: error,
                maxAttempts: final ? 0 : Int.max,
                retryAfter: retryAfter,
                now: now,
                on: uow.db
            )
        }
    }

    /// Records the answer Apple accepted (a question is answered at most once), audited and announced on the user.
    public func answerConsumptionRequest(_ id: String, answer: String) async throws {
        try await write { uow in
            guard let answered = try await ConsumptionRequestsTable.markAnswered(id, answer: answer, now: uow.now, on: uow.db),
                let user = answered.user
            else { return }
            uow.record(
                AuditEntry(
                    action: .refundConsumptionAnswered,
                    user: user,
                    subject: answered.transactionId,
                    cause: .consumption(id),
                    detail: answer,
                    createdAt: uow.now
                )
            )
            uow.emit(
                LedgerEvent(
                    type: .consumptionAnswered,
                    user: user,
                    subject: answered.transactionId,
                    occurredAt: uow.now,
                    details: [
                        "transactionId": answered.transactionId, "requestId": id, "answer": answer,
                        "requestedAt": String(answered.requestedAt.millis), "deadlineAt": String(answered.deadline.millis),
                    ]
                )
            )
        }
    }

    // MARK: Subscriptions

    /// Records that Apple was asked about these subscriptions now.
    public func markChecked(_ originals: [String]) async throws {
        guard !originals.isEmpty else { return }
        try await write { uow in
            for original in Set(originals).sorted() { try await SubscriptionsTable.markChecked(original, now: uow.now, on: uow.db) }
        }
    }

    // MARK: Orders

    /// Records an order created before StoreKit's purchase.
    public func createOrder(_ order: Order) async throws {
        try await write { uow in
            try await UsersTable.ensure([order.user], now: uow.now, on: uow.db)
            try await OrdersTable.insert(order, on: uow.db)
            uow.record(
                AuditEntry(
                    action: .orderCreated,
                    user: order.user,
                    subject: order.id,
                    cause: .order(order.id),
                    detail: order.productId,
                    createdAt: order.createdAt
                )
            )
        }
    }

    /// Cancels a created order of `user`; whether it changed (a delivered order stays delivered; a cancelled one can
    /// still be delivered later).
    public func cancelOrder(_ id: String, user: UserID) async throws -> Bool {
        try await write { uow in
            guard try await OrdersTable.cancel(id, user: user, now: uow.now, on: uow.db) else { return false }
            uow.record(AuditEntry(action: .orderCancelled, user: user, subject: id, cause: .order(id), createdAt: uow.now))
            return true
        }
    }

    // MARK: Wallet

    /// Spends coins under a client idempotency key; refuses an overdraft. A repeated key returns the first answer,
    /// also when the repeat races the first request.
    public func spend(
        user: UserID,
        currency: String = "coins",
        amount: Int64,
        idempotencyKey: String,
        reason: String?
    ) async throws
        -> WalletPosting
    {
        guard amount > 0 && amount <= WalletLimits.maximumAmount else {
            throw WalletError.invalidSpend
        }
        let key = WalletKey.spend(user: user, key: idempotencyKey)
        return try await retryingOnRace {
            try await write { uow in
                try await UsersTable.ensure([user], now: uow.now, on: uow.db)
                let posting = try await WalletPostings.post(
                    user: user,
                    currency: currency,
                    amount: -amount,
                    key: key,
                    reason: reason,
                    allowNegative: false,
                    in: uow
                )
                return posting
            }
        }
    }

    /// An operator's adjustment (positive or negative, may go below zero), audited with the operator's name.
    public func adjust(
        user: UserID,
        currency: String = "coins",
        amount: Int64,
        idempotencyKey: String,
        admin: String,
        reason: String?
    ) async throws -> WalletPosting {
        guard amount != 0 && amount.magnitude <= WalletLimits.maximumAmount.magnitude else {
            throw WalletError.invalidAdjustment
        }
        let key = WalletKey.admin(admin, user: user, key: idempotencyKey)
        return try await retryingOnRace {
            try await write { uow in
                try await UsersTable.ensure([user], now: uow.now, on: uow.db)
                let posting = try await WalletPostings.post(
                    user: user,
                    currency: currency,
                    amount: amount,
                    key: key,
                    reason: reason,
                    allowNegative: true,
                    in: uow
                )
                return posting
            }
        }
    }

    // MARK: Users

    /// What a merge moved.
    public struct MergeSummary: Sendable, Hashable {
        public var transactions: Int
        public var entitlements: Int
        public var orders: Int
        public var coins: Int64
    }

    /// Moves everything a guest owns to `account` (``UserDataMover``: every user-keyed table, audited on both sides)
    /// and its balances, and announces it on the account. Running it again moves nothing.
    public func mergeGuest(_ guest: UserID, into account: UserID) async throws -> MergeSummary {
        guard guest.isGuest, !account.isGuest else {
            throw WalletError.accountRequired
        }
        return try await write { uow in
            try await UsersTable.ensure([account], now: uow.now, on: uow.db)
            let counts = try await UserDataTables.counts(of: guest, on: uow.db)
            let cause = AuditCause.merge(guest: guest)
            let grants = try await UserDataMover.move(from: guest, to: account, scope: .everything, cause: cause, in: uow)
            var coins: Int64 = 0
            for (currency, balance) in try await WalletsTable.balances(of: guest, on: uow.db) {
                guard balance.magnitude <= WalletLimits.maximumBalance.magnitude else {
                    throw WalletLimits.limitReached("the guest's \(currency) balance \(balance) cannot be moved")
                }
                _ = try await WalletPostings.post(
                    user: guest,
                    currency: currency,
                    amount: -balance,
                    key: .merge(guest: guest, into: account, at: uow.now.millis, side: "out"),
                    reason: "merged into account",
                    allowNegative: true,
                    in: uow
                )
                _ = try await WalletPostings.post(
                    user: account,
                    currency: currency,
                    amount: balance,
                    key: .merge(guest: guest, into: account, at: uow.now.millis, side: "in"),
                    reason: "merged from guest",
                    allowNegative: true,
                    in: uow
                )
                if currency == "coins" { coins = balance }
            }
            try await UsersTable.markMerged(guest, into: account, on: uow.db)
            if counts.transactions + grants.count + counts.orders > 0 || coins != 0 {
                uow.record(
                    AuditEntry(
                        action: .userMerged,
                        user: account,
                        subject: guest.rawValue,
                        amount: coins,
                        cause: cause,
                        detail: "\(counts.transactions) transactions, \(counts.orders) orders",
                        createdAt: uow.now
                    )
                )
                uow.emit(
                    LedgerEvent(
                        type: .userMerged,
                        user: account,
                        subject: guest.rawValue,
                        occurredAt: uow.now,
                        details: [
                            "guest": guest.rawValue, "transactions": String(counts.transactions), "entitlements": String(grants.count),
                            "orders": String(counts.orders), "coins": String(coins),
                        ]
                    )
                )
            }
            return MergeSummary(transactions: counts.transactions, entitlements: grants.count, orders: counts.orders, coins: coins)
        }
    }

    /// Issues a new guest and its credential (App Review's "buy without signing in": the app asks for one at first
    /// launch). Only the secret's SHA-256 is stored.
    public func issueGuest() async throws -> GuestStore.Issued {
        let id = GuestStore.randomBase64URL(bytes: 16)
        let secret = GuestStore.randomBase64URL(bytes: 32)
        guard let user = UserID.guest(id: id) else { throw LedgerError.guestIdReused }
        let stored = try await write { uow in
            try await UsersTable.ensure([user], now: uow.now, on: uow.db)
            return try await GuestCredentialsTable.insert(guestId: id, digest: GuestStore.digest(secret), origin: "issued", now: uow.now, on: uow.db)
        }
        guard stored else { throw LedgerError.guestIdReused }
        return GuestStore.Issued(user: user, token: id + "." + secret)
    }

    /// Deletes up to `limit` issued guests created before `cutoff` that never did anything (no order, purchase,
    /// grant, wallet, event or audit entry): found on a reader, then checked again and deleted in one write, so a
    /// guest who started buying meanwhile stays. Returns the guests that went.
    public func expireIdleGuests(createdBefore cutoff: Date, limit: Int = 500) async throws -> [UserID] {
        let candidates = try await provider.withReader { db in
            try await GuestCredentialsTable.idle(createdBefore: cutoff, limit: limit, on: db)
        }
        guard !candidates.isEmpty else { return [] }
        return try await write { uow in
            try await GuestCredentialsTable.expire(candidates, createdBefore: cutoff, on: uow.db)
        }
    }

    /// Issues a credential to a guest from before credentials (keyed by its client-chosen device id) when Apple
    /// vouched for a transaction bound to it: the device still holds its StoreKit history, an impostor who only
    /// knows the device id does not. Once only.
    public func claimLegacyGuest(_ guest: UserID, originalTransactionIds: Set<String>) async throws -> GuestStore.Claim {
        guard let guestId = guest.guestId, !originalTransactionIds.isEmpty else { return .notProved }
        let secret = GuestStore.randomBase64URL(bytes: 32)
        return try await write { uow in
            let owners = try await TransactionOwnersTable.owners(of: originalTransactionIds, on: uow.db)
            guard owners.values.contains(guest) else { return .notProved }
            guard
                try await GuestCredentialsTable.insert(
                    guestId: guestId,
                    digest: GuestStore.digest(secret),
                    origin: "claimed",
                    now: uow.now,
                    on: uow.db
                )
            else { return .alreadyClaimed }
            uow.record(
                AuditEntry(
                    action: .guestClaimed,
                    user: guest,
                    subject: guest.rawValue,
                    cause: .guestClaim,
                    detail: "a credential was issued on proof of an Apple-signed transaction of this guest",
                    createdAt: uow.now
                )
            )
            return .issued(GuestStore.Issued(user: guest, token: guestId + "." + secret))
        }
    }

    // MARK: Offers and the catalog

    /// Records the nonce of a signed subscription offer; `false` if it was ever used before.
    public func recordOfferNonce(_ nonce: UUID, user: UserID, productId: String, offerId: String, campaignId: String) async throws -> Bool {
        try await write { uow in
            guard
                try await OfferNoncesTable.insert(
                    nonce,
                    user: user,
                    productId: productId,
                    offerId: offerId,
                    campaignId: campaignId,
                    now: uow.now,
                    on: uow.db
                )
            else { return false }
            uow.record(
                AuditEntry(
                    action: .offerSigned,
                    user: user,
                    subject: productId,
                    cause: .campaign(campaignId),
                    detail: "offer \(offerId) nonce \(nonce.uuidString.lowercased())",
                    createdAt: uow.now
                )
            )
            return true
        }
    }

    /// Adds the catalog's products and campaigns the database does not have (a catalog file seeds; an operator's
    /// later change survives a restart); returns how many were added.
    @discardableResult
    public func seedCatalog(_ catalog: Catalog) async throws -> Int {
        let entries = try CatalogStore.entries(catalog)
        return try await write { uow in try await CatalogEntriesTable.write(entries, replace: false, now: uow.now, on: uow.db) }
    }

    /// Replaces one product's definition.
    public func save(_ product: CatalogProduct) async throws {
        let entries = try CatalogStore.entries(Catalog(products: [product]))
        try await write { uow in try await CatalogEntriesTable.write(entries, replace: true, now: uow.now, on: uow.db) }
    }

    /// Replaces one campaign's definition.
    public func save(_ campaign: OfferCampaign) async throws {
        let entries = try CatalogStore.entries(Catalog(campaigns: [campaign]))
        try await write { uow in try await CatalogEntriesTable.write(entries, replace: true, now: uow.now, on: uow.db) }
    }

    // MARK: Jobs and health

    /// Takes the lease `name` for `duration` if no other process holds it; the job's cursor (nil the first time),
    /// or `acquired` false when another process holds it.
    public func acquireLease(
        _ name: String,
        owner: String,
        for duration: Duration,
        now: Date = Date()
    ) async throws
        -> (acquired: Bool, cursor: String?)
    {
        try await write { uow in
            try await JobStateTable.acquire(
                name,
                owner: owner,
                until: now.addingTimeInterval(Double(duration.components.seconds)),
                now: now,
                on: uow.db
            )
        }
    }

    /// Saves the cursor (when given) and gives the lease up. Returns once written even from a cancelled task: during
    /// shutdown the job's own task is cancelled, and the release must still happen before the process exits.
    public func releaseLease(_ name: String, owner: String, cursor: String?) async throws {
        try await Task {
            try await self.write { uow in try await JobStateTable.release(name, owner: owner, cursor: cursor, now: uow.now, on: uow.db) }
        }.value
    }

    /// Why the writer could not commit its last batch, when that happened within `seconds` and nothing committed since:
    /// a database that takes the probe's one-row update can still refuse every purchase (a full disk lets a row be
    /// rewritten in place but no new page be written), so `/health` fails on this too.
    public func recentWriteFailure(within seconds: TimeInterval, now: Date = Date()) -> String? {
        writerHealth.failure(since: now.addingTimeInterval(-seconds))
    }

    /// Writes and commits this process's health row, on a transaction of its own (not batched): a database that
    /// answers reads but cannot write — read-only, out of disk, locked — cannot take a purchase. On PostgreSQL a lock
    /// is waited for two seconds at most.
    public func probe(instance: String) async throws {
        let kind = provider.kind
        try await provider.withTransaction { db in
            try await HealthProbesTable.touch(instance: instance, now: Date(), kind: kind, on: db)
        }
    }

    // MARK: Reconciliation

    /// Records a day's reconciliation: a reconciled day replaces its findings in one transaction (re-runs are
    /// idempotent); an unavailable report or a failed run keeps what an earlier run found.
    /// How many rows one pruning pass deleted.
    public struct Pruned: Sendable, Hashable {
        public var events = 0
        public var notifications = 0
        public var audit = 0
        public var total: Int { events + notifications + audit }

        public init() {}
    }

    /// Deletes up to `limit` each of the outbox events, applied notifications and audit entries older than their
    /// cutoffs (nil: none), never an event or notification a webhook endpoint of `eventEndpoints` /
    /// `notificationEndpoints` has yet to receive (see `RetainedRecords`). One short transaction.
    public func prune(
        eventsBefore: Date?,
        notificationsBefore: Date?,
        auditBefore: Date?,
        eventEndpoints: [String],
        notificationEndpoints: [String],
        limit: Int
    ) async throws -> Pruned {
        try await write { uow in
            var pruned = Pruned()
            if let eventsBefore {
                pruned.events = try await RetainedRecords.pruneEvents(before: eventsBefore, endpoints: eventEndpoints, limit: limit, on: uow.db)
            }
            if let notificationsBefore {
                pruned.notifications = try await RetainedRecords.pruneNotifications(
                    before: notificationsBefore,
                    endpoints: notificationEndpoints,
                    limit: limit,
                    on: uow.db
                )
            }
            if let auditBefore {
                pruned.audit = try await RetainedRecords.pruneAudit(before: auditBefore, limit: limit, on: uow.db)
            }
            return pruned
        }
    }

    public func recordReconciliation(
        _ day: ReconciliationTable.Day,
        findings: [Reconciliation.Finding],
        analytics: [String: [SubscriptionSourcesReport.Count]] = [:]
    ) async throws {
        try await write { uow in
            try await ReconciliationTable.record(day, findings: findings, now: uow.now, on: uow.db)
            try await AnalyticsCountsTable.replace(day: day.day, counts: analytics, on: uow.db)
        }
    }

    // MARK: Reading the outbox

    /// The latest event's position (0 when the outbox is empty).
    public func lastEventPosition() async throws -> Int64 {
        try await provider.withSession { db in try await EventsTable.lastPosition(on: db) }
    }

    /// Events after `position` (all users, or one; every type, or some), oldest first.
    public func events(
        after position: Int64,
        user: UserID? = nil,
        types: [LedgerEvent.EventType]? = nil,
        limit: Int
    ) async throws -> [EventsTable.Stored] {
        try await provider.withSession { db in try await EventsTable.after(position, user: user, types: types, limit: limit, on: db) }
    }
}

/// Header digests this process has seen committed: the same few certificate chains sign everything, so after the
/// first batch no batch writes them again.
private final class StoredHeaders: Sendable {
    private let known = Mutex(Set<String>())

    var digests: Set<String> { known.withLock { $0 } }

    func add(_ digests: some Sequence<String>) {
        known.withLock { $0.formUnion(digests) }
    }
}

/// Whom ``Ledger`` tells when a batch ended.
final class CommitListeners: Sendable {
    private let listeners = Mutex<[@Sendable () -> Void]>([])

    func add(_ listener: @escaping @Sendable () -> Void) { listeners.withLock { $0.append(listener) } }

    func notify() {
        for listener in listeners.withLock({ $0 }) { listener() }
    }
}

import Foundation
import Logging
import StorekeeperCore
import StorekeeperStorage

/// What the ledger needs to know to apply Apple's messages: the catalog now, and the configured policies.
public struct LedgerRules: Sendable {
    public var catalog: @Sendable () -> Catalog
    public var transferPolicy: TransferPolicy
    public var coinClawback: CoinClawbackPolicy

    public init(catalog: @escaping @Sendable () -> Catalog, transferPolicy: TransferPolicy, coinClawback: CoinClawbackPolicy) {
        self.catalog = catalog
        self.transferPolicy = transferPolicy
        self.coinClawback = coinClawback
    }
}

/// A store message with its plan, decided once (on the caller's task, before the writer sees it). A class, so a
/// batch sorts and passes references, not two subscription snapshots each.
final class PlannedMessage: Sendable {
    let message: StoreMessage
    let plan: LifecyclePlan

    init(_ message: StoreMessage) {
        self.message = message
        self.plan = LifecyclePlanner.plan(message)
    }

    var id: String { message.id }
}

/// Executes store messages' plans in the caller's unit of work: the transactions they carry are delivered by the
/// ``DeliveryPlanner`` with everyone else's, then each plan's steps — clawbacks and reinstatements, extensions,
/// refund questions, seats, consent — and the subscription states, merged by the stores' `signedDate`. Nothing here
/// knows a store's own names: the plan says what to do.
enum StoreMessages {
    /// The deliveries the plans carry (transactions of products the catalog knows) with the id of the message each
    /// came in, and the transactions of products it does not (parked).
    static func deliveries(
        of messages: [PlannedMessage],
        rules: LedgerRules
    ) -> (requests: [DeliveryRequest], messageIds: [String], unknown: [VerifiedTransaction]) {
        let products = rules.catalog()
        var requests: [DeliveryRequest] = []
        var messageIds: [String] = []
        var unknown: [VerifiedTransaction] = []
        for message in messages {
            for transaction in message.plan.deliver {
                if let product = products.product(transaction.productId) {
                    requests.append(
                        DeliveryRequest(transaction: transaction, product: product, orderId: nil, submitter: nil, policy: rules.transferPolicy)
                    )
                    messageIds.append(message.id)
                } else {
                    unknown.append(transaction)
                }
            }
        }
        return (requests, messageIds, unknown)
    }

    /// Delivers the messages' transactions. A transaction the delivery rules refuse (a quantity no store sells) is
    /// parked for support like one of an unknown product, and the message applies: a refusal is an outcome, and
    /// retrying it would only end in a dead letter. Any other failure is an error (the message is not applied).
    static func deliver(_ messages: [PlannedMessage], rules: LedgerRules, in uow: UnitOfWork) async throws {
        let (requests, messageIds, unknown) = deliveries(of: messages, rules: rules)
        try await PendingTransactionsTable.insert(unknown.map { ($0, "unknown product \($0.productId)") }, now: uow.now, on: uow.db)
        let results = try await DeliveryPlanner.deliver(requests, in: uow)
        if let failure = try await settle(results, of: requests, messageIds: messageIds, in: uow).values.first { throw failure }
    }

    /// The results of messages' deliveries: refusals by the delivery rules parked with their reason; any other
    /// failure returned by the id of the message that carried it (that message is not applied).
    static func settle(
        _ results: [Result<DeliveryResult, any Error>],
        of requests: [DeliveryRequest],
        messageIds: [String],
        in uow: UnitOfWork
    ) async throws -> [String: any Error] {
        var parked: [(transaction: VerifiedTransaction, reason: String)] = []
        var failed: [String: any Error] = [:]
        for ((result, request), messageId) in zip(zip(results, requests), messageIds) {
            switch result {
            case .success:
                continue
            case .failure(let failure as any StorekeeperFailure) where failure.apiError.kind == .refused:
                parked.append((request.transaction, "\(failure.apiError.code): \(failure.apiError.message)"))
            case .failure(let error):
                if failed[messageId] == nil { failed[messageId] = error }
            }
        }
        try await PendingTransactionsTable.insert(parked, now: uow.now, on: uow.db)
        return failed
    }

    /// Executes each message's plan in `signedDate` order. Without `isolated` (deliveries done already) plans that
    /// are only a state merge share set-based statements, the rest run one by one, and the first failure throws (the
    /// caller rolls back and tries again isolated). With `isolated` every message runs its whole plan in a savepoint
    /// of its own, and failures are returned by message id: the path a failure takes, which must leave the same
    /// records as the batched one.
    static func applyEffects(
        _ messages: [PlannedMessage],
        isolated: Bool,
        deliveriesDone: Bool,
        rules: LedgerRules,
        in uow: UnitOfWork
    ) async throws -> [String: any Error] {
        guard isolated else {
            // Runs of batchable plans share one merge; a run ends where another plan comes, so every subscription
            // sees its messages in `signedDate` order whichever path applies them.
            var plain: [(snapshot: SubscriptionSnapshot, cause: AuditCause)] = []
            for message in messages {
                if deliveriesDone, message.plan.isBatchable {
                    if let state = message.plan.state { plain.append((state, .notification(message.id))) }
                    continue
                }
                if !plain.isEmpty {
                    _ = try await applySnapshots(plain, in: uow)
                    plain.removeAll()
                }
                if !deliveriesDone, !message.plan.deliver.isEmpty { try await deliver([message], rules: rules, in: uow) }
                try await applyOwnEffects(message, rules: rules, in: uow)
            }
            _ = try await applySnapshots(plain, in: uow)
            return [:]
        }
        var failures: [String: any Error] = [:]
        var deliveriesDone = deliveriesDone
        if !deliveriesDone {
            // What the store was paid for is delivered even when a message's own effects fail: every message's
            // transactions together first, then each message's plan on its own.
            do {
                try await uow.savepoint("sk_deliveries") { own in
                    try await deliver(messages, rules: rules, in: own)
                }
                deliveriesDone = true
            } catch {
                uow.logger.warning("delivering a batch of messages together failed; delivering them one by one", metadata: ["error": "\(error)"])
            }
        }
        for message in messages {
            do {
                try await uow.savepoint("sk_message") { own in
                    if !deliveriesDone, !message.plan.deliver.isEmpty { try await deliver([message], rules: rules, in: own) }
                    try await applyOwnEffects(message, rules: rules, in: own)
                }
            } catch {
                failures[message.id] = error
            }
        }
        return failures
    }

    /// One message's steps beyond delivery, and its state.
    static func applyOwnEffects(_ planned: PlannedMessage, rules: LedgerRules, in uow: UnitOfWork) async throws {
        let message = planned.message
        let cause = AuditCause.notification(message.id)
        for step in planned.plan.steps {
            switch step {
            case .takeBack(let transaction, let date, let revocation):
                let outcome = try await Revocations.revoke(
                    transactionId: transaction.transactionId,
                    at: date,
                    kind: revocation,
                    revocationType: transaction.commerce.revocationType,
                    revocationPercentage: transaction.commerce.revocationPercentage,
                    policy: rules.coinClawback,
                    decidedAt: message.signedDate,
                    cause: cause,
                    in: uow
                )
                if case .notDelivered = outcome, message.source != .receipt {
                    uow.logger.notice(
                        "refund of a transaction Storekeeper never delivered",
                        metadata: ["storekeeper.transaction.id": "\(transaction.transactionId)", "type": "\(message.label)"]
                    )
                }
            case .reinstate(let transactionId):
                try await Revocations.reinstate(transactionId: transactionId, decidedAt: message.signedDate, cause: cause, in: uow)
            case .extend(let transactionId, let end, let reason):
                try await extend(transactionId, to: end, reason: reason, cause: cause, in: uow)
            case .openRefundQuestion(let transaction, let reason):
                try await openRefundQuestion(about: transaction, reason: reason, message: message, in: uow)
            case .closeRefundQuestion(let transactionId, let decision):
                try await ConsumptionRequestsTable.close(transactionId: transactionId, decision: decision.rawValue, now: uow.now, on: uow.db)
            case .refundSeats(let transaction, let seats):
                try await refundSeats(of: transaction, seats: seats, cause: cause, in: uow)
            case .releaseSeats(let claims):
                try await Ledger.releaseClaims(claims, at: min(message.signedDate, uow.now), reason: "apple_unclaimed", cause: cause, in: uow)
            case .consentRescinded(let install):
                try await consentRescinded(install: install, message: message, in: uow)
            case .note(let transactionId, let action, let detail):
                guard let holder = try await StoreTransactionsTable.delivered(transactionId, on: uow.db)?.user else { continue }
                uow.record(AuditEntry(action: action, user: holder, subject: transactionId, cause: cause, detail: detail, createdAt: uow.now))
            }
        }
        if let snapshot = planned.plan.state {
            _ = try await applySnapshots([(snapshot, cause)], in: uow)
        }
    }

    /// Queues an answer to the store's refund question, and tells the customer's audit trail.
    private static func openRefundQuestion(
        about transaction: VerifiedTransaction,
        reason: String?,
        message: StoreMessage,
        in uow: UnitOfWork
    ) async throws {
        let user = try await StoreTransactionsTable.delivered(transaction.transactionId, on: uow.db)?.user
        let inserted = try await ConsumptionRequestsTable.insert(
            id: message.id,
            bundleId: message.bundleId,
            environment: message.environment.rawValue,
            transactionId: transaction.transactionId,
            originalTransactionId: transaction.originalTransactionId,
            user: user,
            reason: reason,
            requestedAt: message.signedDate,
            now: uow.now,
            on: uow.db
        )
        guard inserted, let user else { return }
        uow.record(
            AuditEntry(
                action: .refundRequested,
                user: user,
                subject: transaction.transactionId,
                cause: .notification(message.id),
                detail: "the customer asked Apple for a refund (\(reason ?? "no reason given")); answer due in 12 hours",
                createdAt: uow.now
            )
        )
    }

    /// Records the seats the store refunded on the purchaser's transaction (the purchaser keeps the rest).
    private static func refundSeats(of transaction: VerifiedTransaction, seats: Int, cause: AuditCause, in uow: UnitOfWork) async throws {
        guard let (user, added) = try await StoreTransactionsTable.recordSeatRefund(transaction.transactionId, seats: seats, on: uow.db) else {
            return
        }
        uow.record(
            AuditEntry(
                action: .transactionRefunded,
                user: user,
                subject: transaction.transactionId,
                amount: Int64(added),
                cause: cause,
                detail:
                    "Apple refunded \(added) seat(s) of \(transaction.productId) (\(seats) of \(transaction.quantity) refunded so far); the subscription stays for the rest",
                createdAt: uow.now
            )
        )
    }

    /// Tells each user whose purchases came from the install that a parent withdrew consent: an audit entry and a
    /// `consent.rescinded` event. Nothing is taken back — Apple did not refund anything; the app's backend decides.
    private static func consentRescinded(install: String, message: StoreMessage, in uow: UnitOfWork) async throws {
        for user in try await StoreTransactionsTable.users(ofAppTransaction: install, bundleId: message.bundleId, on: uow.db) {
            uow.record(
                AuditEntry(
                    action: .consentRescinded,
                    user: user,
                    subject: install,
                    cause: .notification(message.id),
                    detail: "a parent or guardian withdrew consent for this app install (\(message.environment)); the app decides what follows",
                    createdAt: uow.now
                )
            )
            uow.emit(
                LedgerEvent(
                    type: .consentRescinded,
                    user: user,
                    subject: install,
                    occurredAt: uow.now,
                    details: ["appTransactionId": install, "notificationId": message.id, "environment": message.environment.rawValue]
                )
            )
        }
    }

    private static func extend(_ transactionId: String, to end: Date, reason: String, cause: AuditCause, in uow: UnitOfWork) async throws {
        for grant in try await EntitlementGrantsTable.extend(transactionId: transactionId, to: end, on: uow.db) {
            uow.record(
                AuditEntry(
                    action: .entitlementExtended,
                    user: grant.user,
                    subject: grant.entitlement,
                    periodStart: grant.start,
                    periodEnd: end,
                    cause: cause,
                    detail: reason,
                    createdAt: uow.now
                )
            )
        }
    }

    /// Merges snapshots (any number per subscription, folded in `signedDate` order) with one read, one multi-row
    /// upsert, and an audit entry and event per change of state. Returns, per snapshot, whether it was applied.
    @discardableResult
    static func applySnapshots(_ snapshots: [(snapshot: SubscriptionSnapshot, cause: AuditCause)], in uow: UnitOfWork) async throws -> [Bool] {
        guard !snapshots.isEmpty else { return [] }
        let originals = Array(Set(snapshots.map(\.snapshot.originalTransactionId))).sorted()
        var stored = try await SubscriptionsTable.find(originals, lock: true, kind: uow.kind, on: uow.db)
        let owners = try await TransactionOwnersTable.owners(of: Set(originals), on: uow.db)
        var applied = [Bool](repeating: false, count: snapshots.count)
        var changed = Set<String>()
        let order = snapshots.indices.sorted { snapshots[$0].snapshot.signedDate < snapshots[$1].snapshot.signedDate }
        for index in order {
            let (snapshot, cause) = snapshots[index]
            let original = snapshot.originalTransactionId
            let previous = stored[original]
            guard snapshot.isNewer(than: previous) else { continue }
            let merged = SubscriptionSnapshot.merge(snapshot, into: previous)
            stored[original] = merged
            applied[index] = true
            changed.insert(original)
            let state = merged.state ?? .active
            guard let user = owners[original] else { continue }
            let stateChanged = previous?.state != state
            // The backend also hears of a renewal (a new expiry), an auto-renew switch or plan change, and a price
            // increase's consent, which leave the state as it was.
            let termsChanged =
                previous != nil
                && (previous?.expiresAt != merged.expiresAt || previous?.autoRenew != merged.autoRenew
                    || previous?.autoRenewProductId != merged.autoRenewProductId || previous?.priceIncrease != merged.priceIncrease)
            guard stateChanged || termsChanged else { continue }
            if stateChanged {
                var detail = "\(merged.productId) \(merged.event)"
                if let reason = merged.expirationReason, state == .expired || state == .refunded { detail += " (\(reason))" }
                uow.record(
                    AuditEntry(
                        action: .subscription(state),
                        user: user,
                        subject: original,
                        periodEnd: merged.gracePeriodExpiresAt ?? merged.expiresAt,
                        cause: cause,
                        detail: detail,
                        createdAt: uow.now
                    )
                )
            }
            var details = [
                "originalTransactionId": original, "productId": merged.productId, "state": state.rawValue, "event": merged.event,
                "previousState": previous?.state?.rawValue ?? "",
            ]
            if let reason = merged.expirationReason { details["expirationReason"] = reason }
            if let expires = merged.expiresAt { details["expiresAt"] = String(expires.millis) }
            if let grace = merged.gracePeriodExpiresAt { details["gracePeriodExpiresAt"] = String(grace.millis) }
            if let autoRenew = merged.autoRenew { details["autoRenew"] = autoRenew ? "true" : "false" }
            if let next = merged.autoRenewProductId { details["autoRenewProductId"] = next }
            if let consent = merged.priceIncrease { details["priceIncrease"] = consent }
            uow.emit(LedgerEvent(type: .subscriptionChanged, user: user, subject: original, occurredAt: uow.now, details: details))
        }
        try await SubscriptionsTable.upsert(changed.sorted().map { (stored[$0]!, owners[$0]) }, now: uow.now, on: uow.db)
        return applied
    }
}

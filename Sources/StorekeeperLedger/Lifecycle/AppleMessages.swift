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

/// Applies Apple's messages after the purchase in the caller's unit of work: the transactions they carry are
/// delivered by the ``DeliveryPlanner`` with everyone else's, then each message's own effects — refunds and
/// reversals, extensions, refund questions — and the subscription states, merged by Apple's `signedDate`.
enum AppleMessages {
    /// The deliveries the messages carry (transactions of products the catalog knows) with the id of the message each
    /// came in, and the transactions of products it does not (parked).
    static func deliveries(
        of messages: [AppleMessage],
        rules: LedgerRules
    ) -> (requests: [DeliveryRequest], messageIds: [String], unknown: [VerifiedTransaction]) {
        let products = rules.catalog()
        var requests: [DeliveryRequest] = []
        var messageIds: [String] = []
        var unknown: [VerifiedTransaction] = []
        for message in messages where message.effect.deliver {
            for transaction in message.transactions {
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
    static func deliver(_ messages: [AppleMessage], rules: LedgerRules, in uow: UnitOfWork) async throws {
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
            case .failure(let error as StorekeeperError) where error.kind == .refused:
                parked.append((request.transaction, "\(error.code): \(error.message)"))
            case .failure(let error):
                if failed[messageId] == nil { failed[messageId] = error }
            }
        }
        try await PendingTransactionsTable.insert(parked, now: uow.now, on: uow.db)
        return failed
    }

    /// Applies each message's effects (deliveries done already), in `signedDate` order: the ones with only a state
    /// update share set-based statements, the rest go one by one. Without `isolated` the first failure throws (the
    /// caller rolls back and tries again isolated); with it, each message runs in a savepoint and failures are
    /// returned by message id.
    static func applyEffects(
        _ messages: [AppleMessage],
        isolated: Bool,
        deliveriesDone: Bool,
        rules: LedgerRules,
        in uow: UnitOfWork
    ) async throws -> [String: any Error] {
        var failures: [String: any Error] = [:]
        var deliveriesDone = deliveriesDone
        if isolated, !deliveriesDone {
            // What Apple was paid for is delivered even when a message's own effects fail: every message's
            // transactions together first, then each message's effects on its own.
            do {
                try await uow.savepoint("sk_deliveries") { own in
                    try await deliver(messages, rules: rules, in: own)
                }
                deliveriesDone = true
            } catch {
                uow.logger.warning("delivering a batch of messages together failed; delivering them one by one", metadata: ["error": "\(error)"])
            }
        }
        var plain: [AppleMessage] = []
        for message in messages {
            if deliveriesDone, message.isPlain {
                plain.append(message)
                continue
            }
            guard isolated else {
                if !deliveriesDone, message.effect.deliver { try await deliver([message], rules: rules, in: uow) }
                try await applyOwnEffects(message, rules: rules, in: uow)
                continue
            }
            do {
                try await uow.savepoint("sk_message") { own in
                    if !deliveriesDone, message.effect.deliver { try await deliver([message], rules: rules, in: own) }
                    try await applyOwnEffects(message, rules: rules, in: own)
                }
            } catch {
                failures[message.id] = error
            }
        }
        let snapshots = plain.compactMap { message in message.snapshot.map { ($0, AuditCause.notification(message.id)) } }
        guard isolated else {
            _ = try await applySnapshots(snapshots, in: uow)
            return failures
        }
        do {
            try await uow.savepoint("sk_states") { own in
                _ = try await applySnapshots(snapshots, in: own)
            }
        } catch {
            for message in plain {
                do {
                    try await uow.savepoint("sk_message") { own in
                        try await applyOwnEffects(message, rules: rules, in: own)
                    }
                } catch {
                    failures[message.id] = error
                }
            }
        }
        return failures
    }

    /// One message's effects beyond delivery, and its state.
    static func applyOwnEffects(_ message: AppleMessage, rules: LedgerRules, in uow: UnitOfWork) async throws {
        let effect = message.effect
        let cause = AuditCause.notification(message.id)
        if message.format == "v1" {
            // The confirmed receipt is the whole truth: every cancelled entry is taken back from its cancellation
            // date (refunds, and the upgrade/crossgrade CANCEL variants alike).
            for transaction in message.cancelled {
                guard let date = transaction.revocationDate else { continue }
                _ = try await Revocations.revoke(
                    transactionId: transaction.transactionId,
                    at: date,
                    kind: message.type == "REVOKE" ? .revoke : .refund,
                    revocationType: transaction.commerce.revocationType,
                    revocationPercentage: transaction.commerce.revocationPercentage,
                    policy: rules.coinClawback,
                    decidedAt: message.signedDate,
                    cause: cause,
                    in: uow
                )
            }
        } else if let focus = message.focus {
            if let revocation = effect.revoke ?? (focus.revocationDate != nil && message.type == "STATUS" ? .refund : nil) {
                let outcome = try await Revocations.revoke(
                    transactionId: focus.transactionId,
                    at: focus.revocationDate ?? message.signedDate,
                    kind: revocation,
                    revocationType: focus.commerce.revocationType,
                    revocationPercentage: focus.commerce.revocationPercentage,
                    policy: rules.coinClawback,
                    decidedAt: message.signedDate,
                    cause: cause,
                    in: uow
                )
                if case .notDelivered = outcome {
                    uow.logger.notice(
                        "refund of a transaction Storekeeper never delivered",
                        metadata: ["storekeeper.transaction.id": "\(focus.transactionId)", "type": "\(message.type)"]
                    )
                }
            }
            if effect.reinstate {
                try await Revocations.reinstate(transactionId: focus.transactionId, decidedAt: message.signedDate, cause: cause, in: uow)
            }
            if effect.extendToExpiry, let expires = focus.expiresDate, focus.revocationDate == nil {
                try await extend(focus.transactionId, to: expires, reason: "Apple extended the renewal date", cause: cause, in: uow)
            }
            if effect.extendToGracePeriodEnd, let grace = message.snapshot?.gracePeriodExpiresAt {
                try await extend(
                    focus.transactionId,
                    to: grace,
                    reason: "billing grace period: service continues while Apple retries the charge",
                    cause: cause,
                    in: uow
                )
            }
            if effect.answerConsumptionRequest {
                let user = try await AppleTransactionsTable.delivered(focus.transactionId, on: uow.db)?.user
                let inserted = try await ConsumptionRequestsTable.insert(
                    id: message.id,
                    bundleId: message.bundleId,
                    environment: message.environment,
                    transactionId: focus.transactionId,
                    originalTransactionId: focus.originalTransactionId,
                    user: user,
                    reason: message.consumptionReason,
                    requestedAt: message.signedDate,
                    now: uow.now,
                    on: uow.db
                )
                if inserted, let user {
                    uow.record(
                        AuditEntry(
                            action: .refundRequested,
                            user: user,
                            subject: focus.transactionId,
                            cause: cause,
                            detail:
                                "the customer asked Apple for a refund (\(message.consumptionReason ?? "no reason given")); answer due in 12 hours",
                            createdAt: uow.now
                        )
                    )
                }
            }
            if effect.closeConsumptionRequest {
                try await ConsumptionRequestsTable.close(transactionId: focus.transactionId, decision: message.type, now: uow.now, on: uow.db)
            }
        }
        if message.type == "REFUND", message.subtype == "SEATS", let focus = message.focus, let seats = focus.commerce.refundedSeats,
            let (user, added) = try await AppleTransactionsTable.recordSeatRefund(focus.transactionId, seats: seats, on: uow.db)
        {
            uow.record(
                AuditEntry(
                    action: .transactionRefunded,
                    user: user,
                    subject: focus.transactionId,
                    amount: Int64(added),
                    cause: cause,
                    detail:
                        "Apple refunded \(added) seat(s) of \(focus.productId) (\(seats) of \(focus.quantity) refunded so far); the subscription stays for the rest",
                    createdAt: uow.now
                )
            )
        }
        if effect.releaseSeats, !message.unclaimSeatIds.isEmpty {
            try await Ledger.releaseClaims(
                message.unclaimSeatIds,
                at: min(message.signedDate, uow.now),
                reason: "apple_unclaimed",
                cause: cause,
                in: uow
            )
        }
        if message.type == "RESCIND_CONSENT", let install = message.appTransactionId {
            try await consentRescinded(install: install, message: message, in: uow)
        }
        if let snapshot = message.snapshot {
            _ = try await applySnapshots([(snapshot, cause)], in: uow)
        }
    }

    /// Tells each user whose purchases came from the install that a parent withdrew consent: an audit entry and a
    /// `consent.rescinded` event. Nothing is taken back — Apple did not refund anything; the app's backend decides.
    private static func consentRescinded(install: String, message: AppleMessage, in uow: UnitOfWork) async throws {
        for user in try await AppleTransactionsTable.users(ofAppTransaction: install, bundleId: message.bundleId, on: uow.db) {
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
                    details: ["appTransactionId": install, "notificationId": message.id, "environment": message.environment]
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

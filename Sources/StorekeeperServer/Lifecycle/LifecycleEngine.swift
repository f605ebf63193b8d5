import Foundation
import Logging
import SQLKit
import StorekeeperCore
import StorekeeperStorage

/// Applies Apple's lifecycle messages to Storekeeper's records inside one database transaction per batch.
///
/// First every transaction the batch carries is delivered with the ledger's set-based path (exactly once, on the
/// transaction id's unique key; unseen transactions get their record or are parked), then each message's own
/// effects run in `signedDate` order, each in a savepoint so one failing message never undoes its neighbours.
struct LifecycleEngine: Sendable {
    let catalog: CatalogService
    let policy: TransferPolicy
    let clawback: CoinClawbackPolicy
    let kind: DatabaseKind
    let logger: Logger

    /// Applies `messages` (already in `signedDate` order) on `db`; returns the ids that failed, with why.
    ///
    /// `isolated: false` skips the savepoints: the first failure throws, and the caller rolls back and retries.
    func apply(
        _ messages: [LifecycleMessage], isolated: Bool = true, now: Date, on db: any SQLDatabase
    ) async throws -> [String: any Error] {
        if !isolated { return try await applyUnisolated(messages, now: now, on: db) }
        let products = catalog.catalog
        var requests: [DeliveryRequest] = []
        var unknown: [VerifiedTransaction] = []
        for message in messages where message.effect.deliver {
            for transaction in message.transactions {
                if let product = products.product(transaction.productId) {
                    requests.append(
                        DeliveryRequest(transaction: transaction, product: product, orderId: nil, submitter: nil, policy: policy))
                } else {
                    unknown.append(transaction)
                }
            }
        }
        var bulkDelivered = true
        do {
            try await withSavepoint("sk_deliveries", on: db) {
                for transaction in unknown {
                    try await PurchaseLedger.park(transaction, reason: "unknown product \(transaction.productId)", now: now, on: db)
                }
                if !requests.isEmpty { _ = try await PurchaseLedger.deliverBatch(requests, now: now, kind: kind, on: db) }
            }
        } catch {
            // One poisoned delivery must not hold the batch: each message delivers its own below.
            logger.warning("bulk delivery of a notification batch failed; delivering one by one", metadata: ["error": "\(error)"])
            bulkDelivered = false
        }
        var failures: [String: any Error] = [:]
        // Messages that only deliver and update state share set-based statements; the rest (refunds, reversals,
        // extensions, refund questions) go one by one, each in its savepoint.
        var plain: [LifecycleMessage] = []
        var special: [LifecycleMessage] = []
        for message in messages {
            if bulkDelivered, Self.isPlain(message) { plain.append(message) } else { special.append(message) }
        }
        for message in special {
            do {
                try await withSavepoint("sk_message", on: db) {
                    if !bulkDelivered, message.effect.deliver { try await deliver(message, products: products, now: now, on: db) }
                    try await applyEffects(message, now: now, on: db)
                }
            } catch {
                failures[message.id] = error
            }
        }
        let snapshots = plain.compactMap { message in message.snapshot.map { ($0, "notification:\(message.id)") } }
        do {
            try await withSavepoint("sk_states", on: db) {
                _ = try await LifecycleLedger.applySnapshots(snapshots, now: now, kind: kind, on: db)
            }
        } catch {
            logger.warning("bulk state update failed; applying one by one", metadata: ["error": "\(error)"])
            for message in plain {
                do {
                    try await withSavepoint("sk_message", on: db) { try await applyEffects(message, now: now, on: db) }
                } catch {
                    failures[message.id] = error
                }
            }
        }
        return failures
    }

    private func applyUnisolated(_ messages: [LifecycleMessage], now: Date, on db: any SQLDatabase) async throws -> [String: any Error] {
        let products = catalog.catalog
        var requests: [DeliveryRequest] = []
        for message in messages where message.effect.deliver {
            for transaction in message.transactions {
                if let product = products.product(transaction.productId) {
                    requests.append(
                        DeliveryRequest(transaction: transaction, product: product, orderId: nil, submitter: nil, policy: policy))
                } else {
                    try await PurchaseLedger.park(transaction, reason: "unknown product \(transaction.productId)", now: now, on: db)
                }
            }
        }
        if !requests.isEmpty { _ = try await PurchaseLedger.deliverBatch(requests, now: now, kind: kind, on: db) }
        var plain: [(SubscriptionSnapshot, String)] = []
        for message in messages {
            if Self.isPlain(message) {
                if let snapshot = message.snapshot { plain.append((snapshot, "notification:\(message.id)")) }
            } else {
                try await applyEffects(message, now: now, on: db)
            }
        }
        _ = try await LifecycleLedger.applySnapshots(plain, now: now, kind: kind, on: db)
        return [:]
    }

    /// Whether a message's only effects are delivery and a state update (the common case: purchases, renewals,
    /// renewal preference and status changes, expiries).
    static func isPlain(_ message: LifecycleMessage) -> Bool {
        let effect = message.effect
        return message.format == "v2" && effect.revoke == nil && !effect.reinstate && !effect.extendToExpiry
            && !effect.extendToGracePeriodEnd && !effect.answerConsumptionRequest && !effect.closeConsumptionRequest
            && message.focus?.revocationDate == nil
    }

    private func deliver(_ message: LifecycleMessage, products: Catalog, now: Date, on db: any SQLDatabase) async throws {
        for transaction in message.transactions {
            guard let product = products.product(transaction.productId) else {
                try await PurchaseLedger.park(transaction, reason: "unknown product \(transaction.productId)", now: now, on: db)
                continue
            }
            _ = try await PurchaseLedger.deliver(
                transaction, product: product, orderId: nil, submitter: nil, policy: policy, now: now, kind: kind, on: db)
        }
    }

    private func applyEffects(_ message: LifecycleMessage, now: Date, on db: any SQLDatabase) async throws {
        let effect = message.effect
        let cause = "notification:\(message.id)"
        if message.format == "v1" {
            // The confirmed receipt is the whole truth: every cancelled entry is taken back from its cancellation
            // date (refunds, and the upgrade/crossgrade CANCEL variants alike).
            for transaction in message.cancelled {
                guard let date = transaction.revocationDate else { continue }
                _ = try await LifecycleLedger.revoke(
                    transactionId: transaction.transactionId, at: date, kind: message.type == "REVOKE" ? .revoke : .refund,
                    policy: clawback, decidedAt: message.signedDate, cause: cause, now: now, kind: kind, on: db)
            }
        } else if let focus = message.focus {
            if let revocation = effect.revoke ?? (focus.revocationDate != nil && message.type == "STATUS" ? .refund : nil) {
                let outcome = try await LifecycleLedger.revoke(
                    transactionId: focus.transactionId, at: focus.revocationDate ?? message.signedDate, kind: revocation,
                    policy: clawback, decidedAt: message.signedDate, cause: cause, now: now, kind: kind, on: db)
                if case .notDelivered = outcome {
                    logger.notice(
                        "refund of a transaction Storekeeper never delivered",
                        metadata: ["storekeeper.transaction.id": "\(focus.transactionId)", "type": "\(message.type)"])
                }
            }
            if effect.reinstate {
                try await LifecycleLedger.reinstate(
                    transactionId: focus.transactionId, decidedAt: message.signedDate, cause: cause, now: now, kind: kind, on: db)
            }
            if effect.extendToExpiry, let expires = focus.expiresDate, focus.revocationDate == nil {
                try await LifecycleLedger.extendGrant(
                    transactionId: focus.transactionId, to: expires, reason: "Apple extended the renewal date", cause: cause,
                    now: now, on: db)
            }
            if effect.extendToGracePeriodEnd, let grace = message.snapshot?.gracePeriodExpiresAt {
                try await LifecycleLedger.extendGrant(
                    transactionId: focus.transactionId, to: grace,
                    reason: "billing grace period: service continues while Apple retries the charge", cause: cause, now: now,
                    on: db)
            }
            if effect.answerConsumptionRequest {
                try await LifecycleLedger.queueConsumptionRequest(
                    id: message.id, bundleId: message.bundleId, environment: message.environment,
                    transactionId: focus.transactionId, originalTransactionId: focus.originalTransactionId,
                    reason: message.consumptionReason, requestedAt: message.signedDate, now: now, on: db)
            }
            if effect.closeConsumptionRequest {
                try await LifecycleLedger.closeConsumptionRequests(
                    transactionId: focus.transactionId, decision: message.type, now: now, on: db)
            }
        }
        if let snapshot = message.snapshot {
            try await LifecycleLedger.applySnapshot(snapshot, cause: cause, now: now, kind: kind, on: db)
        }
    }
}

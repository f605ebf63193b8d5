import AppStoreWire
import Foundation
import Logging
import StorekeeperCore
import StorekeeperLedger

/// Turns what a client sends (a StoreKit 2 signed transaction, a legacy receipt, a restored history) into
/// deliveries: verify with AppStoreWire, map Apple's payload to a ``VerifiedTransaction``, look the product up, and
/// deliver through the ``Ledger``.
public struct PurchaseService: Sendable {
    /// The result for one transaction inside a receipt or a restore.
    public enum ItemResult: Sendable {
        case delivered(Delivery)
        case refused(transactionId: String?, error: StorekeeperError)
    }

    let apps: AppRegistry
    let catalog: CatalogService
    let ledger: Ledger
    let policy: TransferPolicy
    let metrics: ServerMetrics
    let logger: Logger

    public init(
        apps: AppRegistry,
        catalog: CatalogService,
        ledger: Ledger,
        policy: TransferPolicy,
        metrics: ServerMetrics,
        logger: Logger
    ) {
        self.apps = apps
        self.catalog = catalog
        self.ledger = ledger
        self.policy = policy
        self.metrics = metrics
        self.logger = logger
    }

    // MARK: StoreKit 2

    /// Verifies and delivers one signed transaction. Throws a ``StorekeeperError`` whose `outcome` tells the client
    /// whether to finish the transaction.
    public func submitSignedTransaction(
        _ jws: String,
        orderId: String?,
        identity: ClientIdentity,
        source: VerifiedTransaction.Source = .signedTransaction
    ) async throws -> DeliveryResult {
        let transaction = try await verify(jws, source: source)
        return try await deliver(transaction, orderId: orderId, identity: identity)
    }

    /// Verifies a signed transaction against the app it names.
    func verify(_ jws: String, source: VerifiedTransaction.Source) async throws -> VerifiedTransaction {
        let app: AppRegistry.App
        if apps.apps.count == 1 {
            app = apps.apps[0]
        } else {
            let bundleId: String?
            do {
                bundleId = try SignedDataVerifier.decodeUnverified(jws, as: BundleProbe.self).payload.bundleId
            } catch {
                throw StorekeeperError.rejected(.invalidInput, error.code, "signed transaction: \(error.message)")
            }
            guard let found = bundleId.flatMap(apps.app(bundleId:)) else {
                throw PurchaseRefusal.wrongApp("the signed transaction is for an app this server does not serve")
            }
            app = found
        }
        let payload: JWSTransactionDecodedPayload
        do {
            payload = try await app.verifier.verifyTransaction(jws)
        } catch {
            metrics.verificationFailed(reason: error.code)
            throw PurchaseRefusal.unverified(code: error.code, message: error.message)
        }
        guard let transaction = VerifiedTransaction(payload: payload, signedData: jws, source: source) else {
            throw PurchaseRefusal.incompleteTransaction("the signed transaction lacks an id, product or purchase date")
        }
        try checkEnvironment(transaction, app: app)
        return transaction
    }

    private struct BundleProbe: Decodable { var bundleId: String? }

    private func checkEnvironment(_ transaction: VerifiedTransaction, app: AppRegistry.App) throws {
        if transaction.isSandbox && !app.configuration.allowSandbox {
            throw PurchaseRefusal.sandboxNotAllowed
        }
    }

    /// Delivers a verified transaction, mapping the ledger's answer to the client's.
    func deliver(_ transaction: VerifiedTransaction, orderId: String?, identity: ClientIdentity) async throws -> DeliveryResult {
        if transaction.revocationDate != nil {
            throw PurchaseRefusal.revoked(transactionId: transaction.transactionId)
        }
        guard let product = catalog.catalog.product(transaction.productId) else {
            try await ledger.park(transaction, reason: "unknown product \(transaction.productId)", submitter: identity.user)
            logger.error(
                "verified purchase of a product the catalog lacks; parked for recovery",
                metadata: ["storekeeper.transaction.id": "\(transaction.transactionId)", "product": "\(transaction.productId)"]
            )
            throw PurchaseRefusal.unknownProduct(transaction.productId)
        }
        if let problem = DeliveryRules.problem(for: product, transaction: transaction) {
            // Apple was paid: kept for support, never dropped, never a trap.
            try await ledger.park(transaction, reason: problem.apiError.message, submitter: identity.user)
            logger.error(
                "verified purchase cannot be delivered as the catalog stands; parked",
                metadata: ["storekeeper.transaction.id": "\(transaction.transactionId)", "problem": "\(problem.apiError.code)"]
            )
            throw problem
        }
        let result = try await ledger.deliver(
            DeliveryRequest(transaction: transaction, product: product, orderId: orderId, submitter: identity.user, policy: policy)
        )
        switch result {
        case .delivered(let delivery):
            if !delivery.riskFlags.isEmpty {
                logger.notice(
                    "delivered with a risk flag",
                    metadata: ["storekeeper.transaction.id": "\(delivery.transactionId)", "flags": "\(delivery.riskFlags)"]
                )
            }
            metrics.delivered(
                kind: product.kind.rawValue,
                environment: transaction.environment.rawValue,
                result: delivery.newlyDelivered ? "new" : "repeat"
            )
            if delivery.newlyDelivered {
                logger.info(
                    "delivered",
                    metadata: [
                        "storekeeper.transaction.id": "\(delivery.transactionId)", "product": "\(delivery.productId)",
                        "user": "\(delivery.user)", "environment": "\(delivery.environment)",
                    ]
                )
            }
        case .ownedByAnotherUser(let id):
            logger.notice(
                "transaction claimed by another user refused",
                metadata: ["storekeeper.transaction.id": "\(id)", "caller": "\(identity.method)"]
            )
            throw PurchaseRefusal.ownedByAnotherUser(transactionId: id)
        case .parked(let id):
            logger.notice("purchase without a user parked for recovery", metadata: ["storekeeper.transaction.id": "\(id)"])
        }
        return result
    }

    /// Delivers a parked purchase to `user` on an operator's word (the product must be in the catalog now).
    public func assign(_ transaction: VerifiedTransaction, to user: UserID, admin: String, reason: String) async throws -> Delivery {
        guard let product = catalog.catalog.product(transaction.productId) else {
            throw StorekeeperError(.conflict, code: "unknown_product", message: "add \(transaction.productId) to the catalog first")
        }
        if let problem = DeliveryRules.problem(for: product, transaction: transaction) { throw problem }
        let delivery = try await ledger.assign(transaction, product: product, to: user, admin: admin, reason: reason)
        metrics.delivered(kind: product.kind.rawValue, environment: transaction.environment.rawValue, result: "new")
        metrics.riskFlags(delivery.riskFlags)
        return delivery
    }

    // MARK: Legacy receipts

    /// Verifies a legacy app receipt with Apple's `verifyReceipt` and delivers every transaction in it not yet
    /// delivered (seed 000's 找回 and seed 002's 漏单). With `transactionId`, the answer's outcome is that
    /// transaction's; `orderId` attributes only that transaction.
    public func submitReceipt(
        _ receipt: String,
        transactionId: String?,
        orderId: String?,
        bundleId: String?,
        identity: ClientIdentity
    ) async throws -> [ItemResult] {
        guard let app = apps.app(named: bundleId) else {
            throw PurchaseRefusal.wrongApp("name the app's bundleId: this server serves several")
        }
        guard receipt.utf8.count <= 768 * 1024 else {
            throw PurchaseRefusal.receiptTooLarge
        }
        // Apple can only say no to something that is not a receipt, and a retry would ask again forever: refuse here.
        guard Self.looksLikeReceipt(receipt) else {
            throw PurchaseRefusal.malformedReceipt
        }
        let started = DispatchTime.now().uptimeNanoseconds
        let outcome = await app.receipts.verify(receiptData: receipt)
        let elapsed = DispatchTime.now().uptimeNanoseconds - started
        let response: VerifyReceiptResponse
        switch outcome {
        case .retryLater(let reason):
            metrics.appleCall(endpoint: "verifyReceipt", outcome: "retry", nanoseconds: elapsed)
            throw PurchaseRefusal.storeUndecided("verifyReceipt did not decide: \(reason)")
        case .invalid(let status, let reason):
            metrics.appleCall(endpoint: "verifyReceipt", outcome: "invalid", nanoseconds: elapsed)
            metrics.verificationFailed(reason: "receipt_\(status.rawValue)")
            throw PurchaseRefusal.invalidReceipt(status: Int(status.rawValue), reason: reason)
        case .valid(let valid):
            metrics.appleCall(endpoint: "verifyReceipt", outcome: "valid", nanoseconds: elapsed)
            response = valid
        }
        var seen = Set<String>()
        var entries: [LegacyTransaction] = []
        for entry in (response.receipt?.inApp ?? []) + (response.latestReceiptInfo ?? []) {
            guard let id = entry.transactionId, seen.insert(id).inserted else { continue }
            entries.append(entry)
        }
        if let transactionId, !seen.contains(transactionId) {
            throw PurchaseRefusal.notInReceipt(transactionId: transactionId)
        }
        let environment = StoreEnvironment(storeName: response.environment?.rawValue ?? "Production")
        var results: [ItemResult] = []
        for entry in entries {
            guard let transaction = VerifiedTransaction(legacy: entry, bundleId: app.configuration.bundleId, environment: environment)
            else {
                results.append(.refused(transactionId: entry.transactionId, error: .rejected("incomplete_transaction", "receipt entry lacks fields")))
                continue
            }
            let id = transaction.transactionId
            do {
                try checkEnvironment(transaction, app: app)
                let result = try await deliver(
                    transaction,
                    orderId: id == transactionId ? orderId : nil,
                    identity: identity
                )
                switch result {
                case .delivered(let delivery): results.append(.delivered(delivery))
                case .parked(let id):
                    results.append(
                        .refused(
                            transactionId: id,
                            error: PurchaseRefusal.unattributed.apiError
                        )
                    )
                case .ownedByAnotherUser: break
                }
            } catch let failure as any StorekeeperFailure {
                let error = failure.apiError
                results.append(.refused(transactionId: id, error: error))
            }
        }
        await followSubscriptions(in: response, receipt: receipt, app: app)
        return results
    }

    /// Whether `receipt` can be a receipt at all: base64 (whitespace allowed) of a PKCS#7 container (an ASN.1
    /// SEQUENCE) or of an iOS 6 transaction receipt (a text property list, `{`).
    static func looksLikeReceipt(_ receipt: String) -> Bool {
        let compact = receipt.filter { !$0.isWhitespace }
        guard compact.utf8.count >= 16, let data = Data(base64Encoded: compact), let first = data.first else { return false }
        return first == 0x30 || first == UInt8(ascii: "{")
    }

    /// Keeps the receipt's subscriptions and its latest receipt, so the renewal sweep can ask `verifyReceipt` about
    /// them later (an app without a Server API key has no other way to hear of a renewal it was not told about).
    private func followSubscriptions(in response: VerifyReceiptResponse, receipt: String, app: AppRegistry.App) async {
        let products = catalog.catalog
        let originals = Set(
            (response.latestReceiptInfo ?? []).compactMap { entry -> String? in
                guard let productId = entry.productId, products.product(productId)?.kind == .autoRenewable else { return nil }
                return entry.originalTransactionId ?? entry.transactionId
            }
        )
        let now = Date()
        let snapshots = originals.sorted().compactMap {
            StoreMessage.receiptStatus(
                original: $0,
                response: response,
                bundleId: app.configuration.bundleId,
                now: now,
                datedByPurchase: true
            ).snapshot
        }
        do {
            try await ledger.recordReceipt(response.latestReceipt ?? receipt, snapshots: snapshots)
        } catch {
            // The purchases are delivered; only the follow-up record is missing until the next receipt.
            logger.warning("could not record the receipt's subscriptions", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Restore

    /// Verifies and delivers a StoreKit 2 transaction history (`Transaction.all`): the StoreKit 2 recovery path.
    public func restore(_ signedTransactions: [String], identity: ClientIdentity) async throws -> [ItemResult] {
        // All at once: the ledger combines concurrent deliveries into a few batches, each one commit, where one at a
        // time cost a commit (an fsync on SQLite) per transaction. Answered in the order sent.
        // A transaction the database fails to record is answered `retry` on its own while the rest are delivered; only
        // when nothing could be recorded does the request fail as a whole (the database is down: a 5xx).
        try await withThrowingTaskGroup(of: (Int, ItemResult?, (any Error)?).self) { group in
            for (index, jws) in signedTransactions.enumerated() {
                group.addTask {
                    do {
                        let transaction = try await verify(jws, source: .restore)
                        do {
                            switch try await deliver(transaction, orderId: nil, identity: identity) {
                            case .delivered(let delivery): return (index, .delivered(delivery), nil)
                            case .parked(let id):
                                return (
                                    index,
                                    .refused(
                                        transactionId: id,
                                        error: PurchaseRefusal.unattributed.apiError
                                    ),
                                    nil
                                )
                            case .ownedByAnotherUser: return (index, nil, nil)
                            }
                        } catch let error where !(error is any StorekeeperFailure) {
                            let failed = PurchaseRefusal.notRecorded.apiError
                            return (index, .refused(transactionId: transaction.transactionId, error: failed), error)
                        }
                    } catch let failure as any StorekeeperFailure {
                        let error = failure.apiError
                        return (index, .refused(transactionId: nil, error: error), nil)
                    }
                }
            }
            var results: [(Int, ItemResult)] = []
            var faults: [any Error] = []
            for try await (index, result, fault) in group {
                if let result { results.append((index, result)) }
                if let fault { faults.append(fault) }
            }
            if let fault = faults.first {
                logger.error("restore: \(faults.count) of \(signedTransactions.count) transactions not recorded", metadata: ["error": "\(fault)"])
                if faults.count == results.count { throw fault }
            }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }
}

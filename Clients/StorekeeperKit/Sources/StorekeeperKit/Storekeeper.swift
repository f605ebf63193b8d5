import Foundation
import OpenAPIRuntime
import StorekeeperAPI

/// The app's one object for purchases: buy, and recover at launch what an earlier launch left unfinished.
///
/// A purchase goes: create the order on the server → StoreKit's purchase sheet with the order's
/// `appAccountToken` → the signed transaction into the journal (durably, before anything else) → submitted →
/// `finish()` only once the server answered `delivered` or `rejected`. Anything else leaves it in the journal and
/// unfinished in StoreKit, to be submitted again with backoff and at every launch.
public actor Storekeeper {
    /// What a purchase came to, for the app to tell its user.
    public enum PurchaseOutcome: Sendable, Hashable {
        /// Delivered (the user has it now).
        case delivered
        /// The user cancelled; the order was cancelled too.
        case cancelled
        /// Waiting for approval or payment; it will be delivered when it completes.
        case pending
        /// Charged and safe in the journal, not yet delivered (the server was unreachable or asked to retry); it
        /// will be, without the user doing anything.
        case deliveringLater(reason: String)
        /// The server refused it for good (for example a transaction of another app).
        case rejected(code: String)
    }

    /// A step of a purchase, told to the app's `progress` observer as it happens (for its logs), and awaited: the
    /// purchase goes on when the observer returns.
    public enum Progress: Sendable, Hashable {
        /// The server created the order.
        case ordered(orderId: String)
        /// The App Store charged; StoreKit holds the transaction unfinished.
        case charged(transactionId: String)
        /// The signed transaction is durably in the journal.
        case journaled(transactionId: String)
        /// The server answered for it (or did not); `finish()` was called when it settled.
        case submitted(transactionId: String, settlement: PurchaseSubmitter.Settlement)
    }

    /// The server did not accept the order (an unknown product, a credential it refused, an outage).
    public struct OrderFailed: Error, CustomStringConvertible {
        public var status: Int
        public var description: String { "the server did not create the order (\(status))" }
    }

    private let api: any APIProtocol
    private let journal: PurchaseJournal
    private let submitter: PurchaseSubmitter
    private let store: StoreKitAdapter
    private let progress: @Sendable (Progress) async -> Void
    private let verifiesAnswers: Bool
    private var cachedInfo: CustomerInfo?
    private var watchers: [UUID: AsyncStream<CustomerInfo>.Continuation] = [:]

    /// - Parameters:
    ///   - journalURL: where the journal lives (in Application Support, excluded from backups).
    ///   - answers: checks the server's signed customer-info answers against the public key pinned in the app
    ///     (the server's `auth.answerSigningKey`); `nil` believes them as sent, for development only.
    ///   - progress: told each step of a purchase (for the app's logs).
    ///   - credentials: the user's current credentials, read for every request.
    public init(
        serverURL: URL,
        journalURL: URL,
        answers: AnswerVerifier?,
        retry: RetryPolicy = RetryPolicy(),
        progress: @escaping @Sendable (Progress) async -> Void = { _ in },
        credentials: @escaping @Sendable () async -> Credentials?
    ) throws {
        self.init(
            api: StorekeeperConnection.client(serverURL: serverURL, answers: answers, credentials: credentials),
            journal: try PurchaseJournal(url: journalURL),
            retry: retry,
            verifiesAnswers: answers != nil,
            progress: progress
        )
    }

    init(
        api: any APIProtocol,
        journal: PurchaseJournal,
        retry: RetryPolicy = RetryPolicy(),
        verifiesAnswers: Bool = false,
        progress: @escaping @Sendable (Progress) async -> Void = { _ in }
    ) {
        let store = StoreKitAdapter()
        self.api = api
        self.journal = journal
        self.store = store
        self.progress = progress
        self.verifiesAnswers = verifiesAnswers
        self.submitter = PurchaseSubmitter(journal: journal, api: api, retry: retry) { await store.finish(transactionId: $0) }
    }

    /// Buys `productId` for the signed-in user; with `offer`, at the promotional offer with that id (the server
    /// signs it for this user, and refuses an offer the user may not have).
    public func purchase(_ productId: String, offer offerId: String? = nil) async throws -> PurchaseOutcome {
        let order: Components.Schemas.Order
        switch try await api.createOrder(body: .json(.init(productId: productId))) {
        case .created(let created): order = try created.body.json
        case .badRequest: throw OrderFailed(status: 400)
        case .unauthorized: throw OrderFailed(status: 401)
        case .notFound: throw OrderFailed(status: 404)
        case .conflict: throw OrderFailed(status: 409)
        case .undocumented(let status, _): throw OrderFailed(status: status)
        default: throw OrderFailed(status: 0)
        }
        guard let token = UUID(uuidString: order.appAccountToken) else { throw OrderFailed(status: 200) }
        await progress(.ordered(orderId: order.orderId))
        var signedOffer: StoreKitAdapter.SignedOffer?
        if let offerId { signedOffer = try await signOffer(offerId, productId: productId, appAccountToken: token) }
        let step: StoreKitAdapter.PurchaseStep
        do {
            step = try await store.purchase(productId: productId, appAccountToken: token, offer: signedOffer)
        } catch {
            // StoreKit failed before charging (no product, no network, payments disabled): the order is void.
            _ = try? await api.cancelOrder(path: .init(id: order.orderId))
            throw error
        }
        switch step {
        case .cancelled:
            _ = try? await api.cancelOrder(path: .init(id: order.orderId))
            return .cancelled
        case .pending:
            return .pending
        case .purchased(let transactionId, let jws):
            await progress(.charged(transactionId: transactionId))
            try await journal.record(
                .init(id: transactionId, payload: .purchase(signedTransaction: jws, orderId: order.orderId), createdAt: Date())
            )
            await progress(.journaled(transactionId: transactionId))
            let settled = try await submitter.submitDue()
            if let settlement = settled[transactionId] { await progress(.submitted(transactionId: transactionId, settlement: settlement)) }
            await scheduleRetry()
            switch settled[transactionId] {
            case .delivered: return .delivered
            case .rejected(let code): return .rejected(code: code)
            case .kept(let reason): return .deliveringLater(reason: reason)
            case nil: return .deliveringLater(reason: "waiting for an earlier attempt's backoff")
            }
        }
    }

    /// The server would not sign the offer (not this user's to take, an unknown offer, no key configured).
    public struct OfferRefused: Error, CustomStringConvertible {
        public var status: Int
        public var code: String?
        public var description: String { "the server did not sign the offer (\(status) \(code ?? ""))" }
    }

    /// Which offer signature to ask for: v2 where StoreKit takes it (iOS 18.4+), v1 before; the tests choose.
    var offerSignatureVersion: Components.Schemas.OfferSignatureRequest.VersionPayload?

    private func signOffer(_ offerId: String, productId: String, appAccountToken: UUID) async throws -> StoreKitAdapter.SignedOffer {
        let version = offerSignatureVersion ?? (store.takesOfferJWS ? .v2 : .v1)
        let request = Components.Schemas.OfferSignatureRequest(
            productId: productId,
            offerId: offerId,
            version: version,
            appAccountToken: version == .v1 ? appAccountToken.uuidString.lowercased() : nil
        )
        let answer: Components.Schemas.OfferSignatureAnswer
        switch try await api.signOffer(body: .json(request)) {
        case .ok(let ok): answer = try ok.body.json
        case .undocumented(let status, _): throw OfferRefused(status: status)
        case .badRequest(let refusal): throw OfferRefused(status: 400, code: try? refusal.body.json.code)
        case .forbidden(let refusal): throw OfferRefused(status: 403, code: try? refusal.body.json.code)
        case .notFound(let refusal): throw OfferRefused(status: 404, code: try? refusal.body.json.code)
        case .conflict(let refusal): throw OfferRefused(status: 409, code: try? refusal.body.json.code)
        case .unauthorized: throw OfferRefused(status: 401)
        default: throw OfferRefused(status: 500)
        }
        switch answer.version {
        case .v2:
            return .v2(offerId: answer.offerId, jws: answer.signature)
        case .v1:
            guard let key = answer.keyIdentifier, let nonce = UUID(uuidString: answer.nonce), let timestamp = answer.timestamp,
                let signature = Data(base64Encoded: answer.signature), let milliseconds = Int(exactly: timestamp)
            else { throw OfferRefused(status: 200, code: "unusable_signature") }
            return .v1(offerId: answer.offerId, keyIdentifier: key, nonce: nonce, signature: signature, timestamp: milliseconds)
        }
    }

    // MARK: Launch, listeners

    private var listeners: [Task<Void, Never>] = []

    /// At launch, once: recovers what an earlier launch left (``resume(now:)``), then listens for transactions that
    /// do not come from ``purchase(_:offer:)`` — Ask to Buy approvals, renewals, refunds seen on the device, purchases
    /// on other devices — and for promoted in-app purchases the user starts on the App Store. Each transaction goes
    /// through the journal like a purchase; a promoted purchase runs ``purchase(_:offer:)`` when `promoted` says so
    /// (return `false` to hold it, for example until the user has signed in).
    public func start(promoted: @escaping @Sendable (_ productId: String) async -> Bool = { _ in true }) async throws {
        guard listeners.isEmpty else { return }
        try await resume()
        let updates = store.updates()
        listeners.append(
            Task { [weak self] in
                for await (transactionId, jws) in updates {
                    guard let self else { return }
                    await self.ingest(transactionId: transactionId, signedTransaction: jws)
                }
            }
        )
        started = true
        await scheduleRetry()
        let intents = store.purchaseIntents()
        listeners.append(
            Task { [weak self] in
                for await productId in intents where await promoted(productId) {
                    guard let self else { return }
                    _ = try? await self.purchase(productId)
                }
            }
        )
    }

    /// Stops the listeners and the retries (the journal keeps whatever is not settled).
    public func stop() {
        for listener in listeners { listener.cancel() }
        listeners = []
        started = false
        retryTask?.cancel()
        retryTask = nil
    }

    private var started = false
    private var retryTask: Task<Void, Never>?

    /// After ``start(promoted:)``: the journal's next due entry is tried when its backoff ends, not only at the
    /// next launch. One timer, set again after every pass; nothing runs while the journal is empty.
    private func scheduleRetry() async {
        guard started else { return }
        retryTask?.cancel()
        retryTask = nil
        guard let next = await journal.nextDue() else { return }
        let delay = min(max(next.timeIntervalSinceNow, 0.05), 3600)
        retryTask = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Int64(delay * 1000)))
            guard !Task.isCancelled, let self else { return }
            await self.submitDueInBackground()
        }
    }

    private func submitDueInBackground() async {
        if let settled = try? await submitter.submitDue() {
            for (transactionId, settlement) in settled.sorted(by: { $0.key < $1.key }) {
                await progress(.submitted(transactionId: transactionId, settlement: settlement))
            }
        }
        await scheduleRetry()
    }

    private func ingest(transactionId: String, signedTransaction: String) async {
        do {
            try await journal.record(
                .init(id: transactionId, payload: .purchase(signedTransaction: signedTransaction, orderId: nil), createdAt: Date())
            )
            await progress(.journaled(transactionId: transactionId))
            let settled = try await submitter.submitDue()
            if let settlement = settled[transactionId] { await progress(.submitted(transactionId: transactionId, settlement: settlement)) }
            await scheduleRetry()
        } catch {
            // Kept in StoreKit's unfinished list: the next launch's resume() journals it again.
        }
    }

    // MARK: Restore, wallet, eligibility

    /// "Restore Purchases": syncs with the App Store (the user may be asked to sign in), sends the latest
    /// transaction of everything the user owns to the server, and returns what the user has now.
    public func restore() async throws -> CustomerInfo {
        let signed = try await store.currentEntitlements()
        // The server takes 500 per request.
        for start in stride(from: 0, to: signed.count, by: 500) {
            let chunk = Array(signed[start..<min(start + 500, signed.count)])
            switch try await api.restorePurchases(body: .json(.init(signedTransactions: chunk))) {
            case .ok: break
            case .undocumented(let status, _): throw CustomerInfoUnavailable(status: status)
            default: throw CustomerInfoUnavailable(status: 400)
            }
        }
        return try await customerInfo()
    }

    /// What a spend came to.
    public enum SpendOutcome: Sendable, Hashable {
        /// Charged once (a retry of the same spend is not charged again).
        case spent
        /// Refused for good (not enough coins, say).
        case refused(code: String)
        /// Journaled with its idempotency key; sent again with backoff and at every launch, charged once.
        case later(reason: String)
    }

    /// Spends `amount` coins. The idempotency key is made and journaled before the first attempt, so a spend the
    /// app died during, or whose answer was lost, is sent again with the same key and charged once.
    public func spend(_ amount: Int64, reason: String? = nil) async throws -> SpendOutcome {
        let key = UUID().uuidString.lowercased()
        try await journal.record(.init(id: key, payload: .spend(amount: amount, idempotencyKey: key, reason: reason), createdAt: Date()))
        let settled = try await submitter.submitDue()
        await scheduleRetry()
        switch settled[key] {
        case .delivered: return .spent
        case .rejected(let code): return .refused(code: code)
        case .kept(let reason): return .later(reason: reason)
        case nil: return .later(reason: "waiting for an earlier attempt's backoff")
        }
    }

    /// Per subscription group, whether the user may still take its introductory offer (to show the right price).
    public func introductoryOfferEligibility() async throws -> [String: Bool] {
        switch try await api.getEligibility() {
        case .ok(let ok):
            return Dictionary(try ok.body.json.groups.map { ($0.subscriptionGroup, $0.introductoryOfferEligible) }) { first, _ in first }
        case .undocumented(let status, _): throw CustomerInfoUnavailable(status: status)
        default: throw CustomerInfoUnavailable(status: 400)
        }
    }

    /// At launch: every transaction StoreKit still holds unfinished goes into the journal (a purchase the app died
    /// in the middle of), then everything due is submitted.
    @discardableResult
    public func resume(now: Date = Date()) async throws -> [String: PurchaseSubmitter.Settlement] {
        for (transactionId, jws) in await store.unfinished() {
            try await journal.record(.init(id: transactionId, payload: .purchase(signedTransaction: jws, orderId: nil), createdAt: now))
        }
        return try await submitter.submitDue(now: now)
    }

    // MARK: Customer info

    /// The server could not say what the user has (an outage, a credential it refused); the cached answer, if any,
    /// is still ``cachedCustomerInfo``.
    public struct CustomerInfoUnavailable: Error, CustomStringConvertible {
        public var status: Int
        public var description: String { "the server did not answer for the user (\(status))" }
    }

    /// What the user has now, from the server (its signature checked when the app pinned a key); the answer is
    /// cached and, when it differs from the last one, sent to every ``customerInfoUpdates()`` stream. A tampered or
    /// replayed answer throws ``AnswerVerifier/Untrusted`` and changes nothing.
    @discardableResult
    public func customerInfo() async throws -> CustomerInfo {
        let info: CustomerInfo
        let output: Operations.GetMe.Output
        do {
            output = try await api.getMe()
        } catch let error as ClientError {
            // The generated client wraps what a middleware threw; a refused signature is the app's to see as such.
            if let untrusted = error.underlyingError as? AnswerVerifier.Untrusted { throw untrusted }
            throw error
        }
        switch output {
        case .ok(let ok): info = CustomerInfo(try ok.body.json, verified: verifiesAnswers)
        case .badRequest: throw CustomerInfoUnavailable(status: 400)
        case .unauthorized: throw CustomerInfoUnavailable(status: 401)
        case .internalServerError: throw CustomerInfoUnavailable(status: 500)
        case .undocumented(let status, _): throw CustomerInfoUnavailable(status: status)
        }
        if info.user != cachedInfo?.user {
            cachedInfo = info
            for watcher in watchers.values { watcher.yield(info) }
        }
        return info
    }

    /// The last answer ``customerInfo()`` accepted (in memory: a new launch asks the server again).
    public var cachedCustomerInfo: CustomerInfo? { cachedInfo }

    /// Every change of the user's customer info from now on (each ``customerInfo()`` that brings a different
    /// answer), starting with the cached one if there is one.
    public func customerInfoUpdates() -> AsyncStream<CustomerInfo> {
        let (stream, continuation) = AsyncStream.makeStream(of: CustomerInfo.self, bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        watchers[id] = continuation
        if let cachedInfo { continuation.yield(cachedInfo) }
        continuation.onTermination = { _ in Task { await self.stopWatching(id) } }
        return stream
    }

    private func stopWatching(_ id: UUID) { watchers[id] = nil }
}

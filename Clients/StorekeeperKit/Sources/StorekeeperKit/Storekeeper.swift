import Foundation
import OpenAPIRuntime
import StorekeeperAPI

#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif

#if canImport(UIKit)
import UIKit
#endif

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

    let api: any APIProtocol
    private let journal: PurchaseJournal
    private let submitter: PurchaseSubmitter
    var store: StoreKitAdapter
    private let progress: @Sendable (Progress) async -> Void
    private let answers: AnswerVerifier?
    private let offline: OfflinePolicy
    let log: StorekeeperLog
    private let cache: CustomerInfoCache?
    private var cachedInfo: CustomerInfo?
    /// The digest of the credentials `cachedInfo` was given to: a kept answer stands in only for the same user.
    private var cachedFor: String?
    private let credentials: (@Sendable () async -> Credentials?)?
    private var watchers: [UUID: AsyncStream<CustomerInfo>.Continuation] = [:]
    /// The server's last catalog answer and its tag, asked again with `If-None-Match`.
    var catalog: (tag: String, body: Components.Schemas.ClientCatalog)?

    /// - Parameters:
    ///   - journalURL: where the journal lives (in Application Support, excluded from backups).
    ///   - answers: checks the server's signed customer-info answers against the public key pinned in the app
    ///     (the server's `auth.answerSigningKey`); `nil` believes them as sent, for development only.
    ///   - offline: how long a kept answer may stand in for the server, and which StoreKit products confirm which
    ///     entitlements meanwhile.
    ///   - log: where background failures and each step are told.
    ///   - progress: told each step of a purchase (for the app's logs).
    ///   - requestTimeout: how long one request to the server may take before it counts as a network failure.
    ///   - credentials: the user's current credentials, read for every request.
    ///
    /// With a pinned key, the last signed customer-info answer is kept beside the journal (`<journal>.customer-info`)
    /// and checked again here, at launch, before it is believed.
    public init(
        serverURL: URL,
        journalURL: URL,
        answers: AnswerVerifier?,
        retry: RetryPolicy = RetryPolicy(),
        offline: OfflinePolicy = OfflinePolicy(),
        log: StorekeeperLog = StorekeeperLog(),
        progress: @escaping @Sendable (Progress) async -> Void = { _ in },
        requestTimeout: Duration = .seconds(30),
        credentials: @escaping @Sendable () async -> Credentials?
    ) throws {
        self.init(
            api: StorekeeperConnection.client(serverURL: serverURL, requestTimeout: requestTimeout, answers: answers, credentials: credentials),
            journal: try PurchaseJournal(url: journalURL),
            retry: retry,
            answers: answers,
            cacheURL: journalURL.appendingPathExtension("customer-info"),
            offline: offline,
            log: log,
            progress: progress,
            credentials: credentials
        )
    }

    init(
        api: any APIProtocol,
        journal: PurchaseJournal,
        retry: RetryPolicy = RetryPolicy(),
        answers: AnswerVerifier? = nil,
        cacheURL: URL? = nil,
        offline: OfflinePolicy = OfflinePolicy(),
        log: StorekeeperLog = .silent,
        progress: @escaping @Sendable (Progress) async -> Void = { _ in },
        credentials: (@Sendable () async -> Credentials?)? = nil
    ) {
        self.credentials = credentials
        let store = StoreKitAdapter()
        self.api = api
        self.journal = journal
        self.store = store
        self.progress = progress
        self.answers = answers
        self.offline = offline
        self.log = log
        self.submitter = PurchaseSubmitter(journal: journal, api: api, retry: retry) { await store.finish(transactionId: $0) }
        // Only a signed answer is kept: without a pinned key there is nothing to check it with at the next launch.
        cache = answers == nil ? nil : cacheURL.map(CustomerInfoCache.init)
        if let cache, let answers {
            do {
                if let kept = try cache.load(verifier: answers) {
                    cachedInfo = CustomerInfo(kept.user, verified: kept.verified, source: .kept, offline: offline)
                    cachedFor = kept.credential
                }
            } catch {
                log(.warning, "the kept customer info was not believed and is dropped: \(error)")
            }
        }
    }

    /// Buys `productId` for the signed-in user; with `offer`, at the promotional offer with that id (the server
    /// signs it for this user, and refuses an offer the user may not have).
    public func purchase(_ productId: String, offer offerId: String? = nil) async throws -> PurchaseOutcome {
        try await purchase(productId, offer: offerId, winBack: false)
    }

    private func purchase(_ productId: String, offer offerId: String?, winBack: Bool) async throws -> PurchaseOutcome {
        let order: Components.Schemas.Order
        let doing = "creating the order for \(productId)"
        let output: Operations.CreateOrder.Output
        do { output = try await api.createOrder(body: .json(.init(productId: productId, bundleId: Self.bundleId))) } catch {
            throw StorekeeperError.wrapping(error, doing: doing)
        }
        switch output {
        case .created(let created): order = try created.body.json
        case .badRequest(let failure): throw StorekeeperError.server(400, try? failure.body.json.code, doing: doing)
        case .unauthorized(let failure): throw StorekeeperError.server(401, try? failure.body.json.code, doing: doing)
        case .notFound(let failure): throw StorekeeperError.server(404, try? failure.body.json.code, doing: doing)
        case .conflict(let failure): throw StorekeeperError.server(409, try? failure.body.json.code, doing: doing)
        case .undocumented(let status, _): throw StorekeeperError.server(status, doing: doing)
        default: throw StorekeeperError.server(500, doing: doing)
        }
        guard let token = UUID(uuidString: order.appAccountToken) else {
            throw StorekeeperError(.server, status: 201, message: "the order's appAccountToken is not a UUID")
        }
        await progress(.ordered(orderId: order.orderId))
        let step: StoreKitAdapter.PurchaseStep
        do {
            guard let product = try await store.products([productId]).first else {
                throw StorekeeperError(.productUnavailable, message: "the App Store has no product \(productId) here")
            }
            var offer: StoreKitAdapter.PurchaseOffer?
            if let offerId {
                offer = winBack ? .winBack(offerId: offerId) : try await signOffer(offerId, productId: productId, appAccountToken: token)
            }
            step = try await store.purchase(product, appAccountToken: token, offer: offer)
        } catch {
            // StoreKit failed before charging (no product, no network, payments disabled): the order is void.
            _ = try? await api.cancelOrder(path: .init(id: order.orderId))
            log(.warning, "purchase of \(productId) stopped before the App Store charged: \(error)")
            throw StorekeeperError.wrapping(error, doing: "buying \(productId)")
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
            if settled[transactionId]?.isDelivered == true { await refreshCustomerInfo(after: "the purchase of \(productId)") }
            switch settled[transactionId] {
            case .delivered: return .delivered
            case .rejected(let code): return .rejected(code: code)
            case .kept(let reason): return .deliveringLater(reason: reason)
            case nil: return .deliveringLater(reason: "waiting for an earlier attempt's backoff")
            }
        }
    }

    /// The app's bundle id, named in orders and offer signatures so a server for several apps (iOS and macOS, say)
    /// uses this app's; `nil` (no bundle, as on Linux) leaves the choice to a server with one app.
    static let bundleId = Bundle.main.bundleIdentifier

    /// Which offer signature to ask for: v2 (a JWS, which StoreKit takes on every release Apple back-deployed it to,
    /// iOS 15 on) unless the tests choose v1.
    var offerSignatureVersion: Components.Schemas.OfferSignatureRequest.VersionPayload = .v2

    private func signOffer(_ offerId: String, productId: String, appAccountToken: UUID) async throws -> StoreKitAdapter.PurchaseOffer {
        let version = offerSignatureVersion
        let request = Components.Schemas.OfferSignatureRequest(
            productId: productId,
            offerId: offerId,
            version: version,
            appAccountToken: version == .v1 ? appAccountToken.uuidString.lowercased() : nil,
            bundleId: Self.bundleId
        )
        // The server would not sign it: not this user's to take, an unknown offer, no key configured.
        func refused(_ status: Int, _ code: String? = nil) -> StorekeeperError {
            StorekeeperError(.offerRefused, status: status, serverCode: code, message: "the server did not sign offer \(offerId)")
        }
        let answer: Components.Schemas.OfferSignatureAnswer
        let output: Operations.SignOffer.Output
        do { output = try await api.signOffer(body: .json(request)) } catch {
            throw StorekeeperError.wrapping(error, doing: "signing offer \(offerId)")
        }
        switch output {
        case .ok(let ok): answer = try ok.body.json
        case .undocumented(let status, _): throw refused(status)
        case .badRequest(let refusal): throw refused(400, try? refusal.body.json.code)
        case .forbidden(let refusal): throw refused(403, try? refusal.body.json.code)
        case .notFound(let refusal): throw refused(404, try? refusal.body.json.code)
        case .conflict(let refusal): throw refused(409, try? refusal.body.json.code)
        case .unauthorized: throw refused(401)
        default: throw refused(500)
        }
        switch answer.version {
        case .v2:
            return .promotionalJWS(offerId: answer.offerId, jws: answer.signature)
        case .v1:
            guard let key = answer.keyIdentifier, let nonce = UUID(uuidString: answer.nonce), let timestamp = answer.timestamp,
                let signature = Data(base64Encoded: answer.signature), let milliseconds = Int(exactly: timestamp)
            else { throw refused(200, "unusable_signature") }
            return .promotionalV1(offerId: answer.offerId, keyIdentifier: key, nonce: nonce, signature: signature, timestamp: milliseconds)
        }
    }

    // MARK: Launch, listeners

    private var listeners: [Task<Void, Never>] = []

    /// At launch, once: recovers what an earlier launch left (``resume(now:)``), then listens for transactions that
    /// do not come from ``purchase(_:offer:)`` — Ask to Buy approvals, renewals, refunds seen on the device, purchases
    /// on other devices — and for promoted in-app purchases the user starts on the App Store. Each transaction goes
    /// through the journal like a purchase; a promoted purchase runs ``purchase(_:offer:)`` when `promoted` says so.
    /// Return `false` to hold it (for example until the user has signed in): it waits in ``heldPromotedPurchases``
    /// until the app buys it with ``purchaseHeldPromotion(_:)`` (or drops it with ``dropHeldPromotion(_:)``).
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
                for await intent in intents {
                    guard let self else { return }
                    guard await promoted(intent.productId) else {
                        await self.hold(intent)
                        continue
                    }
                    do {
                        _ = try await self.purchase(intent.productId, offer: intent.offerId, winBack: intent.offerIsWinBack)
                    } catch {
                        self.log(.warning, "the promoted purchase of \(intent.productId) failed: \(error)")
                    }
                }
            }
        )
    }

    /// A promoted purchase the app held (its `promoted` answer was `false`), waiting for the app to buy it.
    public struct HeldPromotion: Sendable, Hashable {
        public let productId: String
        /// The offer the user chose with it on the App Store (iOS 18), if any.
        public let offerId: String?
        public let isWinBackOffer: Bool
    }

    private var held: [HeldPromotion] = []

    private func hold(_ intent: StoreKitAdapter.Intent) {
        let promotion = HeldPromotion(productId: intent.productId, offerId: intent.offerId, isWinBackOffer: intent.offerIsWinBack)
        // The App Store may send the same intent again: held once.
        if !held.contains(promotion) { held.append(promotion) }
        log(.info, "promoted purchase of \(intent.productId) held for the app")
    }

    /// The promoted purchases the app held, oldest first.
    public var heldPromotedPurchases: [HeldPromotion] { held }

    /// Buys a held promoted purchase now (say, once the user signed in), with the offer the user chose, and stops
    /// holding it. A product that is not held throws `productUnavailable`.
    public func purchaseHeldPromotion(_ productId: String) async throws -> PurchaseOutcome {
        guard let index = held.firstIndex(where: { $0.productId == productId }) else {
            throw StorekeeperError(.productUnavailable, message: "no promoted purchase of \(productId) is held")
        }
        let promotion = held.remove(at: index)
        return try await purchase(promotion.productId, offer: promotion.offerId, winBack: promotion.isWinBackOffer)
    }

    /// Stops holding a promoted purchase (the user declined it).
    public func dropHeldPromotion(_ productId: String) {
        held.removeAll { $0.productId == productId }
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
        do {
            let settled = try await submitter.submitDue()
            for (transactionId, settlement) in settled.sorted(by: { $0.key < $1.key }) {
                await progress(.submitted(transactionId: transactionId, settlement: settlement))
                log(settlement.isDelivered ? .info : .warning, "retried \(transactionId): \(settlement)")
            }
            if settled.values.contains(where: \.isDelivered) { await refreshCustomerInfo(after: "a retried submission") }
        } catch {
            log(.error, "the journal could not be read for a retry: \(error)")
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
            if let settlement = settled[transactionId] {
                await progress(.submitted(transactionId: transactionId, settlement: settlement))
                log(settlement.isDelivered ? .info : .warning, "transaction \(transactionId) from StoreKit's updates: \(settlement)")
            }
            await scheduleRetry()
            if settled[transactionId]?.isDelivered == true { await refreshCustomerInfo(after: "transaction \(transactionId)") }
        } catch {
            // Kept in StoreKit's unfinished list: the next launch's resume() journals it again.
            log(.error, "transaction \(transactionId) from StoreKit's updates could not be journaled: \(error)")
        }
    }

    // MARK: Restore, wallet, eligibility

    /// "Restore Purchases": syncs with the App Store (the user may be asked to sign in), sends the latest
    /// transaction of everything the user owns to the server, and returns what the user has now.
    public func restore() async throws -> CustomerInfo {
        try await sendCurrentEntitlements(sync: true)
    }

    /// Restore without asking the user anything: sends what StoreKit already holds on the device (no
    /// `AppStore.sync()`, so no sign-in prompt) — for app launch or a pull to refresh, beside a Restore button.
    @discardableResult
    public func syncPurchases() async throws -> CustomerInfo {
        try await sendCurrentEntitlements(sync: false)
    }

    private func sendCurrentEntitlements(sync: Bool) async throws -> CustomerInfo {
        let signed: [String]
        do { signed = try await store.currentEntitlements(sync: sync).map(\.jws) } catch {
            throw StorekeeperError.wrapping(error, doing: "reading StoreKit's current entitlements")
        }
        for chunk in Self.restoreChunks(signed) {
            let output: Operations.RestorePurchases.Output
            do { output = try await api.restorePurchases(body: .json(.init(signedTransactions: chunk))) } catch {
                throw StorekeeperError.wrapping(error, doing: "restoring purchases")
            }
            switch output {
            case .ok: break
            case .undocumented(let status, _): throw StorekeeperError.server(status, doing: "restoring purchases")
            default: throw StorekeeperError.server(400, doing: "restoring purchases")
            }
        }
        return try await fetchCustomerInfo()
    }

    /// Restore requests for `signed`: the server takes 500 transactions per request and bodies of 1 MB by default (a
    /// signed transaction with its certificate chain is about 3.5 KB), so chunks of at most 500 and 768 KB, in order.
    static func restoreChunks(_ signed: [String]) -> [[String]] {
        var chunks: [[String]] = []
        var bytes = 0
        for jws in signed {
            if let last = chunks.last, last.count < 500, bytes + jws.utf8.count <= 768 * 1024 {
                chunks[chunks.count - 1].append(jws)
            } else {
                chunks.append([jws])
                bytes = 0
            }
            bytes += jws.utf8.count + 3
        }
        return chunks
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
        let output: Operations.GetEligibility.Output
        do { output = try await api.getEligibility() } catch { throw StorekeeperError.wrapping(error, doing: "reading eligibility") }
        switch output {
        case .ok(let ok):
            return Dictionary(try ok.body.json.groups.map { ($0.subscriptionGroup, $0.introductoryOfferEligible) }) { first, _ in first }
        case .undocumented(let status, _): throw StorekeeperError.server(status, doing: "reading eligibility")
        default: throw StorekeeperError.server(400, doing: "reading eligibility")
        }
    }

    /// At launch: every transaction StoreKit still holds unfinished goes into the journal (a purchase the app died
    /// in the middle of), then everything in the journal is submitted at once — a kept purchase still in its backoff
    /// too (after many failed attempts the wait reaches minutes; a launch is a new chance and does not wait it out).
    @discardableResult
    public func resume(now: Date = Date()) async throws -> [String: PurchaseSubmitter.Settlement] {
        for (transactionId, jws) in await store.unfinished() {
            try await journal.record(.init(id: transactionId, payload: .purchase(signedTransaction: jws, orderId: nil), createdAt: now))
        }
        return try await submitter.submitDue(now: now, ignoringBackoff: true)
    }

    #if os(visionOS)
    /// Where visionOS confirms a purchase: StoreKit has no `purchase(options:)` there, only
    /// `purchase(confirmIn:options:)`. Without a scene a visionOS purchase throws `storeKit` before any charge.
    public func setConfirmationScene(_ scene: @escaping @MainActor @Sendable () -> UIScene?) {
        store.confirmationScene = scene
    }
    #endif

    // MARK: The App Store's sheets

    #if os(iOS) || os(visionOS) || os(Linux)
    /// Apple's refund request sheet for one of the user's transactions; whether the user sent the request. Apple
    /// decides later; the server hears it (`CONSUMPTION_REQUEST`, then `REFUND` or `REFUND_DECLINED`).
    @MainActor public func requestRefund(for transactionId: String, in scene: UIWindowScene) async throws -> Bool {
        guard let id = UInt64(transactionId) else {
            throw StorekeeperError(.productUnavailable, message: "\(transactionId) is not an App Store transaction id")
        }
        do { return try await store.requestRefund(transactionId: id, in: scene) } catch {
            throw StorekeeperError.wrapping(error, doing: "showing the refund request sheet")
        }
    }

    /// Apple's subscription management sheet (cancel, change plan).
    @MainActor public func showManageSubscriptions(in scene: UIWindowScene) async throws {
        do { try await store.showManageSubscriptions(in: scene) } catch {
            throw StorekeeperError.wrapping(error, doing: "showing the subscription management sheet")
        }
    }

    /// Apple's offer-code redemption sheet. From iOS 27 the App Store returns the redeemed transaction: it is
    /// journaled and submitted at once like a purchase, for the signed-in user (the server then sets the user's
    /// app account token on it at Apple), and its outcome returned. Before iOS 27 (and when the user closes the
    /// sheet) this returns `nil`: the transaction arrives through ``start(promoted:)``'s listener instead.
    @MainActor public func redeemOfferCode(from viewController: UIViewController) async throws -> PurchaseOutcome? {
        let redeemed: StoreKitAdapter.SignedTransaction?
        do { redeemed = try await store.redeemOfferCode(from: viewController) } catch {
            throw StorekeeperError.wrapping(error, doing: "showing the offer-code sheet")
        }
        guard let redeemed else { return nil }
        return try await deliverRedeemed(redeemed)
    }
    #endif

    private func deliverRedeemed(_ redeemed: StoreKitAdapter.SignedTransaction) async throws -> PurchaseOutcome {
        let id = redeemed.transactionId
        await progress(.charged(transactionId: id))
        try await journal.record(.init(id: id, payload: .purchase(signedTransaction: redeemed.jws, orderId: nil), createdAt: Date()))
        await progress(.journaled(transactionId: id))
        let settled = try await submitter.submitDue()
        if let settlement = settled[id] { await progress(.submitted(transactionId: id, settlement: settlement)) }
        await scheduleRetry()
        if settled[id]?.isDelivered == true { await refreshCustomerInfo(after: "the offer code's transaction \(id)") }
        switch settled[id] {
        case .delivered: return .delivered
        case .rejected(let code): return .rejected(code: code)
        case .kept(let reason): return .deliveringLater(reason: reason)
        case nil: return .deliveringLater(reason: "waiting for an earlier attempt's backoff")
        }
    }

    // MARK: Customer info

    /// What the user has now. From the server when it answers (its signature checked when the app pinned a key);
    /// the answer is kept (on disk, with a pinned key) and, when it differs from the last one, sent to every
    /// ``customerInfoUpdates()`` stream. While the server cannot be reached (no network, a 5xx), the kept answer
    /// stands in — each entitlement until its signed expiry, and none longer than ``OfflinePolicy/maximumStaleness``
    /// after the server's answer — with what StoreKit's `currentEntitlements` confirms meanwhile; its `source` says
    /// so. A tampered or replayed answer throws `untrusted` and changes nothing; so does a refusal (`server`).
    @discardableResult
    public func customerInfo() async throws -> CustomerInfo {
        do {
            return try await fetchCustomerInfo()
        } catch let error as StorekeeperError where error.code == .network || (error.code == .server && (error.status ?? 0) >= 500) {
            log(.warning, "customer info from the kept answer: \(error)")
            return try await offlineCustomerInfo(because: error)
        }
    }

    private func fetchCustomerInfo() async throws -> CustomerInfo {
        let capture = AnswerCapture()
        let output: Operations.GetMe.Output
        do {
            output = try await AnswerCapture.$current.withValue(capture) { try await api.getMe() }
        } catch {
            throw StorekeeperError.wrapping(error, doing: "reading customer info")
        }
        let user: Components.Schemas.User
        switch output {
        case .ok(let ok): user = try ok.body.json
        case .badRequest(let failure): throw StorekeeperError.server(400, try? failure.body.json.code, doing: "reading customer info")
        case .unauthorized(let failure): throw StorekeeperError.server(401, try? failure.body.json.code, doing: "reading customer info")
        case .internalServerError(let failure): throw StorekeeperError.server(500, try? failure.body.json.code, doing: "reading customer info")
        case .undocumented(let status, _): throw StorekeeperError.server(status, doing: "reading customer info")
        }
        let info = CustomerInfo(user, verified: answers != nil, source: .server, offline: offline)
        cachedFor = capture.answer?.credential
        if let cache, let answer = capture.answer {
            do { try cache.save(answer) } catch { log(.warning, "customer info could not be kept on disk: \(error)") }
        }
        accept(info)
        return info
    }

    /// The kept answer, with what StoreKit confirms on the device now (a subscription bought while the server was
    /// away).
    private func offlineCustomerInfo(because error: StorekeeperError) async throws -> CustomerInfo {
        guard var info = cachedInfo else {
            throw StorekeeperError(
                .noCustomerInfo,
                status: error.status,
                message: "the server cannot be reached and no answer is kept: \(error.message)"
            )
        }
        // Another user's kept answer (signed in as someone else since) is not this user's.
        if let credentials, answers != nil, let current = await credentials(), current.digest != cachedFor {
            throw StorekeeperError(
                .noCustomerInfo,
                status: error.status,
                message: "the server cannot be reached and the kept answer is another user's: \(error.message)"
            )
        }
        info.source = .kept
        var products = offline.productEntitlements
        // The catalog held from offerings() knows what every product grants.
        for product in catalog?.body.products ?? [] {
            if let entitlement = product.entitlement, products[product.id] == nil { products[product.id] = entitlement }
        }
        for source in info.user.entitlements.flatMap({ entitlement in entitlement.sources.map { ($0.productId, entitlement.entitlement) } }) {
            products[source.0] = products[source.0] ?? source.1
        }
        do {
            for transaction in try await store.currentEntitlements(sync: false) where !transaction.revoked {
                guard let entitlement = products[transaction.productId] else { continue }
                // Only what the kept answer lacks, or has lapsed since: StoreKit vouches for the purchase made meanwhile.
                if info.isEntitled(to: entitlement) { continue }
                info.entitlements[entitlement] = transaction.expires
                info.confirmedByStoreKit.insert(entitlement)
                info.source = .keptAndStoreKit
            }
        } catch {
            log(.warning, "StoreKit's current entitlements could not be read: \(error)")
        }
        accept(info)
        return info
    }

    /// Keeps `info` as the latest and tells the watchers when what the user has changed.
    private func accept(_ info: CustomerInfo) {
        let changed = cachedInfo.map { !$0.hasSameContent(as: info) } ?? true
        cachedInfo = info
        guard changed else { return }
        for watcher in watchers.values { watcher.yield(info) }
    }

    /// After a purchase, a restore or a listener's delivery: what the user has now, told to the watchers; a failure
    /// is logged, not thrown (the purchase itself went through).
    private func refreshCustomerInfo(after event: String) async {
        do {
            _ = try await fetchCustomerInfo()
        } catch {
            log(.warning, "customer info was not refreshed after \(event): \(error)")
        }
    }

    /// The last answer ``customerInfo()`` accepted, or the one kept from an earlier launch (checked again at
    /// launch).
    public var cachedCustomerInfo: CustomerInfo? { cachedInfo }

    /// Forgets the kept answer (on disk too): call it when the user signs out, so the next user is not shown theirs.
    public func forgetCustomerInfo() {
        cachedInfo = nil
        cachedFor = nil
        cache?.remove()
    }

    /// Every change of what the user has from now on (an answer that differs in user, entitlements, wallet or
    /// purchases; a new `asOf` alone is no change), starting with the cached answer if there is one.
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

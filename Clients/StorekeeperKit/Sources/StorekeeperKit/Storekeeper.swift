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

    /// The server did not accept the order (an unknown product, a credential it refused, an outage).
    public struct OrderFailed: Error, CustomStringConvertible {
        public var status: Int
        public var description: String { "the server did not create the order (\(status))" }
    }

    private let api: any APIProtocol
    private let journal: PurchaseJournal
    private let submitter: PurchaseSubmitter
    private let store: StoreKitAdapter

    /// - Parameters:
    ///   - journalURL: where the journal lives (in Application Support, excluded from backups).
    ///   - credentials: the user's current credentials, read for every request.
    public init(
        serverURL: URL,
        journalURL: URL,
        retry: RetryPolicy = RetryPolicy(),
        credentials: @escaping @Sendable () async -> Credentials?
    ) throws {
        self.init(
            api: StorekeeperConnection.client(serverURL: serverURL, credentials: credentials),
            journal: try PurchaseJournal(url: journalURL),
            retry: retry
        )
    }

    init(api: any APIProtocol, journal: PurchaseJournal, retry: RetryPolicy = RetryPolicy()) {
        let store = StoreKitAdapter()
        self.api = api
        self.journal = journal
        self.store = store
        self.submitter = PurchaseSubmitter(journal: journal, api: api, retry: retry) { await store.finish(transactionId: $0) }
    }

    /// Buys `productId` for the signed-in user.
    public func purchase(_ productId: String) async throws -> PurchaseOutcome {
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
        switch try await store.purchase(productId: productId, appAccountToken: token) {
        case .cancelled:
            _ = try? await api.cancelOrder(path: .init(id: order.orderId))
            return .cancelled
        case .pending:
            return .pending
        case .purchased(let transactionId, let jws):
            try await journal.record(
                .init(id: transactionId, payload: .purchase(signedTransaction: jws, orderId: order.orderId), createdAt: Date())
            )
            let settled = try await submitter.submitDue()
            switch settled[transactionId] {
            case .delivered: return .delivered
            case .rejected(let code): return .rejected(code: code)
            case .kept(let reason): return .deliveringLater(reason: reason)
            case nil: return .deliveringLater(reason: "waiting for an earlier attempt's backoff")
            }
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
}

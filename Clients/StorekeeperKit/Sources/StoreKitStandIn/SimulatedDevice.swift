import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The device this process plays, for the StoreKit stand-in: the App Store simulator it buys from, the simulator
/// account that is signed in, and the folder where the device keeps unfinished transactions (StoreKit keeps them on
/// the device, so they outlive the app's process).
///
/// StoreKit's own API is static (`Product.products(for:)`, `Transaction.unfinished`), so the stand-in's device is
/// process-wide too; it exists only where StoreKit does not (Linux).
public enum SimulatedDevice {
    struct State: Sendable {
        var simulatorURL: URL
        var account: String
        var storage: URL
        var cancelNextPurchase = false
        /// Purchases need a parent's approval (Ask to Buy): the sheet ends `.pending`.
        var askToBuy = false
        /// How often `Transaction.updates` looks for transactions made elsewhere.
        var pollInterval: Duration = .milliseconds(200)
        /// The code the user will type into the next offer-code sheet, and its product.
        var offerCode: (String, String)?
    }

    private final class Box: @unchecked Sendable {
        let lock = NSLock()
        var state: State?
        var intents: [UUID: AsyncStream<PurchaseIntent>.Continuation] = [:]
    }

    private static let box = Box()

    /// Signs the device in to `account` on the simulator at `simulatorURL`, keeping device state under `storage`.
    public static func configure(simulatorURL: URL, account: String, storage: URL, pollInterval: Duration = .milliseconds(200)) throws {
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        box.lock.withLock {
            box.state = State(simulatorURL: simulatorURL, account: account, storage: storage, pollInterval: pollInterval)
        }
    }

    /// The simulator account the device is signed in to.
    public static var signedInAccount: String? { box.lock.withLock { box.state?.account } }

    /// Purchases on this device need a parent's approval from now on (or no longer).
    public static func requireAskToBuy(_ required: Bool) {
        box.lock.withLock { box.state?.askToBuy = required }
    }

    /// The Ask to Buy requests this device sent, oldest first (the parent approves them on the simulator).
    public static func askToBuyRequests() -> [String] {
        guard let state = try? state() else { return [] }
        return box.lock.withLock { readList(state, "ask-to-buy.json") }
    }

    static func recordAskToBuy(_ id: String) throws {
        let state = try state()
        try box.lock.withLock { try writeList(state, "ask-to-buy.json", readList(state, "ask-to-buy.json") + [id]) }
    }

    /// The App Store shows the user a promoted in-app purchase (tapped on the product page), or a win-back offer
    /// (`offerID`, one the account may redeem): it reaches the app as a `PurchaseIntent`.
    public static func promote(_ productId: String, offerID: String? = nil) async throws {
        guard let product = try await Product.products(for: [productId]).first else {
            throw SimulatorRefusal(status: 404, code: "unknown_product")
        }
        var offer: Product.SubscriptionOffer?
        if let offerID {
            let offers = (product.subscription?.eligibleWinBackOffers ?? []) + (product.subscription?.promotionalOffers ?? [])
            guard let found = offers.first(where: { $0.id == offerID }) else { throw SimulatorRefusal(status: 404, code: "unknown_offer") }
            offer = found
        }
        let listeners = box.lock.withLock { Array(box.intents.values) }
        for listener in listeners { listener.yield(PurchaseIntent(product: product, subscriptionOffer: offer)) }
    }

    static func intents() -> AsyncStream<PurchaseIntent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PurchaseIntent.self)
        let id = UUID()
        box.lock.withLock { box.intents[id] = continuation }
        continuation.onTermination = { _ in box.lock.withLock { box.intents[id] = nil } }
        return stream
    }

    /// The user will tap Cancel on the next purchase sheet.
    public static func cancelNextPurchase() {
        box.lock.withLock { box.state?.cancelNextPurchase = true }
    }

    static func state() throws -> State {
        guard let state = box.lock.withLock({ box.state }) else { throw StoreKitError.notAvailableInStorefront }
        return state
    }

    static func takeCancellation() -> Bool {
        box.lock.withLock {
            let cancel = box.state?.cancelNextPurchase ?? false
            box.state?.cancelNextPurchase = false
            return cancel
        }
    }

    // MARK: Unfinished transactions, as the device keeps them

    struct Stored: Codable, Sendable, Hashable {
        var jws: String
        var id: UInt64
        var originalID: UInt64
        var productID: String
        var appAccountToken: UUID?
    }

    /// What the device holds of the account's transactions, in one file written in one atomic step, as StoreKit's
    /// own store changes: the unfinished ones, and every id it has seen (`nil` until its first sync). A kill between
    /// two files could list a transaction twice or forget a charged one; one file cannot.
    struct Record: Codable, Sendable {
        var unfinished: [Stored] = []
        var known: [String]?

        /// Adds `transaction` as unfinished (once) and, when `known`, as seen.
        mutating func keep(_ transaction: Stored, known isKnown: Bool) {
            unfinished.removeAll { $0.id == transaction.id }
            unfinished.append(transaction)
            if isKnown { known = Array(Set((known ?? []) + [String(transaction.id)])).sorted() }
        }
    }

    static func unfinished() -> [Stored] {
        guard let state = try? state() else { return [] }
        return box.lock.withLock { record(state).unfinished }
    }

    /// Keeps a transaction of the app's own (a purchase, a redeemed offer code) unfinished, and, when the app got it
    /// back (`known`), not news for `Transaction.updates`: one write.
    static func keep(_ transaction: Stored, known: Bool) throws {
        let state = try state()
        try box.lock.withLock {
            var record = record(state)
            record.keep(transaction, known: known)
            try write(record, state)
        }
    }

    static func finish(_ id: UInt64) {
        guard let state = try? state() else { return }
        box.lock.withLock {
            // Every call is logged, so a test can count them across the app's processes. The log is written before
            // the device forgets the transaction: a kill between the two then shows as one more call at the next
            // launch, never as a finish that left no trace.
            let log = state.storage.appendingPathComponent("finished.log")
            let line = Data("\(id)\n".utf8)
            if let handle = try? FileHandle(forWritingTo: log) {
                _ = try? handle.seekToEnd()
                try? handle.write(contentsOf: line)
                try? handle.close()
            } else {
                try? line.write(to: log)
            }
            var record = record(state)
            record.unfinished.removeAll { $0.id == id }
            try? write(record, state)
        }
    }

    /// Every `finish()` the app called on this device, in order, one entry per call (from every process that
    /// played this device).
    public static func finishCalls() -> [UInt64] {
        guard let state = try? state(),
            let text = try? String(contentsOf: state.storage.appendingPathComponent("finished.log"), encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n").compactMap { UInt64($0) }
    }

    // MARK: Transactions made elsewhere (Ask to Buy approvals, renewals, other devices)

    /// Asks the simulator for the account's transactions and takes the ones this device has not seen: each is kept
    /// unfinished (as StoreKit keeps it until the app finishes it) and returned. A device seeing the account for the
    /// first time takes what is already there as seen.
    static func sync() async throws -> [Stored] {
        let state = try state()
        let (status, answer) = try await get("device/accounts/\(state.account)/transactions")
        guard status == 200, let signed = answer["signedTransactions"] as? [String] else {
            throw StoreKitError.systemError(SimulatorRefusal(status: status, code: answer["code"] as? String))
        }
        let transactions = try signed.map { try Transaction(jws: $0).stored }
        return try box.lock.withLock {
            var record = record(state)
            guard let seen = record.known else {
                record.known = transactions.map { String($0.id) }.sorted()
                try write(record, state)
                return []
            }
            var known = Set(seen)
            let new = transactions.filter { !known.contains(String($0.id)) }
            guard !new.isEmpty else { return [] }
            // Seen and kept unfinished in the same write: a kill can lose neither half.
            known.formUnion(new.map { String($0.id) })
            record.known = known.sorted()
            for transaction in new { record.keep(transaction, known: false) }
            try write(record, state)
            return new
        }
    }

    private static func readList(_ state: State, _ name: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: state.storage.appendingPathComponent(name).path) else { return [] }
        return (try? JSONDecoder().decode([String].self, from: data)) ?? []
    }

    private static func writeList(_ state: State, _ name: String, _ list: [String]) throws {
        try JSONEncoder().encode(list).write(to: state.storage.appendingPathComponent(name), options: .atomic)
    }

    /// The device's record; the caller holds the lock.
    private static func record(_ state: State) -> Record {
        guard let data = FileManager.default.contents(atPath: file(state).path) else { return Record() }
        return (try? JSONDecoder().decode(Record.self, from: data)) ?? Record()
    }

    /// Replaces the record in one atomic step (a temporary file renamed over it); the caller holds the lock.
    private static func write(_ record: Record, _ state: State) throws {
        try JSONEncoder().encode(record).write(to: file(state), options: .atomic)
    }

    private static func file(_ state: State) -> URL { state.storage.appendingPathComponent("device-transactions.json") }

    static func get(_ path: String) async throws -> (Int, [String: Any]) {
        try await send(URLRequest(url: try state().simulatorURL.appendingPathComponent(path)))
    }

    static func post(_ path: String, _ body: [String: Any]) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: try state().simulatorURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        return try await send(request)
    }

    /// A JSON answer decoded as `T`; anything but a 200 is the simulator's refusal.
    static func get<T: Decodable>(_ url: URL) async throws -> T {
        let (data, status) = try await data(URLRequest(url: url))
        guard status == 200 else {
            let code = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["code"] as? String
            throw StoreKitError.systemError(SimulatorRefusal(status: status, code: code))
        }
        return try JSONDecoder().decode(T.self, from: data)
    }

    private static func send(_ request: URLRequest) async throws -> (Int, [String: Any]) {
        let (data, status) = try await data(request)
        return (status, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    /// The simulator out of reach is StoreKit's `networkError`.
    private static func data(_ request: URLRequest) async throws -> (Data, Int) {
        do {
            let (data, response) = try await URLSession.shared.data(for: request)
            return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
        } catch let error as URLError {
            throw StoreKitError.networkError(error)
        }
    }

    // MARK: The App Store's sheets and products

    /// A product as `GET /device/products` answers it.
    struct StorefrontProduct: Decodable, Sendable {
        struct Offer: Decodable, Sendable {
            var id: String
            var discountType: String
            var period: String
            var periodCount: Int
            var price: String
        }
        struct Subscription: Decodable, Sendable {
            var groupId: String
            var period: String
            var introductoryOffer: Offer?
            var introductoryOfferEligible: Bool
            var promotionalOffers: [Offer]
            var winBackOffers: [Offer]
        }
        var id: String
        var kind: String
        var displayName: String
        var description: String
        var price: String
        var currency: String
        var familyShareable: Bool
        var subscription: Subscription?
    }

    struct StorefrontProducts: Decodable, Sendable { var products: [StorefrontProduct] }

    /// An offer as the purchase request carries it to the App Store.
    struct OfferRequest: Codable, Hashable, Sendable {
        struct Signature: Codable, Hashable, Sendable {
            var keyIdentifier: String
            var nonce: String
            var timestamp: Int64
            var signature: String
        }
        var type: String
        var id: String
        var signature: Signature?
        var jws: String?
    }

    /// The purchase sheet: the simulator charges the signed-in account (or asks a parent, under Ask to Buy).
    static func purchase(_ product: Product, options: Set<Product.PurchaseOption>) async throws -> Product.PurchaseResult {
        let state = try state()
        if takeCancellation() { return .userCancelled }
        var body: [String: Any] = ["account": state.account, "productId": product.id]
        for option in options {
            switch option.kind {
            case .appAccountToken(let token): body["appAccountToken"] = token.uuidString.lowercased()
            case .offer(let offer): body["offer"] = try JSONSerialization.jsonObject(with: JSONEncoder().encode(offer))
            }
        }
        // The device learns the account's transactions before it adds one (a first purchase on a new device
        // takes what the account already had as seen).
        _ = try await sync()
        if state.askToBuy {
            let (status, answer) = try await post("device/ask-to-buy", body)
            guard status == 202, let request = answer["requestId"] as? String else {
                throw StoreKitError.systemError(SimulatorRefusal(status: status, code: answer["code"] as? String))
            }
            try recordAskToBuy(request)
            return .pending
        }
        let (status, answer) = try await post("device/purchases", body)
        if status == 202 { return .pending }
        guard status == 200 || status == 201, let jws = answer["signedTransaction"] as? String else {
            throw StoreKitError.systemError(SimulatorRefusal(status: status, code: answer["code"] as? String))
        }
        let transaction = try Transaction(jws: jws)
        // StoreKit keeps a transaction on the device until the app finishes it; the app has it, so it is no update.
        try keep(transaction.stored, known: true)
        return .success(.verified(transaction))
    }

    /// `Transaction.currentEntitlements`: the account's restore answer.
    static func currentEntitlements() async throws -> [String] {
        let state = try state()
        let (status, answer) = try await post("device/accounts/\(state.account)/restore", [:])
        guard status == 200 else { throw StoreKitError.systemError(SimulatorRefusal(status: status, code: answer["code"] as? String)) }
        return answer["signedTransactions"] as? [String] ?? []
    }

    /// The refund request sheet: the user asks Apple (the simulator sends `CONSUMPTION_REQUEST`).
    static func requestRefund(_ transactionID: UInt64) async throws -> Transaction.RefundRequestStatus {
        try recordSheet("refundRequest:\(transactionID)")
        if takeCancellation() { return .userCancelled }
        let (status, _) = try await post("device/transactions/\(transactionID)/refund-request", ["reason": "UNINTENDED_PURCHASE"])
        guard status == 202 else { throw Transaction.RefundRequestError.failed }
        return .success
    }

    /// The user will type this offer code for this product into the next offer-code sheet.
    public static func enterOfferCode(_ code: String, productID: String) {
        box.lock.withLock { box.state?.offerCode = (code, productID) }
    }

    /// The offer-code sheet: redeems the entered code on the simulator; `nil` when the user closed the sheet. The
    /// transaction stays unfinished; unless it is `returned` to the app (iOS 27's sheet), it reaches the app through
    /// `Transaction.updates`, as before iOS 27.
    static func redeemOfferCode(returned: Bool = false) async throws -> Transaction? {
        let state = try state()
        try recordSheet("offerCodeRedemption")
        guard
            let (code, productID) = box.lock.withLock({ () -> (String, String)? in
                defer { box.state?.offerCode = nil }
                return box.state?.offerCode
            })
        else { return nil }
        let body: [String: Any] = ["account": state.account, "productId": productID, "offer": ["type": "offerCode", "id": code]]
        let (status, answer) = try await post("device/purchases", body)
        guard status == 201, let jws = answer["signedTransaction"] as? String else {
            throw StoreKitError.systemError(SimulatorRefusal(status: status, code: answer["code"] as? String))
        }
        let transaction = try Transaction(jws: jws)
        try keep(transaction.stored, known: returned)
        return transaction
    }

    static func recordSheet(_ name: String) throws {
        let state = try state()
        try box.lock.withLock { try writeList(state, "sheets.json", readList(state, "sheets.json") + [name]) }
    }

    /// The App Store sheets the app showed on this device, oldest first (`manageSubscriptions`,
    /// `refundRequest:<transaction id>`, `offerCodeRedemption`).
    public static func sheetsShown() -> [String] {
        guard let state = try? state() else { return [] }
        return box.lock.withLock { readList(state, "sheets.json") }
    }
}

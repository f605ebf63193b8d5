import Foundation

// The slice of StoreKit 2 that StorekeeperKit uses, with StoreKit's names and signatures, backed by the App Store
// simulator (see `SimulatedDevice`). StorekeeperKit's StoreKit adapter compiles against this on Linux and against
// StoreKit on Apple platforms, so the adapter's own code runs in CI.

/// A StoreKit failure the stand-in can produce.
public enum StoreKitError: Error, Sendable, Hashable {
    case notAvailableInStorefront
    case networkError(String)
    case unknown
}

/// Why a signed value failed StoreKit's verification.
public enum VerificationError: Error, Sendable, Hashable {
    case invalidSignature
}

/// A signed value and whether StoreKit verified it.
public enum VerificationResult<SignedType: Sendable>: Sendable {
    case unverified(SignedType, VerificationError)
    case verified(SignedType)

    /// The JWS as the App Store signed it.
    public var jwsRepresentation: String {
        switch self {
        case .verified(let value), .unverified(let value, _): (value as? Transaction)?.jws ?? ""
        }
    }

    public var unsafePayloadValue: SignedType {
        switch self {
        case .verified(let value), .unverified(let value, _): value
        }
    }
}

/// A product for sale.
public struct Product: Sendable, Hashable, Identifiable {
    public let id: String

    /// The products with these identifiers (the stand-in does not consult the catalog: the simulator refuses an
    /// unknown one at purchase).
    public static func products(for identifiers: some Collection<String>) async throws -> [Product] {
        identifiers.map { Product(id: $0) }
    }

    public struct PurchaseOption: Sendable, Hashable {
        var appAccountToken: UUID?
        /// The offer as the App Store's purchase request carries it (JSON).
        var offer: Data?

        public static func appAccountToken(_ token: UUID) -> PurchaseOption { PurchaseOption(appAccountToken: token) }

        /// A promotional offer signed with the v1 signature (the server's `POST /v1/offers/signature`, version v1).
        public static func promotionalOffer(
            offerID: String,
            keyID: String,
            nonce: UUID,
            signature: Data,
            timestamp: Int
        )
            -> PurchaseOption
        {
            PurchaseOption(
                offer: try? JSONSerialization.data(withJSONObject: [
                    "type": "promotional", "id": offerID,
                    "signature": [
                        "keyIdentifier": keyID, "nonce": nonce.uuidString.lowercased(), "timestamp": timestamp,
                        "signature": signature.base64EncodedString(),
                    ] as [String: Any],
                ])
            )
        }

        /// A promotional offer signed as a v2 JWS (iOS 18.4's `promotionalOffer(_:compactJWS:)`).
        public static func promotionalOffer(_ offerID: String, compactJWS: String) -> PurchaseOption {
            PurchaseOption(offer: try? JSONSerialization.data(withJSONObject: ["type": "promotional", "id": offerID, "jws": compactJWS]))
        }
    }

    public enum PurchaseResult: Sendable {
        case success(VerificationResult<Transaction>)
        case userCancelled
        case pending
    }

    /// Shows the purchase sheet; the simulator charges the signed-in account.
    public func purchase(options: Set<PurchaseOption> = []) async throws -> PurchaseResult {
        let state = try SimulatedDevice.state()
        if SimulatedDevice.takeCancellation() { return .userCancelled }
        var body: [String: Any] = ["account": state.account, "productId": id]
        if let token = options.lazy.compactMap(\.appAccountToken).first { body["appAccountToken"] = token.uuidString.lowercased() }
        if let offer = options.lazy.compactMap(\.offer).first { body["offer"] = try JSONSerialization.jsonObject(with: offer) }
        // The device learns the account's transactions before it adds one (a first purchase on a new device
        // takes what the account already had as seen).
        _ = try await SimulatedDevice.sync()
        if state.askToBuy {
            let (status, answer) = try await SimulatedDevice.post("device/ask-to-buy", body)
            guard status == 202, let request = answer["requestId"] as? String else {
                throw StoreKitError.networkError("the App Store answered \(status)")
            }
            try SimulatedDevice.recordAskToBuy(request)
            return .pending
        }
        let (status, answer) = try await SimulatedDevice.post("device/purchases", body)
        if status == 202 { return .pending }
        guard status == 200 || status == 201, let jws = answer["signedTransaction"] as? String else {
            throw StoreKitError.networkError("the App Store answered \(status): \(answer["code"] ?? answer)")
        }
        let transaction = try Transaction(jws: jws)
        // StoreKit keeps a transaction on the device until the app finishes it.
        try SimulatedDevice.keepUnfinished(transaction.stored)
        try SimulatedDevice.markKnown(transaction.id)
        return .success(.verified(transaction))
    }
}

/// A transaction the App Store signed.
public struct Transaction: Sendable, Hashable, Identifiable {
    public let id: UInt64
    public let originalID: UInt64
    public let productID: String
    public let appAccountToken: UUID?
    let jws: String

    init(jws: String) throws {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { throw StoreKitError.unknown }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let payload = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw StoreKitError.unknown }
        try self.init(jws: jws, payload: payload)
    }

    init(jws: String, payload: [String: Any]) throws {
        guard let id = (payload["transactionId"] as? String).flatMap(UInt64.init),
            let original = (payload["originalTransactionId"] as? String).flatMap(UInt64.init),
            let product = payload["productId"] as? String
        else { throw StoreKitError.unknown }
        self.id = id
        self.originalID = original
        self.productID = product
        self.appAccountToken = (payload["appAccountToken"] as? String).flatMap(UUID.init(uuidString:))
        self.jws = jws
    }

    init(_ stored: SimulatedDevice.Stored) {
        id = stored.id
        originalID = stored.originalID
        productID = stored.productID
        appAccountToken = stored.appAccountToken
        jws = stored.jws
    }

    var stored: SimulatedDevice.Stored {
        .init(jws: jws, id: id, originalID: originalID, productID: productID, appAccountToken: appAccountToken)
    }

    /// Tells the App Store the app delivered it: it leaves `unfinished`.
    public func finish() async { SimulatedDevice.finish(id) }

    /// Every transaction the app has not finished, this launch or an earlier one (including what the App Store
    /// completed meanwhile: an Ask to Buy approved while the app was not running).
    public static var unfinished: AsyncStream<VerificationResult<Transaction>> {
        AsyncStream { continuation in
            let task = Task {
                _ = try? await SimulatedDevice.sync()
                for stored in SimulatedDevice.unfinished() { continuation.yield(.verified(Transaction(stored))) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Transactions that did not come from the app's own `purchase()`: Ask to Buy approvals, renewals, purchases on
    /// other devices. As StoreKit's, it first delivers what is unfinished from earlier launches, then runs for as
    /// long as it is iterated.
    public static var updates: AsyncStream<VerificationResult<Transaction>> {
        AsyncStream { continuation in
            let task = Task {
                for stored in SimulatedDevice.unfinished() { continuation.yield(.verified(Transaction(stored))) }
                while !Task.isCancelled {
                    for stored in (try? await SimulatedDevice.sync()) ?? [] { continuation.yield(.verified(Transaction(stored))) }
                    let interval = (try? SimulatedDevice.state().pollInterval) ?? .milliseconds(200)
                    try? await Task.sleep(for: interval)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The latest transaction of every product the user is entitled to now (non-consumables, active
    /// subscriptions, non-renewing passes).
    public static var currentEntitlements: AsyncStream<VerificationResult<Transaction>> {
        AsyncStream { continuation in
            let task = Task {
                if let account = try? SimulatedDevice.state().account,
                    let (status, answer) = try? await SimulatedDevice.post("device/accounts/\(account)/restore", [:]), status == 200
                {
                    for jws in answer["signedTransactions"] as? [String] ?? [] {
                        if let transaction = try? Transaction(jws: jws) { continuation.yield(.verified(transaction)) }
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// The App Store itself.
public enum AppStore {
    /// Brings the device's transactions up to date with the App Store (the user signs in, if asked).
    public static func sync() async throws {
        _ = try await SimulatedDevice.sync()
    }
}

/// A purchase the user started outside the app: a promoted in-app purchase on the App Store product page.
public struct PurchaseIntent: Sendable, Hashable, Identifiable {
    public let product: Product
    public var id: String { product.id }

    /// The intents, as the user starts them, for as long as the app iterates.
    public static var intents: AsyncStream<PurchaseIntent> { SimulatedDevice.intents() }
}

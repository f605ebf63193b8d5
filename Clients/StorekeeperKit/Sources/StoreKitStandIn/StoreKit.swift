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
        let appAccountToken: UUID?

        public static func appAccountToken(_ token: UUID) -> PurchaseOption { PurchaseOption(appAccountToken: token) }
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
        let (status, answer) = try await SimulatedDevice.post("device/purchases", body)
        if status == 202 { return .pending }
        guard status == 200 || status == 201, let jws = answer["signedTransaction"] as? String,
            let payload = answer["transaction"] as? [String: Any]
        else { throw StoreKitError.networkError("the App Store answered \(status)") }
        let transaction = try Transaction(jws: jws, payload: payload)
        // StoreKit keeps a transaction on the device until the app finishes it.
        try SimulatedDevice.keepUnfinished(transaction.stored)
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

    /// Every transaction the app has not finished, this launch or an earlier one.
    public static var unfinished: AsyncStream<VerificationResult<Transaction>> {
        AsyncStream { continuation in
            for stored in SimulatedDevice.unfinished() { continuation.yield(.verified(Transaction(stored))) }
            continuation.finish()
        }
    }
}

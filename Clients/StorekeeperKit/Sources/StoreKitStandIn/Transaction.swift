import Foundation

/// A transaction the App Store signed (`Transaction`), decoded from its JWS, which it keeps for
/// `jwsRepresentation`.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public struct Transaction: Identifiable, Equatable, Hashable, Sendable, SignedByTheAppStore {
    public let id: UInt64
    public let originalID: UInt64
    public let productID: String
    public let productType: Product.ProductType
    public let appAccountToken: UUID?
    public let purchaseDate: Date
    public let expirationDate: Date?
    public let revocationDate: Date?
    let jws: String

    /// Tells the App Store the app delivered it: it leaves `unfinished`.
    public func finish() async { SimulatedDevice.finish(id) }

    /// Every transaction the app has not finished, this launch or an earlier one (including what the App Store
    /// completed meanwhile: an Ask to Buy approved while the app was not running).
    public static var unfinished: Transaction.Transactions {
        Transactions { continuation in
            _ = try? await SimulatedDevice.sync()
            for stored in SimulatedDevice.unfinished() { continuation.yield(.verified(Transaction(stored))) }
        }
    }

    /// Transactions that did not come from the app's own `purchase()`: Ask to Buy approvals, renewals, purchases on
    /// other devices. As StoreKit's, it first delivers what is unfinished from earlier launches, then runs for as
    /// long as it is iterated.
    public static var updates: Transaction.Transactions {
        Transactions { continuation in
            for stored in SimulatedDevice.unfinished() { continuation.yield(.verified(Transaction(stored))) }
            while !Task.isCancelled {
                for stored in (try? await SimulatedDevice.sync()) ?? [] { continuation.yield(.verified(Transaction(stored))) }
                let interval = (try? SimulatedDevice.state().pollInterval) ?? .milliseconds(200)
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// The latest transaction of every product the user is entitled to now (non-consumables, active
    /// subscriptions, non-renewing passes).
    public static var currentEntitlements: Transaction.Transactions {
        Transactions { continuation in
            for jws in (try? await SimulatedDevice.currentEntitlements()) ?? [] {
                if let transaction = try? Transaction(jws: jws) { continuation.yield(.verified(transaction)) }
            }
        }
    }

    /// Shows the App Store's refund request sheet for the transaction; the simulator records the request.
    @available(iOS 15.0, visionOS 1.0, *)
    @available(macOS, unavailable)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    public static func beginRefundRequest(
        for transactionID: UInt64,
        in scene: UIWindowScene
    ) async throws
        -> Transaction.RefundRequestStatus
    {
        try await SimulatedDevice.requestRefund(transactionID)
    }

    /// How the refund request sheet ended.
    @available(iOS 15.0, macOS 12.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    public enum RefundRequestStatus: Equatable, Hashable, Sendable {
        case userCancelled
        case success
    }

    /// Why the refund request sheet could not be shown.
    @available(iOS 15.0, macOS 12.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    public enum RefundRequestError: Error, Equatable, Hashable, Sendable {
        case duplicateRequest
        case failed
    }

    /// An asynchronous sequence of signed transactions (`Transaction.Transactions`).
    public struct Transactions: AsyncSequence, Sendable {
        public typealias Element = VerificationResult<Transaction>

        private let produce: @Sendable (AsyncStream<Element>.Continuation) async -> Void

        init(_ produce: @escaping @Sendable (AsyncStream<Element>.Continuation) async -> Void) { self.produce = produce }

        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<Element>.Iterator

            public mutating func next() async -> VerificationResult<Transaction>? { await base.next() }
        }

        public func makeAsyncIterator() -> Transaction.Transactions.AsyncIterator {
            let produce = produce
            let stream = AsyncStream<Element> { continuation in
                let task = Task {
                    await produce(continuation)
                    continuation.finish()
                }
                continuation.onTermination = { _ in task.cancel() }
            }
            return AsyncIterator(base: stream.makeAsyncIterator())
        }
    }

    init(jws: String) throws {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { throw VerificationResult<Transaction>.VerificationError.invalidEncoding }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let payload = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw VerificationResult<Transaction>.VerificationError.invalidEncoding }
        guard let id = (payload["transactionId"] as? String).flatMap(UInt64.init),
            let original = (payload["originalTransactionId"] as? String).flatMap(UInt64.init),
            let product = payload["productId"] as? String,
            let purchased = payload["purchaseDate"] as? Double
        else { throw VerificationResult<Transaction>.VerificationError.missingRequiredProperties }
        func date(_ key: String) -> Date? { (payload[key] as? Double).map { Date(timeIntervalSince1970: $0 / 1000) } }
        self.id = id
        originalID = original
        productID = product
        productType = Product.ProductType(rawValue: payload["type"] as? String ?? "")
        appAccountToken = (payload["appAccountToken"] as? String).flatMap(UUID.init(uuidString:))
        purchaseDate = Date(timeIntervalSince1970: purchased / 1000)
        expirationDate = date("expiresDate")
        revocationDate = date("revocationDate")
        self.jws = jws
    }

    init(_ stored: SimulatedDevice.Stored) {
        // What the device stored was decoded from this JWS when it arrived.
        self =
            (try? Transaction(jws: stored.jws))
            ?? Transaction(
                id: stored.id,
                originalID: stored.originalID,
                productID: stored.productID,
                productType: .consumable,
                appAccountToken: stored.appAccountToken,
                purchaseDate: Date(timeIntervalSince1970: 0),
                expirationDate: nil,
                revocationDate: nil,
                jws: stored.jws
            )
    }

    private init(
        id: UInt64,
        originalID: UInt64,
        productID: String,
        productType: Product.ProductType,
        appAccountToken: UUID?,
        purchaseDate: Date,
        expirationDate: Date?,
        revocationDate: Date?,
        jws: String
    ) {
        self.id = id
        self.originalID = originalID
        self.productID = productID
        self.productType = productType
        self.appAccountToken = appAccountToken
        self.purchaseDate = purchaseDate
        self.expirationDate = expirationDate
        self.revocationDate = revocationDate
        self.jws = jws
    }

    var stored: SimulatedDevice.Stored {
        .init(jws: jws, id: id, originalID: originalID, productID: productID, appAccountToken: appAccountToken)
    }
}

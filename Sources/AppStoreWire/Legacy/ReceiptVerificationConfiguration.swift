import Foundation

/// Where and how ``ReceiptVerificationClient`` calls `verifyReceipt`.
public struct ReceiptVerificationConfiguration: Sendable {
    /// Apple's production endpoint.
    public static let appleProductionURL = URL(string: "https://buy.itunes.apple.com/verifyReceipt")!
    /// Apple's sandbox endpoint.
    public static let appleSandboxURL = URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")!

    /// The app's bundle identifier. A receipt of any other app is reported invalid, however genuine.
    public var bundleId: String
    /// The production `verifyReceipt` URL (Apple's, or a simulator's).
    public var productionURL: URL
    /// The sandbox `verifyReceipt` URL (Apple's, or a simulator's).
    public var sandboxURL: URL
    /// The app-specific shared secret sent as `password` unless a request carries its own.
    public var sharedSecret: String?
    /// Whether to ask for only the latest renewal of each subscription, unless a request says otherwise.
    public var excludeOldTransactions: Bool
    /// The environment asked first. Apple's rule is production first; `.sandbox` suits a test-only setup.
    public var firstEnvironment: AppStoreEnvironment
    /// How long one HTTP exchange may take.
    public var requestTimeout: Duration
    /// Largest response body accepted (receipts with long histories are big).
    public var maxResponseBytes: Int

    public init(
        bundleId: String,
        productionURL: URL = Self.appleProductionURL,
        sandboxURL: URL = Self.appleSandboxURL,
        sharedSecret: String? = nil,
        excludeOldTransactions: Bool = false,
        firstEnvironment: AppStoreEnvironment = .production,
        requestTimeout: Duration = .seconds(30),
        maxResponseBytes: Int = 32 * 1024 * 1024
    ) {
        self.bundleId = bundleId
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.sharedSecret = sharedSecret
        self.excludeOldTransactions = excludeOldTransactions
        self.firstEnvironment = firstEnvironment
        self.requestTimeout = requestTimeout
        self.maxResponseBytes = maxResponseBytes
    }
}

extension ReceiptVerificationConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    // The shared secret must never reach a log through interpolation, `dump` or a debugger summary.
    public var description: String {
        "ReceiptVerificationConfiguration(bundleId: \(bundleId), productionURL: \(productionURL), "
            + "sandboxURL: \(sandboxURL), sharedSecret: \(sharedSecret == nil ? "nil" : "<redacted>"), "
            + "excludeOldTransactions: \(excludeOldTransactions), firstEnvironment: \(firstEnvironment))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "bundleId": bundleId, "productionURL": productionURL, "sandboxURL": sandboxURL,
                "sharedSecret": sharedSecret == nil ? "nil" : "<redacted>",
                "excludeOldTransactions": excludeOldTransactions, "firstEnvironment": firstEnvironment,
                "requestTimeout": requestTimeout, "maxResponseBytes": maxResponseBytes,
            ],
            displayStyle: .struct
        )
    }
}

/// Where a purchase was made: with real money (`production`), or in one of a store's test environments. Stored by
/// its raw value.
public enum StoreEnvironment: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case production = "Production"
    case sandbox = "Sandbox"
    /// StoreKit testing in Xcode.
    case xcode = "Xcode"
    case localTesting = "LocalTesting"

    /// The environment a store names; one Storekeeper does not know is a test environment, never real money.
    public init(storeName: String?) {
        self = storeName.flatMap(StoreEnvironment.init(rawValue:)) ?? .sandbox
    }

    /// Whether money changed hands (test purchases are delivered, flagged and kept out of revenue).
    public var isProduction: Bool { self == .production }

    /// The stored name (`Production`), so a message or a key never reads `production`.
    public var description: String { rawValue }
}

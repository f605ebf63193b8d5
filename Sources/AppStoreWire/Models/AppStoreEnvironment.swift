/// The App Store environment a payload or request belongs to.
///
/// `Xcode` is StoreKit Testing in Xcode (signed by a local certificate, never Apple's chain) and `LocalTesting`
/// is used only by unit tests of Apple's libraries; neither is ever accepted in production.
public struct AppStoreEnvironment: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let sandbox: Self = "Sandbox"
    public static let production: Self = "Production"
    public static let xcode: Self = "Xcode"
    public static let localTesting: Self = "LocalTesting"

    public static let knownValues: [Self] = [.sandbox, .production, .xcode, .localTesting]
}

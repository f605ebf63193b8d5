/// The platform on which the customer originally bought the app (`originalPlatform`).
public struct PurchasePlatform: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// iOS (and iPadOS).
    public static let iOS: Self = "iOS"
    /// macOS.
    public static let macOS: Self = "macOS"
    /// tvOS.
    public static let tvOS: Self = "tvOS"
    /// visionOS.
    public static let visionOS: Self = "visionOS"

    public static let knownValues: [Self] = [.iOS, .macOS, .tvOS, .visionOS]
}

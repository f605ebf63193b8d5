import Foundation

/// The `externalPurchaseToken` object of an `EXTERNAL_PURCHASE_TOKEN` notification.
public struct ExternalPurchaseToken: Codable, Sendable, Hashable {
    /// The token's identifier; sandbox tokens start with `SANDBOX`.
    public var externalPurchaseId: String?
    /// When the token was created.
    public var tokenCreationDate: Date?
    /// The App Store's identifier of the app.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?

    public init(
        externalPurchaseId: String? = nil,
        tokenCreationDate: Date? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil
    ) {
        self.externalPurchaseId = externalPurchaseId
        self.tokenCreationDate = tokenCreationDate
        self.appAppleId = appAppleId
        self.bundleId = bundleId
    }

    /// The environment implied by ``externalPurchaseId`` (the object has no environment field): Sandbox when
    /// it starts with `SANDBOX`, otherwise Production, as Apple's libraries decide.
    public var impliedEnvironment: AppStoreEnvironment {
        externalPurchaseId?.hasPrefix("SANDBOX") == true ? .sandbox : .production
    }
}

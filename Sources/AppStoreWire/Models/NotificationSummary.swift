/// The `summary` object of a `RENEWAL_EXTENSION` / `SUMMARY` notification: a finished mass extension.
public struct NotificationSummary: Codable, Sendable, Hashable {
    // MARK: Request

    /// The identifier the developer gave the mass-extension request.
    public var requestIdentifier: String?
    /// The environment the extension ran in.
    public var environment: AppStoreEnvironment?
    /// The App Store's identifier of the app.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The subscription product whose renewal dates were extended.
    public var productId: String?
    /// The storefronts (ISO 3166-1 alpha-3) the extension applied to.
    public var storefrontCountryCodes: [String]?

    // MARK: Outcome

    /// How many subscriptions could not be extended.
    public var failedCount: Int64?
    /// How many subscriptions were extended.
    public var succeededCount: Int64?

    public init(
        requestIdentifier: String? = nil,
        environment: AppStoreEnvironment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        productId: String? = nil,
        storefrontCountryCodes: [String]? = nil,
        failedCount: Int64? = nil,
        succeededCount: Int64? = nil
    ) {
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.productId = productId
        self.storefrontCountryCodes = storefrontCountryCodes
        self.failedCount = failedCount
        self.succeededCount = succeededCount
    }
}

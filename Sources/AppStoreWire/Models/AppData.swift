/// The `appData` object of an app-level notification such as `RESCIND_CONSENT`.
public struct AppData: Codable, Sendable, Hashable {
    /// The App Store's identifier of the app.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The environment the notification applies to.
    public var environment: AppStoreEnvironment?
    /// JWS of an ``AppTransaction``.
    public var signedAppTransactionInfo: String?

    public init(
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        environment: AppStoreEnvironment? = nil,
        signedAppTransactionInfo: String? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.environment = environment
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}

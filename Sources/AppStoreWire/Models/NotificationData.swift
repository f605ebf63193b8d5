/// The `data` object of a V2 notification about an in-app purchase event.
public struct NotificationData: Codable, Sendable, Hashable {
    // MARK: App

    /// The App Store's identifier of the app (absent in sandbox).
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The app's build version (`CFBundleVersion`).
    public var bundleVersion: String?
    /// The environment the notification applies to.
    public var environment: AppStoreEnvironment?

    // MARK: Signed payloads

    /// JWS of a ``JWSTransactionDecodedPayload``.
    public var signedTransactionInfo: String?
    /// JWS of a ``JWSRenewalInfoDecodedPayload`` (auto-renewable subscriptions only).
    public var signedRenewalInfo: String?

    // MARK: Event details

    /// The subscription's status as of the notification's `signedDate` (auto-renewable subscriptions only).
    public var status: SubscriptionStatus?
    /// Why the customer asked for a refund (`CONSUMPTION_REQUEST` only).
    public var consumptionRequestReason: ConsumptionRequestReason?

    public init(
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        bundleVersion: String? = nil,
        environment: AppStoreEnvironment? = nil,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil,
        status: SubscriptionStatus? = nil,
        consumptionRequestReason: ConsumptionRequestReason? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.bundleVersion = bundleVersion
        self.environment = environment
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
        self.consumptionRequestReason = consumptionRequestReason
    }
}

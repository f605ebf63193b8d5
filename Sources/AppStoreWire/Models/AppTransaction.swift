import Foundation

/// The decoded payload of a `signedAppTransactionInfo` JWS: the customer's purchase of the app itself.
public struct AppTransaction: AppStoreSignedPayload, Codable, Sendable, Hashable {
    // MARK: App

    /// The environment of the receipt (`Production`, `Sandbox`, `Xcode`, ...).
    public var receiptType: AppStoreEnvironment?
    /// The App Store's identifier of the app (absent in sandbox and Xcode).
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The app version (`CFBundleVersion`) the receipt was created for.
    public var applicationVersion: String?
    /// The App Store Connect identifier of that app version.
    public var versionExternalIdentifier: Int64?

    // MARK: Purchase

    /// When the App Store created the receipt; also the certificate-chain validation date.
    public var receiptCreationDate: Date?
    /// When the customer originally bought (downloaded) the app.
    public var originalPurchaseDate: Date?
    /// The app version the customer originally bought.
    public var originalApplicationVersion: String?
    /// When the customer pre-ordered the app, if they did.
    public var preorderDate: Date?
    /// The unique identifier of this app download.
    public var appTransactionId: String?
    /// The platform on which the customer originally bought the app.
    public var originalPlatform: PurchasePlatform?

    // MARK: Device verification

    /// Base64 SHA-384 hash binding the receipt to a device (see Apple's device-verification docs).
    public var deviceVerification: String?
    /// The nonce used in ``deviceVerification``, as Apple sent it (see ``deviceVerificationNonceUUID``).
    public var deviceVerificationNonce: String?

    public init(
        receiptType: AppStoreEnvironment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        applicationVersion: String? = nil,
        versionExternalIdentifier: Int64? = nil,
        receiptCreationDate: Date? = nil,
        originalPurchaseDate: Date? = nil,
        originalApplicationVersion: String? = nil,
        deviceVerification: String? = nil,
        deviceVerificationNonce: String? = nil,
        preorderDate: Date? = nil,
        appTransactionId: String? = nil,
        originalPlatform: PurchasePlatform? = nil
    ) {
        self.receiptType = receiptType
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.versionExternalIdentifier = versionExternalIdentifier
        self.receiptCreationDate = receiptCreationDate
        self.originalPurchaseDate = originalPurchaseDate
        self.originalApplicationVersion = originalApplicationVersion
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
        self.preorderDate = preorderDate
        self.appTransactionId = appTransactionId
        self.originalPlatform = originalPlatform
    }

    // MARK: Derived values

    /// ``deviceVerificationNonce`` parsed as a UUID (any letter case); `nil` if absent or not a UUID.
    public var deviceVerificationNonceUUID: UUID? { deviceVerificationNonce.flatMap(UUID.init(uuidString:)) }

    /// The chain must have been valid at ``receiptCreationDate``.
    public var verificationDate: Date? { receiptCreationDate }

    /// Identity fields this payload kind always carries.
    public static let carriedIdentityFields: PayloadIdentity.Fields = [.bundleId, .environment, .appAppleId]

    /// The bundle identifier, the receipt type as environment, and the `appAppleId`.
    public var claimedIdentity: PayloadIdentity {
        PayloadIdentity(bundleId: bundleId, environment: receiptType, appAppleId: appAppleId)
    }
}

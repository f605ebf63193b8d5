import Foundation

/// The body Apple posts to the developer's Get Retention Message endpoint: `{"signedPayload": "<JWS>"}`.
public struct RealtimeRequestBody: Codable, Sendable, Hashable {
    public var signedPayload: String?

    public init(signedPayload: String?) { self.signedPayload = signedPayload }
}

/// The decoded `signedPayload` of a realtime retention request (Retention Messaging API 1.1+): a subscriber is
/// looking at the subscription with a Cancel button.
public struct DecodedRealtimeRequestBody: AppStoreSignedPayload, Codable, Sendable, Hashable {
    public var originalTransactionId: String?
    public var appAppleId: Int64?
    public var productId: String?
    /// The device's locale, e.g. `en-US`.
    public var userLocale: String?
    /// A UUID unique to each request.
    public var requestIdentifier: String?
    public var environment: AppStoreEnvironment?
    public var signedDate: Date?

    public init(
        originalTransactionId: String? = nil,
        appAppleId: Int64? = nil,
        productId: String? = nil,
        userLocale: String? = nil,
        requestIdentifier: String? = nil,
        environment: AppStoreEnvironment? = nil,
        signedDate: Date? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.appAppleId = appAppleId
        self.productId = productId
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.signedDate = signedDate
    }

    public var verificationDate: Date? { signedDate }

    /// No bundle id: the request names the app by `appAppleId` only (checked in Production, as Apple's libraries do).
    public static let carriedIdentityFields: PayloadIdentity.Fields = [.environment, .appAppleId]

    public var claimedIdentity: PayloadIdentity { PayloadIdentity(environment: environment, appAppleId: appAppleId) }
}

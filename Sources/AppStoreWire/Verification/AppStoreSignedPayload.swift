import Foundation

/// A payload Apple signs as a JWS, with what ``SignedDataVerifier`` needs to finish its checks.
public protocol AppStoreSignedPayload: Codable, Sendable {
    /// When the certificate chain must have been valid: `signedDate`, or `receiptCreationDate` for an app
    /// transaction. `nil` means the verifier validates at the current time.
    var verificationDate: Date? { get }
    /// The identity the payload claims.
    var claimedIdentity: PayloadIdentity { get }
    /// The identity fields this kind of payload always carries: one of these missing is a failed check,
    /// not a skipped one.
    static var carriedIdentityFields: PayloadIdentity.Fields { get }
}

/// The app and environment a signed payload says it belongs to.
public struct PayloadIdentity: Sendable, Hashable {
    public var bundleId: String?
    public var environment: AppStoreEnvironment?
    public var appAppleId: Int64?

    /// Which identity fields a kind of payload carries.
    public struct Fields: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let bundleId = Fields(rawValue: 1)
        public static let environment = Fields(rawValue: 2)
        /// Carried on Production data (Apple omits it in Sandbox).
        public static let appAppleId = Fields(rawValue: 4)
    }

    public init(bundleId: String? = nil, environment: AppStoreEnvironment? = nil, appAppleId: Int64? = nil) {
        self.bundleId = bundleId
        self.environment = environment
        self.appAppleId = appAppleId
    }
}

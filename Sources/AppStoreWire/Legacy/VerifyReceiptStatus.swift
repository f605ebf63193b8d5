/// The `status` of a `verifyReceipt` response, with how Storekeeper must act on it.
public struct VerifyReceiptStatus: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The receipt is valid (an expired subscription still gives 0).
    public static let valid: Self = 0
    /// The request was not an HTTP POST or its JSON could not be read.
    public static let unreadableRequest: Self = 21000
    /// No longer sent by the App Store.
    public static let noLongerSent: Self = 21001
    /// `receipt-data` malformed, or a temporary service issue.
    public static let malformedReceiptData: Self = 21002
    /// The receipt could not be authenticated.
    public static let notAuthenticated: Self = 21003
    /// The shared secret does not match the account's.
    public static let sharedSecretMismatch: Self = 21004
    /// The receipt server is temporarily unavailable.
    public static let serverUnavailable: Self = 21005
    /// Valid, but the subscription expired (iOS 6-style receipts; the receipt is still decoded).
    public static let subscriptionExpired: Self = 21006
    /// A sandbox receipt was sent to production: resend to sandbox.
    public static let sandboxReceiptSentToProduction: Self = 21007
    /// A production receipt was sent to sandbox: resend to production.
    public static let productionReceiptSentToSandbox: Self = 21008
    /// Internal data access error.
    public static let internalDataAccessError: Self = 21009
    /// The user account cannot be found or was deleted: treat as never purchased.
    public static let accountNotFound: Self = 21010

    public static let knownValues: [Self] = [
        .valid, .unreadableRequest, .noLongerSent, .malformedReceiptData, .notAuthenticated,
        .sharedSecretMismatch, .serverUnavailable, .subscriptionExpired, .sandboxReceiptSentToProduction,
        .productionReceiptSentToSandbox, .internalDataAccessError, .accountNotFound,
    ]

    /// Whether this is one of the internal data access errors 21100–21199, retryable only when the
    /// response says `is-retryable`.
    public var isInternalDataAccessRange: Bool { (21100...21199).contains(rawValue) }

    /// What to do with a response carrying this status.
    ///
    /// - Parameter isRetryable: the response's `is-retryable`; it only matters for 21100–21199.
    public func disposition(isRetryable: Bool? = nil) -> VerifyReceiptDisposition {
        switch self {
        // 21006 still carries the decoded receipt: it is authentic, the caller reads the expiry.
        case .valid, .subscriptionExpired:
            return .valid
        case .sandboxReceiptSentToProduction:
            return .resendToSandbox
        case .productionReceiptSentToSandbox:
            return .resendToProduction
        case .malformedReceiptData, .serverUnavailable, .internalDataAccessError:
            return .retryLater
        case .unreadableRequest, .notAuthenticated, .sharedSecretMismatch, .accountNotFound:
            return .invalid
        case _ where isInternalDataAccessRange:
            return isRetryable == true ? .retryLater : .invalid
        default:
            // 21001 ("no longer sent") and codes Apple may add are no verdict on the receipt; asking
            // again later is safer than rejecting a purchase for good.
            return .retryLater
        }
    }
}

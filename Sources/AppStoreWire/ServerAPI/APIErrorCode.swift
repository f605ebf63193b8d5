/// An `errorCode` of the App Store Server API and the Retention Messaging API.
///
/// Codes Apple adds later decode unchanged (``isKnown`` is then false).
public struct APIErrorCode: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let generalBadRequest: Self = 4_000_000
    public static let invalidAppIdentifier: Self = 4_000_002
    public static let invalidRequestRevision: Self = 4_000_005
    public static let invalidTransactionId: Self = 4_000_006
    public static let invalidOriginalTransactionId: Self = 4_000_008
    public static let invalidExtendByDays: Self = 4_000_009
    public static let invalidExtendReasonCode: Self = 4_000_010
    public static let invalidRequestIdentifier: Self = 4_000_011
    public static let startDateTooFarInPast: Self = 4_000_012
    public static let startDateAfterEndDate: Self = 4_000_013
    public static let invalidPaginationToken: Self = 4_000_014
    public static let invalidStartDate: Self = 4_000_015
    public static let invalidEndDate: Self = 4_000_016
    public static let paginationTokenExpired: Self = 4_000_017
    public static let invalidNotificationType: Self = 4_000_018
    public static let multipleFiltersSupplied: Self = 4_000_019
    public static let invalidTestNotificationToken: Self = 4_000_020
    public static let invalidSort: Self = 4_000_021
    public static let invalidProductType: Self = 4_000_022
    public static let invalidProductId: Self = 4_000_023
    public static let invalidSubscriptionGroupIdentifier: Self = 4_000_024
    /// Deprecated with the `excludeRevoked` parameter.
    public static let invalidExcludeRevoked: Self = 4_000_025
    public static let invalidInAppOwnershipType: Self = 4_000_026
    public static let invalidEmptyStorefrontCountryCodeList: Self = 4_000_027
    public static let invalidStorefrontCountryCode: Self = 4_000_028
    public static let invalidRevoked: Self = 4_000_030
    public static let invalidStatus: Self = 4_000_031
    public static let invalidAccountTenure: Self = 4_000_032
    public static let invalidAppAccountToken: Self = 4_000_033
    public static let invalidConsumptionStatus: Self = 4_000_034
    public static let invalidCustomerConsented: Self = 4_000_035
    public static let invalidDeliveryStatus: Self = 4_000_036
    public static let invalidLifetimeDollarsPurchased: Self = 4_000_037
    public static let invalidLifetimeDollarsRefunded: Self = 4_000_038
    public static let invalidPlatform: Self = 4_000_039
    public static let invalidPlayTime: Self = 4_000_040
    public static let invalidSampleContentProvided: Self = 4_000_041
    public static let invalidUserStatus: Self = 4_000_042
    /// Retired by Apple (the v2 consumption endpoint takes every product type).
    public static let invalidTransactionNotConsumable: Self = 4_000_043
    public static let invalidTransactionTypeNotSupported: Self = 4_000_047
    public static let appTransactionIdNotSupported: Self = 4_000_048
    public static let invalidAppAccountTokenUUID: Self = 4_000_183
    public static let familyTransactionNotSupported: Self = 4_000_185
    public static let transactionIdIsNotOriginalTransactionId: Self = 4_000_187
    /// Consumption information for an auto-renewable subscription carries no `consumptionPercentage`.
    public static let consumptionPercentageNotAllowed: Self = 4_000_209
    /// Consumption information and Set App Account Token refuse assigned transactions (API 1.22).
    public static let invalidAssignedTransactionNotSupported: Self = 4_000_227
    public static let invalidRefundPreference: Self = 4_000_044
    public static let subscriptionExtensionIneligible: Self = 4_030_004
    public static let subscriptionMaxExtension: Self = 4_030_005
    public static let familySharedSubscriptionExtensionIneligible: Self = 4_030_007
    /// An assigned subscription cannot be extended (API 1.22).
    public static let assignedSubscriptionExtensionIneligible: Self = 4_030_028
    // Multiseat seat endpoints (API 1.23). Apple has published names, not numbers, for these errors: the numbers
    // here are Storekeeper's, used by its simulator, until Apple's are known.
    /// Claim Seat: no seat is free.
    public static let noAvailableSeats: Self = 4_090_101
    /// Unclaim Seat, Associate Seat: no such claim.
    public static let seatClaimIdNotFound: Self = 4_040_101
    /// Claim Seat, Associate Seat: no such app install.
    public static let appTransactionIdNotFound: Self = 4_040_102
    /// The transaction is not a purchase whose developer manages the group's invitations.
    public static let transactionNotDevManagedGroup: Self = 4_000_301
    public static let accountNotFound: Self = 4_040_001
    /// Retryable.
    public static let accountNotFoundRetryable: Self = 4_040_002
    public static let appNotFound: Self = 4_040_003
    /// Retryable.
    public static let appNotFoundRetryable: Self = 4_040_004
    public static let originalTransactionIdNotFound: Self = 4_040_005
    /// Retryable.
    public static let originalTransactionIdNotFoundRetryable: Self = 4_040_006
    public static let serverNotificationUrlNotFound: Self = 4_040_007
    public static let testNotificationNotFound: Self = 4_040_008
    public static let statusRequestNotFound: Self = 4_040_009
    public static let transactionIdNotFound: Self = 4_040_010
    public static let appTransactionDoesNotExist: Self = 4_040_019
    // Retention Messaging API
    public static let invalidImage: Self = 4_000_161
    public static let headerTooLong: Self = 4_000_162
    public static let bodyTooLong: Self = 4_000_163
    public static let invalidLocale: Self = 4_000_164
    public static let altTextTooLong: Self = 4_000_175
    public static let invalidPerformanceTestRequest: Self = 4_000_211
    public static let invalidRequestId: Self = 4_000_212
    public static let existingPerformanceTestRun: Self = 4_000_213
    public static let badRequestRealtimeUrl: Self = 4_000_215
    public static let badRequestImageSize: Self = 4_000_216
    public static let tooManyBulletPoints: Self = 4_000_218
    public static let bulletPointTextTooLong: Self = 4_000_219
    public static let aboveImageRequiresAnImage: Self = 4_000_224
    public static let maximumNumberOfImagesReached: Self = 4_030_014
    public static let maximumNumberOfMessagesReached: Self = 4_030_016
    public static let messageNotApproved: Self = 4_030_017
    public static let imageNotApproved: Self = 4_030_018
    public static let imageInUse: Self = 4_030_019
    public static let forbiddenNoPassingTest: Self = 4_030_026
    public static let imageNotFound: Self = 4_040_014
    public static let messageNotFound: Self = 4_040_015
    public static let performanceTestRunNotFound: Self = 4_040_018
    public static let defaultMessageNotFound: Self = 4_040_020
    public static let realtimeUrlNotFound: Self = 4_040_021
    public static let imageAlreadyExists: Self = 4_090_000
    public static let messageAlreadyExists: Self = 4_090_001
    /// HTTP 429; retry after the `Retry-After` time.
    public static let rateLimitExceeded: Self = 4_290_000
    public static let generalInternal: Self = 5_000_000
    /// Retryable.
    public static let generalInternalRetryable: Self = 5_000_001

    public static let knownValues: [Self] = [
        .generalBadRequest, .invalidAppIdentifier, .invalidRequestRevision, .invalidTransactionId,
        .invalidOriginalTransactionId, .invalidExtendByDays, .invalidExtendReasonCode, .invalidRequestIdentifier,
        .startDateTooFarInPast, .startDateAfterEndDate, .invalidPaginationToken, .invalidStartDate, .invalidEndDate,
        .paginationTokenExpired, .invalidNotificationType, .multipleFiltersSupplied, .invalidTestNotificationToken,
        .invalidSort, .invalidProductType, .invalidProductId, .invalidSubscriptionGroupIdentifier,
        .invalidExcludeRevoked, .invalidInAppOwnershipType, .invalidEmptyStorefrontCountryCodeList,
        .invalidStorefrontCountryCode, .invalidRevoked, .invalidStatus, .invalidAccountTenure,
        .invalidAppAccountToken, .invalidConsumptionStatus, .invalidCustomerConsented, .invalidDeliveryStatus,
        .invalidLifetimeDollarsPurchased, .invalidLifetimeDollarsRefunded, .invalidPlatform, .invalidPlayTime,
        .invalidSampleContentProvided, .invalidUserStatus, .invalidTransactionNotConsumable,
        .invalidTransactionTypeNotSupported, .appTransactionIdNotSupported, .invalidAppAccountTokenUUID,
        .familyTransactionNotSupported, .transactionIdIsNotOriginalTransactionId, .subscriptionExtensionIneligible,
        .subscriptionMaxExtension, .familySharedSubscriptionExtensionIneligible, .accountNotFound,
        .accountNotFoundRetryable, .appNotFound, .appNotFoundRetryable, .originalTransactionIdNotFound,
        .originalTransactionIdNotFoundRetryable, .serverNotificationUrlNotFound, .testNotificationNotFound,
        .statusRequestNotFound, .transactionIdNotFound, .appTransactionDoesNotExist, .rateLimitExceeded,
        .generalInternal, .generalInternalRetryable,
        .invalidImage, .headerTooLong, .bodyTooLong, .invalidLocale, .altTextTooLong, .invalidPerformanceTestRequest, .invalidRequestId,
        .existingPerformanceTestRun, .badRequestRealtimeUrl, .badRequestImageSize, .tooManyBulletPoints, .bulletPointTextTooLong,
        .aboveImageRequiresAnImage, .maximumNumberOfImagesReached, .maximumNumberOfMessagesReached, .messageNotApproved, .imageNotApproved,
        .imageInUse, .forbiddenNoPassingTest, .imageNotFound, .messageNotFound, .performanceTestRunNotFound, .defaultMessageNotFound,
        .realtimeUrlNotFound, .imageAlreadyExists, .messageAlreadyExists,
        .consumptionPercentageNotAllowed, .invalidAssignedTransactionNotSupported, .invalidRefundPreference,
        .assignedSubscriptionExtensionIneligible,
    ]

    /// Whether Apple documents the error as temporary: the same request may succeed later.
    ///
    /// Only the `…Retryable` codes and the rate limit; every other code is final for this request.
    public var isRetryable: Bool {
        switch self {
        case .accountNotFoundRetryable, .appNotFoundRetryable, .originalTransactionIdNotFoundRetryable,
            .generalInternalRetryable, .rateLimitExceeded:
            true
        default:
            false
        }
    }
}

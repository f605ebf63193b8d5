/// An entry of `purchases.voidedpurchases.list` (`androidpublisher#voidedPurchase`): a purchase Google refunded and
/// revoked, charged back, or voided for not being acknowledged. Only revoked orders are listed.
public struct VoidedPurchase: Codable, Sendable, Hashable {
    public var kind: String?
    /// The one-time purchase or subscription (its renewals share it).
    public var purchaseToken: String?
    /// The one-time purchase, subscription purchase or renewal: the key with `type=1`.
    public var orderId: String?
    public var purchaseTimeMillis: PlayInt64?
    public var voidedTimeMillis: PlayInt64?
    public var voidedSource: VoidedSource?
    public var voidedReason: VoidedReason?
    /// Units refunded by a quantity-based partial refund (only with `includeQuantityBasedPartialRefund=true`).
    public var voidedQuantity: Int32?

    public init(
        kind: String? = "androidpublisher#voidedPurchase",
        purchaseToken: String?,
        orderId: String?,
        purchaseTimeMillis: PlayInt64?,
        voidedTimeMillis: PlayInt64?,
        voidedSource: VoidedSource?,
        voidedReason: VoidedReason?,
        voidedQuantity: Int32? = nil
    ) {
        self.kind = kind
        self.purchaseToken = purchaseToken
        self.orderId = orderId
        self.purchaseTimeMillis = purchaseTimeMillis
        self.voidedTimeMillis = voidedTimeMillis
        self.voidedSource = voidedSource
        self.voidedReason = voidedReason
        self.voidedQuantity = voidedQuantity
    }
}

/// Who voided it: 0 the user, 1 the developer, 2 Google.
public struct VoidedSource: PlayIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let user: Self = 0
    public static let developer: Self = 1
    public static let google: Self = 2

    public static let knownValues: [Self] = [.user, .developer, .google]
    public var name: String? { [0: "USER", 1: "DEVELOPER", 2: "GOOGLE"][rawValue] }
}

/// Why it was voided.
public struct VoidedReason: PlayIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let other: Self = 0
    public static let remorse: Self = 1
    public static let notReceived: Self = 2
    public static let defective: Self = 3
    public static let accidentalPurchase: Self = 4
    public static let fraud: Self = 5
    public static let friendlyFraud: Self = 6
    public static let chargeback: Self = 7
    /// Not acknowledged within three days: Google refunded and revoked it.
    public static let unacknowledgedPurchase: Self = 8

    public static let knownValues: [Self] = [
        .other, .remorse, .notReceived, .defective, .accidentalPurchase, .fraud, .friendlyFraud, .chargeback, .unacknowledgedPurchase,
    ]
    public var name: String? {
        [
            0: "OTHER", 1: "REMORSE", 2: "NOT_RECEIVED", 3: "DEFECTIVE", 4: "ACCIDENTAL_PURCHASE", 5: "FRAUD", 6: "FRIENDLY_FRAUD",
            7: "CHARGEBACK", 8: "UNACKNOWLEDGED_PURCHASE",
        ][rawValue]
    }
}

/// A page of voided purchases, oldest first.
public struct VoidedPurchasesListResponse: Codable, Sendable, Hashable {
    public var pageInfo: PageInfo?
    public var tokenPagination: TokenPagination?
    public var voidedPurchases: [VoidedPurchase]?

    public init(pageInfo: PageInfo? = nil, tokenPagination: TokenPagination? = nil, voidedPurchases: [VoidedPurchase]?) {
        self.pageInfo = pageInfo
        self.tokenPagination = tokenPagination
        self.voidedPurchases = voidedPurchases
    }

    public struct PageInfo: Codable, Sendable, Hashable {
        public var resultPerPage: Int32?
        public var startIndex: Int32?
        public var totalResults: Int32?

        public init(resultPerPage: Int32? = nil, startIndex: Int32? = nil, totalResults: Int32? = nil) {
            self.resultPerPage = resultPerPage
            self.startIndex = startIndex
            self.totalResults = totalResults
        }
    }

    public struct TokenPagination: Codable, Sendable, Hashable {
        public var nextPageToken: String?
        public var previousPageToken: String?

        public init(nextPageToken: String? = nil, previousPageToken: String? = nil) {
            self.nextPageToken = nextPageToken
            self.previousPageToken = previousPageToken
        }
    }
}

import Foundation

/// The body of Send Consumption Information V1 (all fields required; `0` means undeclared).
public struct ConsumptionRequestV1: Codable, Hashable, Sendable {
    /// Must be `true`: the customer consented to share consumption data.
    public var customerConsented: Bool
    /// How much of the purchase was consumed.
    public var consumptionStatus: ConsumptionStatus
    /// Where it was consumed.
    public var platform: Platform
    /// Whether a free sample, trial or description of the content was given before purchase.
    public var sampleContentProvided: Bool
    /// Whether the purchase was delivered and works.
    public var deliveryStatus: DeliveryStatusV1
    /// The customer's app account token; sent as `""` when nil.
    public var appAccountToken: UUID?
    /// Age of the customer's account.
    public var accountTenure: AccountTenure
    /// How long the customer used the app.
    public var playTime: PlayTime
    /// Total USD refunded to the customer, all platforms.
    public var lifetimeDollarsRefunded: LifetimeDollarsRefunded
    /// Total USD the customer spent, all platforms.
    public var lifetimeDollarsPurchased: LifetimeDollarsPurchased
    /// The status of the customer's account.
    public var userStatus: UserStatus
    /// Your preference for the refund decision.
    public var refundPreference: RefundPreferenceV1

    enum CodingKeys: String, CodingKey {
        case customerConsented, consumptionStatus, platform, sampleContentProvided, deliveryStatus
        case appAccountToken, accountTenure, playTime, lifetimeDollarsRefunded, lifetimeDollarsPurchased
        case userStatus, refundPreference
    }

    public init(
        customerConsented: Bool,
        consumptionStatus: ConsumptionStatus = .undeclared,
        platform: Platform = .undeclared,
        sampleContentProvided: Bool,
        deliveryStatus: DeliveryStatusV1,
        appAccountToken: UUID? = nil,
        accountTenure: AccountTenure = .undeclared,
        playTime: PlayTime = .undeclared,
        lifetimeDollarsRefunded: LifetimeDollarsRefunded = .undeclared,
        lifetimeDollarsPurchased: LifetimeDollarsPurchased = .undeclared,
        userStatus: UserStatus = .undeclared,
        refundPreference: RefundPreferenceV1 = .undeclared
    ) {
        self.customerConsented = customerConsented
        self.consumptionStatus = consumptionStatus
        self.platform = platform
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.appAccountToken = appAccountToken
        self.accountTenure = accountTenure
        self.playTime = playTime
        self.lifetimeDollarsRefunded = lifetimeDollarsRefunded
        self.lifetimeDollarsPurchased = lifetimeDollarsPurchased
        self.userStatus = userStatus
        self.refundPreference = refundPreference
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        customerConsented = try container.decode(Bool.self, forKey: .customerConsented)
        consumptionStatus =
            try container.decodeIfPresent(ConsumptionStatus.self, forKey: .consumptionStatus) ?? .undeclared
        platform = try container.decodeIfPresent(Platform.self, forKey: .platform) ?? .undeclared
        sampleContentProvided = try container.decode(Bool.self, forKey: .sampleContentProvided)
        deliveryStatus = try container.decode(DeliveryStatusV1.self, forKey: .deliveryStatus)
        let token = try container.decodeIfPresent(String.self, forKey: .appAccountToken) ?? ""
        appAccountToken = token.isEmpty ? nil : UUID(uuidString: token)
        accountTenure = try container.decodeIfPresent(AccountTenure.self, forKey: .accountTenure) ?? .undeclared
        playTime = try container.decodeIfPresent(PlayTime.self, forKey: .playTime) ?? .undeclared
        lifetimeDollarsRefunded =
            try container.decodeIfPresent(LifetimeDollarsRefunded.self, forKey: .lifetimeDollarsRefunded) ?? .undeclared
        lifetimeDollarsPurchased =
            try container.decodeIfPresent(LifetimeDollarsPurchased.self, forKey: .lifetimeDollarsPurchased)
            ?? .undeclared
        userStatus = try container.decodeIfPresent(UserStatus.self, forKey: .userStatus) ?? .undeclared
        refundPreference =
            try container.decodeIfPresent(RefundPreferenceV1.self, forKey: .refundPreference) ?? .undeclared
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(customerConsented, forKey: .customerConsented)
        try container.encode(consumptionStatus, forKey: .consumptionStatus)
        try container.encode(platform, forKey: .platform)
        try container.encode(sampleContentProvided, forKey: .sampleContentProvided)
        try container.encode(deliveryStatus, forKey: .deliveryStatus)
        // The field is required; Apple documents an empty string for "no token".
        try container.encode(appAccountToken?.uuidString.lowercased() ?? "", forKey: .appAccountToken)
        try container.encode(accountTenure, forKey: .accountTenure)
        try container.encode(playTime, forKey: .playTime)
        try container.encode(lifetimeDollarsRefunded, forKey: .lifetimeDollarsRefunded)
        try container.encode(lifetimeDollarsPurchased, forKey: .lifetimeDollarsPurchased)
        try container.encode(userStatus, forKey: .userStatus)
        try container.encode(refundPreference, forKey: .refundPreference)
    }
}

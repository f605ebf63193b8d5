import Foundation

/// What a subscriber about to cancel is shown, chosen in real time (Apple's Retention Messaging): the first rule
/// whose products, locales and conditions on the customer's history match decides the answer.
///
/// Rules live in the catalog file (`retention`), in order; a request no rule matches is answered 404, so Apple
/// shows the default message configured for the product and locale.
public struct RetentionRule: Sendable, Hashable, Codable {
    /// One of the three answers Apple accepts.
    public enum Answer: Sendable, Hashable {
        /// An uploaded message (text, optionally an image and bullet points).
        case message(messageId: String)
        /// A switch-plan message suggesting another product of the subscription's group (and its billing plan).
        case alternateProduct(messageId: String, productId: String, billingPlan: String?)
        /// A promotional offer of the subscription's product, signed with the app's In-App Purchase key.
        case promotionalOffer(messageId: String, offerId: String)

        public var messageId: String {
            switch self {
            case .message(let id), .alternateProduct(let id, _, _), .promotionalOffer(let id, _): id
            }
        }

        /// `message`, `alternateProduct` or `promotionalOffer`.
        public var kind: String {
            switch self {
            case .message: "message"
            case .alternateProduct: "alternateProduct"
            case .promotionalOffer: "promotionalOffer"
            }
        }
    }

    /// Conditions on what the customer did before; all given ones must hold.
    public struct Conditions: Sendable, Hashable, Codable {
        /// Paid periods of this subscription so far (the first purchase counts as one).
        public var minimumPaidPeriods: Int?
        public var maximumPaidPeriods: Int?
        /// Refunds the customer had, across purchases.
        public var maximumRefunds: Int?
        /// The customer never redeemed this rule's promotional offer before.
        public var offerNotRedeemedBefore: Bool?

        public init(minimumPaidPeriods: Int? = nil, maximumPaidPeriods: Int? = nil, maximumRefunds: Int? = nil, offerNotRedeemedBefore: Bool? = nil) {
            self.minimumPaidPeriods = minimumPaidPeriods
            self.maximumPaidPeriods = maximumPaidPeriods
            self.maximumRefunds = maximumRefunds
            self.offerNotRedeemedBefore = offerNotRedeemedBefore
        }
    }

    public var id: String
    /// The subscription products the rule is for; nil: every one.
    public var productIds: [String]?
    /// Locales (`en-US`) or languages (`en`, matching every `en-…`); nil: every locale.
    public var locales: [String]?
    public var when: Conditions?
    public var answer: Answer

    public init(id: String, productIds: [String]? = nil, locales: [String]? = nil, when: Conditions? = nil, answer: Answer) {
        self.id = id
        self.productIds = productIds
        self.locales = locales
        self.when = when
        self.answer = answer
    }

    enum CodingKeys: String, CodingKey { case id, productIds, locales, when, message, alternateProduct, promotionalOffer }
    struct Message: Codable { var messageId: String }
    struct Alternate: Codable {
        var messageId: String
        var productId: String
        var billingPlan: String?
    }
    struct Offer: Codable {
        var messageId: String
        var offerId: String
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        productIds = try c.decodeIfPresent([String].self, forKey: .productIds)
        locales = try c.decodeIfPresent([String].self, forKey: .locales)
        when = try c.decodeIfPresent(Conditions.self, forKey: .when)
        let message = try c.decodeIfPresent(Message.self, forKey: .message)
        let alternate = try c.decodeIfPresent(Alternate.self, forKey: .alternateProduct)
        let offer = try c.decodeIfPresent(Offer.self, forKey: .promotionalOffer)
        switch (message, alternate, offer) {
        case (let message?, nil, nil): answer = .message(messageId: message.messageId)
        case (nil, let alternate?, nil):
            answer = .alternateProduct(messageId: alternate.messageId, productId: alternate.productId, billingPlan: alternate.billingPlan)
        case (nil, nil, let offer?): answer = .promotionalOffer(messageId: offer.messageId, offerId: offer.offerId)
        default:
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath,
                    debugDescription: "retention rule \(id) needs exactly one of message, alternateProduct, promotionalOffer"
                )
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encodeIfPresent(productIds, forKey: .productIds)
        try c.encodeIfPresent(locales, forKey: .locales)
        try c.encodeIfPresent(when, forKey: .when)
        switch answer {
        case .message(let id): try c.encode(Message(messageId: id), forKey: .message)
        case .alternateProduct(let id, let product, let plan):
            try c.encode(Alternate(messageId: id, productId: product, billingPlan: plan), forKey: .alternateProduct)
        case .promotionalOffer(let id, let offer): try c.encode(Offer(messageId: id, offerId: offer), forKey: .promotionalOffer)
        }
    }

    /// Whether the rule applies to `productId` in `locale` for a customer with `history`.
    public func matches(productId: String, locale: String, history: RetentionHistory) -> Bool {
        if let productIds, !productIds.contains(productId) { return false }
        if let locales {
            let language = locale.split(separator: "-").first.map(String.init) ?? locale
            guard locales.contains(where: { $0 == locale || $0 == language }) else { return false }
        }
        guard let when else { return true }
        if let minimum = when.minimumPaidPeriods, history.paidPeriods < minimum { return false }
        if let maximum = when.maximumPaidPeriods, history.paidPeriods > maximum { return false }
        if let maximum = when.maximumRefunds, history.refunds > maximum { return false }
        if when.offerNotRedeemedBefore == true, case .promotionalOffer(_, let offerId) = answer, history.redeemedOffers.contains(offerId) {
            return false
        }
        return true
    }

    /// The first of `rules` that matches.
    public static func choose(_ rules: [RetentionRule], productId: String, locale: String, history: RetentionHistory) -> RetentionRule? {
        rules.first { $0.matches(productId: productId, locale: locale, history: history) }
    }

    /// The first problem with the rule against `catalog`, if any.
    func problem(in catalog: Catalog) -> String? {
        if id.isEmpty { return "a retention rule has no id" }
        for productId in productIds ?? [] where catalog.product(productId)?.kind != .autoRenewable {
            return "retention rule \(id) names \(productId), which is not an auto-renewable product"
        }
        guard UUID(uuidString: answer.messageId) != nil else { return "retention rule \(id): messageId must be a UUID" }
        if case .alternateProduct(_, let productId, let plan) = answer {
            if catalog.product(productId)?.kind != .autoRenewable {
                return "retention rule \(id) suggests \(productId), which is not an auto-renewable product"
            }
            if let plan, plan != "MONTHLY" && plan != "BILLED_UPFRONT" { return "retention rule \(id): billingPlan is MONTHLY or BILLED_UPFRONT" }
        }
        if case .promotionalOffer(_, let offerId) = answer, offerId.isEmpty || offerId.utf8.count > 64 {
            return "retention rule \(id): offerId must be 1–64 bytes"
        }
        return nil
    }
}

/// What a retention rule may ask about the subscriber: from Storekeeper's own records of the subscription and
/// its user.
public struct RetentionHistory: Sendable, Hashable {
    /// The user the subscription belongs to, when Storekeeper attributed it.
    public var user: UserID?
    /// Paid periods of the subscription (its delivered transactions).
    public var paidPeriods: Int
    /// The user's refunded or revoked transactions.
    public var refunds: Int
    /// Promotional and win-back offer ids the user redeemed before.
    public var redeemedOffers: Set<String>

    public init(user: UserID?, paidPeriods: Int, refunds: Int, redeemedOffers: Set<String>) {
        self.user = user
        self.paidPeriods = paidPeriods
        self.refunds = refunds
        self.redeemedOffers = redeemedOffers
    }
}

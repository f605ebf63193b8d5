import Foundation

/// The answer to a realtime retention request: exactly one of a message, a switch-plan suggestion or a promotional
/// offer (Apple shows the default message for the product and locale when the answer is missing or invalid).
public struct RealtimeResponseBody: Codable, Sendable, Hashable {
    public var message: RetentionMessage?
    public var alternateProduct: AlternateProduct?
    public var promotionalOffer: RetentionPromotionalOffer?

    public init(message: RetentionMessage? = nil, alternateProduct: AlternateProduct? = nil, promotionalOffer: RetentionPromotionalOffer? = nil) {
        self.message = message
        self.alternateProduct = alternateProduct
        self.promotionalOffer = promotionalOffer
    }

    /// How many of the mutually exclusive answers the body holds (1 when valid).
    public var answerCount: Int { [message != nil, alternateProduct != nil, promotionalOffer != nil].filter { $0 }.count }
}

/// A text message (with an optional image and bullet points) uploaded in advance.
public struct RetentionMessage: Codable, Sendable, Hashable {
    public var messageIdentifier: String

    public init(messageIdentifier: String) { self.messageIdentifier = messageIdentifier }
}

/// A switch-plan message: another product of the same subscription group (and, API 1.5, its billing plan).
public struct AlternateProduct: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public var productId: String
    public var billingPlanType: BillingPlanType?

    public init(messageIdentifier: String, productId: String, billingPlanType: BillingPlanType? = nil) {
        self.messageIdentifier = messageIdentifier
        self.productId = productId
        self.billingPlanType = billingPlanType
    }
}

/// A promotional-offer message: the offer signed by the developer, as a V2 JWS or a V1 signature (one of them).
public struct RetentionPromotionalOffer: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public var promotionalOfferSignatureV2: String?
    public var promotionalOfferSignatureV1: PromotionalOfferSignatureV1?

    public init(
        messageIdentifier: String,
        promotionalOfferSignatureV2: String? = nil,
        promotionalOfferSignatureV1: PromotionalOfferSignatureV1? = nil
    ) {
        self.messageIdentifier = messageIdentifier
        self.promotionalOfferSignatureV2 = promotionalOfferSignatureV2
        self.promotionalOfferSignatureV1 = promotionalOfferSignatureV1
    }
}

/// A V1 promotional-offer signature in a retention answer; UUIDs lowercased.
public struct PromotionalOfferSignatureV1: Codable, Sendable, Hashable {
    /// Base64 of the DER ECDSA P-256 SHA-256 signature.
    public var encodedSignature: String
    public var productId: String
    public var nonce: String
    /// UNIX milliseconds.
    public var timestamp: Int64
    public var keyId: String
    public var offerIdentifier: String
    public var appAccountToken: String?

    public init(
        encodedSignature: String,
        productId: String,
        nonce: String,
        timestamp: Int64,
        keyId: String,
        offerIdentifier: String,
        appAccountToken: String? = nil
    ) {
        self.encodedSignature = encodedSignature
        self.productId = productId
        self.nonce = nonce
        self.timestamp = timestamp
        self.keyId = keyId
        self.offerIdentifier = offerIdentifier
        self.appAccountToken = appAccountToken
    }
}

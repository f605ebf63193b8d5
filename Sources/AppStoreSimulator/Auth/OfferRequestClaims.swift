import Foundation

/// The claims of a promotional-offer V2 or introductory-offer-eligibility JWS that ``OfferSignatureChecker``
/// accepted.
public struct OfferRequestClaims: Sendable, Hashable {
    /// The In-App Purchase key that signed (header `kid`).
    public var keyId: String
    public var issuerId: String
    public var bundleId: String
    /// `promotional-offer` or `introductory-offer-eligibility`.
    public var audience: String
    public var issuedAt: Date
    /// The redeemed nonce, lowercased.
    public var nonce: String
    public var productId: String
    /// Promotional offer V2 only.
    public var offerIdentifier: String?
    /// Optional for promotional offers, always present for introductory-offer eligibility.
    public var transactionId: String?
    /// Introductory-offer eligibility only: whether the developer lets the customer have the introductory offer.
    public var allowIntroductoryOffer: Bool?

    public init(
        keyId: String,
        issuerId: String,
        bundleId: String,
        audience: String,
        issuedAt: Date,
        nonce: String,
        productId: String,
        offerIdentifier: String? = nil,
        transactionId: String? = nil,
        allowIntroductoryOffer: Bool? = nil
    ) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.audience = audience
        self.issuedAt = issuedAt
        self.nonce = nonce
        self.productId = productId
        self.offerIdentifier = offerIdentifier
        self.transactionId = transactionId
        self.allowIntroductoryOffer = allowIntroductoryOffer
    }
}

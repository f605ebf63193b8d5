import Crypto
import Foundation

/// Creates the JWS an app passes to StoreKit to sign App Store requests (WWDC25; protocol reference §8):
/// promotional offers V2 and introductory-offer eligibility.
///
/// Header `{alg: ES256, kid, typ: JWT}`; claims `iss`, `iat` (seconds), `bid`, `aud`, `nonce` (a new
/// lowercase UUID) plus the request's own claims, with no `exp`; signed by the In-App Purchase key with the
/// JWS (raw `R‖S`) ECDSA P-256 / SHA-256 signature, all parts base64url without padding.
public struct AppStoreRequestSigner: Sendable {
    /// `aud` of a promotional offer V2 signature.
    public static let promotionalOfferAudience = "promotional-offer"
    /// `aud` of an introductory-offer eligibility signature.
    public static let introductoryOfferEligibilityAudience = "introductory-offer-eligibility"

    public let keyIdentifier: String
    public let issuerId: String
    public let bundleId: String
    // Crypto's key types are not Sendable, so the signer keeps the key's raw scalar and rebuilds it per use.
    private let privateKey: P256.Signing.PrivateKey

    public init(privateKey: P256.Signing.PrivateKey, keyIdentifier: String, issuerId: String, bundleId: String) {
        self.privateKey = privateKey
        self.keyIdentifier = keyIdentifier
        self.issuerId = issuerId
        self.bundleId = bundleId
    }

    /// Creates a signer from the PEM text of an In-App Purchase key (`SubscriptionKey_XXXXXXXXXX.p8`).
    public init(p8PEM: String, keyIdentifier: String, issuerId: String, bundleId: String) throws {
        self.init(
            privateKey: try P256.Signing.PrivateKey(pemRepresentation: p8PEM),
            keyIdentifier: keyIdentifier,
            issuerId: issuerId,
            bundleId: bundleId
        )
    }

    /// The public key to check this signer's signatures with.
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    /// Signs a promotional offer V2 purchase option.
    ///
    /// - Parameter transactionId: optional; any transaction identifier of the customer (an app transaction
    ///   identifier is allowed).
    public func promotionalOfferV2(
        productId: String,
        offerIdentifier: String,
        transactionId: String? = nil,
        nonce: UUID = UUID(),
        issuedAt: Date = Date()
    ) throws -> String {
        try sign(
            Claims(
                audience: Self.promotionalOfferAudience,
                productId: productId,
                offerIdentifier: offerIdentifier,
                transactionId: transactionId
            ),
            nonce: nonce,
            issuedAt: issuedAt
        )
    }

    /// Signs an introductory-offer eligibility override for a customer.
    public func introductoryOfferEligibility(
        productId: String,
        allowIntroductoryOffer: Bool,
        transactionId: String,
        nonce: UUID = UUID(),
        issuedAt: Date = Date()
    ) throws -> String {
        try sign(
            Claims(
                audience: Self.introductoryOfferEligibilityAudience,
                productId: productId,
                allowIntroductoryOffer: allowIntroductoryOffer,
                transactionId: transactionId
            ),
            nonce: nonce,
            issuedAt: issuedAt
        )
    }

    private func sign(_ requestClaims: Claims, nonce: UUID, issuedAt: Date) throws -> String {
        var claims = requestClaims
        claims.issuer = issuerId
        claims.issuedAt = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        claims.bundleId = bundleId
        claims.nonce = nonce.uuidString.lowercased()

        return try SignedToken.sign(header: SignedToken.Header(alg: "ES256", kid: keyIdentifier, typ: "JWT"), claims: claims, with: privateKey)
    }

    /// The JWT claims; `nil` members are left out of the JSON.
    private struct Claims: Encodable {
        var issuer: String?
        var issuedAt: Int64?
        var bundleId: String?
        var audience: String
        var nonce: String?
        var productId: String
        var offerIdentifier: String?
        var allowIntroductoryOffer: Bool?
        var transactionId: String?

        init(
            audience: String,
            productId: String,
            offerIdentifier: String? = nil,
            allowIntroductoryOffer: Bool? = nil,
            transactionId: String? = nil
        ) {
            self.audience = audience
            self.productId = productId
            self.offerIdentifier = offerIdentifier
            self.allowIntroductoryOffer = allowIntroductoryOffer
            self.transactionId = transactionId
        }

        enum CodingKeys: String, CodingKey {
            case issuer = "iss"
            case issuedAt = "iat"
            case bundleId = "bid"
            case audience = "aud"
            case nonce, productId, offerIdentifier, allowIntroductoryOffer, transactionId
        }
    }
}

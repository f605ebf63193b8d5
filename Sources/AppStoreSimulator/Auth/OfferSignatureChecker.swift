import AppStoreWire
import Crypto
import Foundation
import Synchronization

/// What the App Store checks when a purchase carries a developer-signed offer (protocol reference §8):
/// promotional offer signatures v1 (`SKPaymentDiscount`) and V2 JWS, and introductory-offer-eligibility JWS.
///
/// A signature passes when its key id is configured, it verifies, it is bound to this app, product and offer,
/// it is at most 24 hours old, and its nonce has not been redeemed before. A nonce is redeemed only when every
/// other check passed, so a refused attempt does not burn it. Time comes from the caller (`now`).
public final class OfferSignatureChecker: Sendable {
    /// How long a signature stays usable after it was made.
    public static let validityPeriod = PromotionalOfferV1Signature.validityPeriod

    /// The In-App Purchase public keys, by key id.
    public let publicKeys: [String: P256.Signing.PublicKey]
    /// The App Store Connect issuer id a JWS must carry in `iss` (v1 signatures carry none).
    public let issuerId: String
    /// How far a signature's time may lie ahead of `now`, for developer servers whose clocks run a little fast.
    public let allowedClockSkew: TimeInterval
    // Shared by all three kinds of signature: each nonce is a fresh UUID, so one space of them is enough.
    private let usedNonces: Mutex<NonceLedger>

    /// - Parameter nonceCapacity: how many redeemed nonces to remember at most; a nonce is forgotten earlier once
    ///   its signature is stale.
    public init(
        publicKeys: [String: P256.Signing.PublicKey],
        issuerId: String,
        allowedClockSkew: TimeInterval = 60,
        nonceCapacity: Int = 100_000
    ) {
        self.publicKeys = publicKeys
        self.issuerId = issuerId
        self.allowedClockSkew = allowedClockSkew
        self.usedNonces = Mutex(NonceLedger(capacity: nonceCapacity))
    }

    /// How many redeemed nonces are remembered now.
    public var rememberedNonceCount: Int { usedNonces.withLock { $0.count } }

    // MARK: Promotional offer v1

    /// Checks a v1 promotional offer signature for a purchase of `productId` with `offerId` by the app
    /// `bundleId`, and redeems its nonce.
    ///
    /// - Parameter appAccountToken: the purchase's app account token (`applicationUsername`), or `""`.
    public func checkPromotionalOfferV1(
        _ signature: PromotionalOfferV1Signature,
        bundleId: String,
        productId: String,
        offerId: String,
        appAccountToken: String = "",
        now: Date
    ) throws(OfferSignatureFailure) {
        guard !signature.keyIdentifier.isEmpty else { throw .missingKeyId }
        guard let key = publicKeys[signature.keyIdentifier] else { throw .unknownKey(signature.keyIdentifier) }
        // Told apart from a bad signature so a developer sees an encoding mistake as one.
        guard let der = Data(base64Encoded: signature.signature),
            (try? P256.Signing.ECDSASignature(derRepresentation: der)) != nil
        else { throw .malformed("signature is not a base64 DER ECDSA signature") }
        guard
            signature.isValid(
                publicKey: key,
                bundleId: bundleId,
                productId: productId,
                offerId: offerId,
                appAccountToken: appAccountToken
            )
        else { throw .invalidSignature }
        let signedAt = Date(timeIntervalSince1970: Double(signature.timestamp) / 1000)
        try redeem(nonce: signature.nonce.uuidString.lowercased(), signedAt: signedAt, now: now)
    }

    /// Checks a v1 promotional offer from the fields as the client sent them (`nonce` as text), and redeems its
    /// nonce.
    public func checkPromotionalOfferV1(
        keyIdentifier: String,
        nonce: String,
        timestamp: Int64,
        signature: String,
        bundleId: String,
        productId: String,
        offerId: String,
        appAccountToken: String = "",
        now: Date
    ) throws(OfferSignatureFailure) {
        guard let uuid = UUID(uuidString: nonce) else { throw .malformed("nonce \(nonce) is not a UUID") }
        try checkPromotionalOfferV1(
            PromotionalOfferV1Signature(
                keyIdentifier: keyIdentifier,
                nonce: uuid,
                timestamp: timestamp,
                signature: signature
            ),
            bundleId: bundleId,
            productId: productId,
            offerId: offerId,
            appAccountToken: appAccountToken,
            now: now
        )
    }

    // MARK: JWS (WWDC25)

    /// Checks a promotional offer V2 JWS (`aud: promotional-offer`) for a purchase of `productId` with
    /// `offerIdentifier` by the app `bundleId`, and redeems its nonce.
    ///
    /// - Parameter customerTransactionIds: every transaction id of the purchasing customer (app transaction id
    ///   included); an optional `transactionId` claim must be one of them.
    @discardableResult
    public func checkPromotionalOfferV2(
        _ jws: String,
        bundleId: String,
        productId: String,
        offerIdentifier: String,
        customerTransactionIds: Set<String>,
        now: Date
    ) throws(OfferSignatureFailure) -> OfferRequestClaims {
        let claims = try verifiedClaims(
            jws,
            audience: AppStoreRequestSigner.promotionalOfferAudience,
            bundleId: bundleId,
            productId: productId
        )
        guard let offer = claims.offerIdentifier else { throw .missingClaim("offerIdentifier") }
        guard offer == offerIdentifier else { throw .wrongOffer(offer) }
        if let transactionId = claims.transactionId, !customerTransactionIds.contains(transactionId) {
            throw .transactionNotOwned(transactionId)
        }
        try redeem(nonce: claims.nonce, signedAt: claims.issuedAt, now: now)
        return claims
    }

    /// Checks an introductory-offer-eligibility JWS (`aud: introductory-offer-eligibility`) for a purchase of
    /// `productId` by the app `bundleId`, and redeems its nonce; the answer's
    /// ``OfferRequestClaims/allowIntroductoryOffer`` says whether the customer may have the introductory offer.
    ///
    /// - Parameter customerTransactionIds: every transaction id of the purchasing customer; the required
    ///   `transactionId` claim must be one of them.
    @discardableResult
    public func checkIntroductoryOfferEligibility(
        _ jws: String,
        bundleId: String,
        productId: String,
        customerTransactionIds: Set<String>,
        now: Date
    ) throws(OfferSignatureFailure) -> OfferRequestClaims {
        let claims = try verifiedClaims(
            jws,
            audience: AppStoreRequestSigner.introductoryOfferEligibilityAudience,
            bundleId: bundleId,
            productId: productId
        )
        guard claims.allowIntroductoryOffer != nil else { throw .missingClaim("allowIntroductoryOffer") }
        guard let transactionId = claims.transactionId else { throw .missingClaim("transactionId") }
        guard customerTransactionIds.contains(transactionId) else { throw .transactionNotOwned(transactionId) }
        try redeem(nonce: claims.nonce, signedAt: claims.issuedAt, now: now)
        return claims
    }

    // MARK: Shared steps

    /// Parses `jws`, verifies its signature, then the claims every signed App Store request shares.
    private func verifiedClaims(
        _ jws: String,
        audience: String,
        bundleId: String,
        productId: String
    ) throws(OfferSignatureFailure) -> OfferRequestClaims {
        let token: ES256CompactJWS
        do throws(ES256CompactJWS.Problem) {
            token = try ES256CompactJWS(jws)
        } catch {
            throw Self.failure(error)
        }
        // Apple's header has typ JWT; an absent typ is tolerated (RFC 7515 makes it optional).
        if let typ = token.header.typ, typ != "JWT" { throw .wrongType(typ) }
        guard let key = publicKeys[token.keyId] else { throw .unknownKey(token.keyId) }
        // Nothing in the claims is believed before the signature is.
        guard token.isSigned(by: key) else { throw .invalidSignature }
        let claims: Claims
        do throws(ES256CompactJWS.Problem) {
            claims = try token.decodeClaims(Claims.self)
        } catch {
            throw Self.failure(error)
        }
        guard let aud = claims.aud else { throw .missingClaim("aud") }
        guard aud == audience else { throw .wrongAudience(aud) }
        guard let iss = claims.iss else { throw .missingClaim("iss") }
        guard iss == issuerId else { throw .wrongIssuer(iss) }
        guard let bid = claims.bid else { throw .missingClaim("bid") }
        guard bid == bundleId else { throw .wrongBundleId(bid) }
        guard let product = claims.productId else { throw .missingClaim("productId") }
        guard product == productId else { throw .wrongProduct(product) }
        guard let iat = claims.iat else { throw .missingClaim("iat") }
        guard let rawNonce = claims.nonce else { throw .missingClaim("nonce") }
        // The reference specifies a fresh UUID; requiring one also gives every nonce a single spelling.
        guard let nonce = UUID(uuidString: rawNonce) else { throw .malformed("nonce \(rawNonce) is not a UUID") }
        return OfferRequestClaims(
            keyId: token.keyId,
            issuerId: iss,
            bundleId: bid,
            audience: aud,
            issuedAt: Date(timeIntervalSince1970: iat),
            nonce: nonce.uuidString.lowercased(),
            productId: product,
            offerIdentifier: claims.offerIdentifier,
            transactionId: claims.transactionId,
            allowIntroductoryOffer: claims.allowIntroductoryOffer
        )
    }

    private static func failure(_ problem: ES256CompactJWS.Problem) -> OfferSignatureFailure {
        switch problem {
        case .malformed(let reason): .malformed(reason)
        case .unsupportedAlgorithm(let alg): .unsupportedAlgorithm(alg)
        case .missingKeyId: .missingKeyId
        }
    }

    /// The freshness window, then single use; the last step, so only a signature that passed everything else
    /// burns its nonce.
    private func redeem(nonce: String, signedAt: Date, now: Date) throws(OfferSignatureFailure) {
        let age = now.timeIntervalSince(signedAt)
        guard age >= -allowedClockSkew else { throw .signedInFuture(signedAt: signedAt) }
        guard age <= Self.validityPeriod else { throw .stale(signedAt: signedAt) }
        let usableUntil = signedAt.addingTimeInterval(Self.validityPeriod)
        let fresh = usedNonces.withLock { $0.redeem(nonce, usableUntil: usableUntil, now: now) }
        guard fresh else { throw .nonceReused(nonce) }
    }

    // Every claim optional so a missing one is reported by name.
    private struct Claims: Decodable {
        var iss: String?
        var iat: Double?
        var bid: String?
        var aud: String?
        var nonce: String?
        var productId: String?
        var offerIdentifier: String?
        var transactionId: String?
        var allowIntroductoryOffer: Bool?
    }
}

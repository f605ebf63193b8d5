import Foundation

/// Why ``OfferSignatureChecker`` refused a promotional-offer or introductory-offer-eligibility signature; the
/// purchase fails as it would on a device with an invalid offer signature.
public enum OfferSignatureFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The signature, nonce or JWS is not well formed (bad base64, DER, JSON, or a nonce that is not a UUID).
    case malformed(String)
    /// The JWS header `alg` is not `ES256`.
    case unsupportedAlgorithm(String)
    /// The JWS header `typ` is present and not `JWT`.
    case wrongType(String)
    /// The JWS header has no `kid`.
    case missingKeyId
    /// The key identifier names no configured In-App Purchase key.
    case unknownKey(String)
    /// The signature does not verify with that key; for v1 this also covers a signature made for another
    /// bundle, product, offer or app account token, since those are part of the signed message.
    case invalidSignature
    /// A required JWS claim is absent.
    case missingClaim(String)
    /// `aud` is not the one for this kind of request.
    case wrongAudience(String)
    /// `iss` is not the configured issuer id.
    case wrongIssuer(String)
    /// `bid` is not the purchasing app's bundle id.
    case wrongBundleId(String)
    /// `productId` is not the product being bought.
    case wrongProduct(String)
    /// `offerIdentifier` is not the offer being redeemed.
    case wrongOffer(String)
    /// `transactionId` is not one of the customer's transaction ids.
    case transactionNotOwned(String)
    /// The signature is more than 24 hours old.
    case stale(signedAt: Date)
    /// The signature's time lies ahead of now by more than the allowed clock skew.
    case signedInFuture(signedAt: Date)
    /// The nonce was already redeemed by an earlier purchase.
    case nonceReused(String)

    public var description: String {
        switch self {
        case .malformed(let reason): "malformed offer signature: \(reason)"
        case .unsupportedAlgorithm(let alg): "alg \(alg) is not ES256"
        case .wrongType(let typ): "typ \(typ) is not JWT"
        case .missingKeyId: "signature names no key id"
        case .unknownKey(let kid): "key id \(kid) is not a known In-App Purchase key"
        case .invalidSignature: "signature does not verify"
        case .missingClaim(let name): "claim \(name) is missing"
        case .wrongAudience(let aud): "aud \(aud) does not match the request"
        case .wrongIssuer(let iss): "iss \(iss) is not the configured issuer"
        case .wrongBundleId(let bid): "bid \(bid) is not the app's bundle id"
        case .wrongProduct(let id): "signed for product \(id), not the one being bought"
        case .wrongOffer(let id): "signed for offer \(id), not the one being redeemed"
        case .transactionNotOwned(let id): "transaction \(id) does not belong to the customer"
        case .stale(let date): "signed at \(date), more than 24 hours ago"
        case .signedInFuture(let date): "signed at \(date), which is in the future"
        case .nonceReused(let nonce): "nonce \(nonce) was already used"
        }
    }
}

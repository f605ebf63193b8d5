import Foundation

/// Why ``ServerAPITokenVerifier`` refused an App Store Server API bearer token; the HTTP layer answers 401.
public enum ServerAPITokenFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request has no `Authorization` header.
    case missingAuthorization
    /// The `Authorization` header is not `Bearer <token>`.
    case notBearer
    /// The token is not a well-formed compact JWS with JSON header and claims.
    case malformed(String)
    /// The header `alg` is not `ES256` (for example `none` or `HS256`).
    case unsupportedAlgorithm(String)
    /// The header `typ` is not `JWT` (`nil` when absent).
    case wrongType(String?)
    /// The header has no `kid`.
    case missingKeyId
    /// The `kid` names no configured In-App Purchase key.
    case unknownKey(String)
    /// The signature does not verify with the key `kid` names.
    case invalidSignature
    /// A required claim is absent.
    case missingClaim(String)
    /// `aud` is not `appstoreconnect-v1`.
    case wrongAudience(String)
    /// `iss` is not the configured issuer id.
    case wrongIssuer(String)
    /// `bid` is not the configured bundle id.
    case wrongBundleId(String)
    /// `exp - iat` is not in `0 < lifetime ≤ 3600` seconds.
    case invalidLifetime(seconds: TimeInterval)
    /// `iat` is later than now plus the allowed clock skew.
    case issuedInFuture(issuedAt: Date)
    /// `exp` is not after now.
    case expired(expiresAt: Date)
    /// The token has no `iat` and its `exp` lies more than 60 minutes (plus the allowed skew) ahead of now.
    case expiresTooFarAhead(expiresAt: Date)

    public var description: String {
        switch self {
        case .missingAuthorization: "no Authorization header"
        case .notBearer: "Authorization header is not a Bearer token"
        case .malformed(let reason): "malformed token: \(reason)"
        case .unsupportedAlgorithm(let alg): "alg \(alg) is not ES256"
        case .wrongType(let typ): "typ \(typ ?? "(absent)") is not JWT"
        case .missingKeyId: "token header has no kid"
        case .unknownKey(let kid): "kid \(kid) is not a known In-App Purchase key"
        case .invalidSignature: "signature does not verify"
        case .missingClaim(let name): "claim \(name) is missing"
        case .wrongAudience(let aud): "aud \(aud) is not appstoreconnect-v1"
        case .wrongIssuer(let iss): "iss \(iss) is not the configured issuer"
        case .wrongBundleId(let bid): "bid \(bid) is not the configured bundle id"
        case .invalidLifetime(let seconds): "token lifetime \(seconds)s is outside (0, 3600]"
        case .issuedInFuture(let date): "iat \(date) is in the future"
        case .expired(let date): "token expired at \(date)"
        case .expiresTooFarAhead(let date): "token without iat expires at \(date), more than 3600s from now"
        }
    }
}

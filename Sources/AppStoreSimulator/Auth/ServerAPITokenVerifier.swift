import AppStoreWire
import Crypto
import Foundation

/// Checks the `Authorization: Bearer <JWT>` of an App Store Server API request the way Apple does
/// (protocol reference §5): ES256 compact JWS with `kid` naming a configured In-App Purchase key and `typ: JWT`,
/// claims `iss`, `aud: appstoreconnect-v1`, `bid`, `iat` not in the future, `exp` later than now and at most
/// 60 minutes after `iat`. Apple also accepts tokens without `iat` (its own Python library sends none); such a
/// token's `exp` must then lie at most 60 minutes ahead of now.
///
/// Time comes from the caller (`now`), so the simulator's virtual clock decides expiry.
public struct ServerAPITokenVerifier: Sendable {
    /// The only `aud` Apple accepts.
    public static let audience = AppStoreAPITokenGenerator.audience
    /// Apple's ceiling on `exp - iat`.
    public static let maximumLifetime = TimeInterval(AppStoreAPITokenGenerator.maximumLifetimeSeconds)
    /// The App Store Connect API's ceiling.
    public static let appStoreConnectMaximumLifetime = TimeInterval(AppStoreConnectTokenGenerator.maximumLifetimeSeconds)

    /// The In-App Purchase public keys, by key id (`kid`).
    public var publicKeys: [String: P256.Signing.PublicKey]
    /// The App Store Connect issuer id every token must carry in `iss`.
    public var issuerId: String
    /// The bundle id every token must carry in `bid`; nil for the App Store Connect API, whose team-key tokens carry
    /// none (and live at most 20 minutes).
    public var bundleId: String?
    /// How far `iat` may lie ahead of `now`, for clients whose clocks run a little fast.
    public var allowedClockSkew: TimeInterval

    public init(
        publicKeys: [String: P256.Signing.PublicKey],
        issuerId: String,
        bundleId: String?,
        allowedClockSkew: TimeInterval = 60
    ) {
        self.publicKeys = publicKeys
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.allowedClockSkew = allowedClockSkew
    }

    /// Verifies the value of an `Authorization` header (`nil` when the request had none).
    @discardableResult
    public func verify(authorization: String?, now: Date) throws(ServerAPITokenFailure) -> ServerAPITokenClaims {
        guard let authorization else { throw .missingAuthorization }
        let trimmed = authorization.trimmingCharacters(in: .whitespaces)
        // RFC 7235: the scheme name is case-insensitive; the token follows one or more spaces.
        guard let space = trimmed.firstIndex(of: " "),
            trimmed[..<space].lowercased() == "bearer"
        else { throw .notBearer }
        let token = trimmed[space...].drop(while: { $0 == " " })
        guard !token.isEmpty else { throw .notBearer }
        return try verify(token: String(token), now: now)
    }

    /// Verifies a bare compact JWS token.
    @discardableResult
    public func verify(token: String, now: Date) throws(ServerAPITokenFailure) -> ServerAPITokenClaims {
        let jws: ES256CompactJWS
        do throws(ES256CompactJWS.Problem) {
            jws = try ES256CompactJWS(token)
        } catch {
            switch error {
            case .malformed(let reason): throw .malformed(reason)
            case .unsupportedAlgorithm(let alg): throw .unsupportedAlgorithm(alg)
            case .missingKeyId: throw .missingKeyId
            }
        }
        guard jws.header.typ == "JWT" else { throw .wrongType(jws.header.typ) }
        guard let key = publicKeys[jws.keyId] else { throw .unknownKey(jws.keyId) }
        // Nothing in the claims is believed before the signature is.
        guard jws.isSigned(by: key) else { throw .invalidSignature }

        let claims: Claims
        do throws(ES256CompactJWS.Problem) {
            claims = try jws.decodeClaims(Claims.self)
        } catch {
            guard case .malformed(let reason) = error else { throw .malformed("JWS payload is unreadable") }
            throw .malformed(reason)
        }
        guard let aud = claims.aud else { throw .missingClaim("aud") }
        guard aud == Self.audience else { throw .wrongAudience(aud) }
        guard let iss = claims.iss else { throw .missingClaim("iss") }
        guard iss == issuerId else { throw .wrongIssuer(iss) }
        let bid: String
        if let bundleId {
            guard let claimed = claims.bid else { throw .missingClaim("bid") }
            guard claimed == bundleId else { throw .wrongBundleId(claimed) }
            bid = claimed
        } else {
            // A team key's token names no app.
            if let claimed = claims.bid { throw .wrongBundleId(claimed) }
            bid = ""
        }
        let maximumLifetime = bundleId == nil ? Self.appStoreConnectMaximumLifetime : Self.maximumLifetime
        guard let exp = claims.exp else { throw .missingClaim("exp") }
        let expiresAt = Date(timeIntervalSince1970: exp)

        guard let iat = claims.iat else {
            // Without iat the lifetime cannot be measured, so the remaining validity is held to Apple's ceiling
            // instead (skew allowed, as for iat): a token good for a day is refused whenever it is presented.
            guard expiresAt > now else { throw .expired(expiresAt: expiresAt) }
            guard expiresAt.timeIntervalSince(now) <= maximumLifetime + allowedClockSkew else {
                throw .expiresTooFarAhead(expiresAt: expiresAt)
            }
            return ServerAPITokenClaims(keyId: jws.keyId, issuerId: iss, bundleId: bid, issuedAt: nil, expiresAt: expiresAt)
        }
        // Lifetime first: a token minted for two hours is wrong whenever it is presented, and saying so helps
        // more than "expired" would.
        let lifetime = exp - iat
        guard lifetime > 0, lifetime <= maximumLifetime else { throw .invalidLifetime(seconds: lifetime) }
        let issuedAt = Date(timeIntervalSince1970: iat)
        guard issuedAt.timeIntervalSince(now) <= allowedClockSkew else { throw .issuedInFuture(issuedAt: issuedAt) }
        guard expiresAt > now else { throw .expired(expiresAt: expiresAt) }
        return ServerAPITokenClaims(
            keyId: jws.keyId,
            issuerId: iss,
            bundleId: bid,
            issuedAt: issuedAt,
            expiresAt: expiresAt
        )
    }

    // Every claim optional so a missing one is reported by name; NumericDate may be fractional (RFC 7519 §2).
    private struct Claims: Decodable {
        var iss: String?
        var aud: String?
        var bid: String?
        var iat: Double?
        var exp: Double?
    }
}

import Foundation
import SwiftASN1
import WebTokens
import X509
import _CryptoExtras

/// Verifies the OIDC token Pub/Sub signs for each push (`Authorization: Bearer …`): RS256 under one of Google's
/// published keys, Google as issuer, the configured audience, and the push subscription's service account with a
/// verified e-mail. Keys are cached for as long as Google's `Cache-Control` says (bounded) and fetched again when a
/// token names a key not seen yet — at most once a minute, so forged `kid`s cannot make it hammer Google.
public actor PushTokenVerifier {
    /// Google's certificates for ID tokens (a JSON map from `kid` to a PEM certificate); the JWKS form
    /// (`…/oauth2/v3/certs`) is read too.
    public static let googleCertsURL = "https://www.googleapis.com/oauth2/v1/certs"
    public static let issuers: Set<String> = ["https://accounts.google.com", "accounts.google.com"]

    /// What a verified token said.
    public struct Claims: Decodable, Sendable, Hashable {
        public var iss: String?
        public var aud: String?
        public var email: String?
        public var emailVerified: Bool?
        public var sub: String?
        public var iat: Int64?
        public var exp: Int64?

        enum CodingKeys: String, CodingKey {
            case iss, aud, email, sub, iat, exp
            case emailVerified = "email_verified"
        }
    }

    public let audience: String
    public let serviceAccountEmail: String
    public let certsURL: String
    /// Allowed clock difference with Google.
    public let skew: TimeInterval
    private let transport: any PlayHTTPTransport
    private let clock: @Sendable () -> Date
    private var keys: [String: _RSA.Signing.PublicKey] = [:]
    private var keysExpire = Date.distantPast
    private var lastFetch = Date.distantPast

    public init(
        audience: String,
        serviceAccountEmail: String,
        certsURL: String = PushTokenVerifier.googleCertsURL,
        skew: TimeInterval = 60,
        transport: any PlayHTTPTransport,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.audience = audience
        self.serviceAccountEmail = serviceAccountEmail
        self.certsURL = certsURL
        self.skew = skew
        self.transport = transport
        self.clock = clock
    }

    /// The token's claims, or ``PlayAuthError/pushTokenRefused(_:)`` saying why not;
    /// ``PlayAuthError/keysUnavailable(_:)`` when Google's keys could not be had (nothing decided: answer 5xx).
    public func verify(authorization: String?) async throws -> Claims {
        guard let authorization, authorization.hasPrefix("Bearer "), authorization.utf8.count > 7 else {
            throw PlayAuthError.pushTokenRefused("no Bearer token")
        }
        let token: SignedToken
        do {
            token = try SignedToken(String(authorization.dropFirst(7)), maximumLength: 8192)
        } catch {
            throw PlayAuthError.pushTokenRefused(error.description)
        }
        guard token.header.alg == "RS256" else { throw PlayAuthError.pushTokenRefused("alg \(token.header.alg.prefix(20)) is not RS256") }
        guard let kid = token.header.kid, !kid.isEmpty, kid.utf8.count <= 200 else { throw PlayAuthError.pushTokenRefused("no kid") }
        guard let key = try await key(kid) else { throw PlayAuthError.pushTokenRefused("kid \(kid) is not one of Google's keys") }
        guard token.isSigned(by: key) else { throw PlayAuthError.pushTokenRefused("signature does not verify") }
        let claims: Claims
        do {
            claims = try token.claims(Claims.self)
        } catch {
            throw PlayAuthError.pushTokenRefused(error.description)
        }
        let now = clock().timeIntervalSince1970
        guard let iss = claims.iss, Self.issuers.contains(iss) else { throw PlayAuthError.pushTokenRefused("issuer is not Google") }
        guard claims.aud == audience else { throw PlayAuthError.pushTokenRefused("audience is not \(audience)") }
        guard let exp = claims.exp, let iat = claims.iat else { throw PlayAuthError.pushTokenRefused("no exp or iat") }
        guard TimeInterval(exp) > now - skew else { throw PlayAuthError.pushTokenRefused("expired") }
        guard TimeInterval(iat) <= now + skew, exp > iat, exp - iat <= 86_400 else {
            throw PlayAuthError.pushTokenRefused("issued in the future or valid for too long")
        }
        // Byte for byte: an e-mail that differs only in case or Unicode form is another account.
        guard let email = claims.email, Array(email.utf8) == Array(serviceAccountEmail.utf8) else {
            throw PlayAuthError.pushTokenRefused("not signed for the push service account")
        }
        guard claims.emailVerified == true else { throw PlayAuthError.pushTokenRefused("email_verified is not true") }
        return claims
    }

    private func key(_ kid: String) async throws -> _RSA.Signing.PublicKey? {
        let now = clock()
        if now < keysExpire, let key = keys[kid] { return key }
        // A kid not seen yet may be a rotation: fetch again, but not more than once a minute.
        if now < keysExpire, now.timeIntervalSince(lastFetch) < 60 { return nil }
        try await fetch(now: now)
        return keys[kid]
    }

    private func fetch(now: Date) async throws {
        lastFetch = now
        let response: PlayHTTPResponse
        do {
            response = try await transport.send(PlayHTTPRequest(method: "GET", url: certsURL, headers: [("Accept", "application/json")]))
        } catch {
            throw PlayAuthError.keysUnavailable("\(error)")
        }
        guard response.status == 200 else { throw PlayAuthError.keysUnavailable("\(certsURL) answered \(response.status)") }
        let parsed = try Self.parseKeys(response.body)
        guard !parsed.isEmpty else { throw PlayAuthError.keysUnavailable("\(certsURL) lists no RSA key") }
        keys = parsed
        keysExpire = now.addingTimeInterval(Self.maxAge(response.headers["cache-control"]))
    }

    /// `max-age` from `Cache-Control`, between 1 minute and 1 day; an hour when absent.
    static func maxAge(_ cacheControl: String?) -> TimeInterval {
        guard let cacheControl else { return 3600 }
        for part in cacheControl.split(separator: ",") {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("max-age="), let seconds = Int(trimmed.dropFirst(8)) { return TimeInterval(min(max(seconds, 60), 86_400)) }
        }
        return 3600
    }

    /// Reads either format Google publishes: `{kid: PEM certificate}` or a JWKS `{"keys": [{kid, n, e, …}]}`.
    static func parseKeys(_ body: [UInt8]) throws -> [String: _RSA.Signing.PublicKey] {
        struct JWKS: Decodable {
            struct Key: Decodable {
                var kid: String?
                var kty: String?
                var n: String?
                var e: String?
            }
            var keys: [Key]
        }
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        if let jwks = try? JSONDecoder().decode(JWKS.self, from: Data(body)) {
            for key in jwks.keys where key.kty == "RSA" {
                guard let kid = key.kid, let n = key.n.flatMap(Base64URL.decode), let e = key.e.flatMap(Base64URL.decode),
                    let publicKey = try? _RSA.Signing.PublicKey(n: n, e: e)
                else { continue }
                keys[kid] = publicKey
            }
            return keys
        }
        guard let map = try? JSONDecoder().decode([String: String].self, from: Data(body)) else {
            throw PlayAuthError.keysUnavailable("the certificate list is neither a PEM map nor a JWKS")
        }
        for (kid, pem) in map {
            guard let certificate = try? Certificate(pemEncoded: pem), let key = _RSA.Signing.PublicKey(certificate.publicKey) else { continue }
            keys[kid] = key
        }
        return keys
    }
}

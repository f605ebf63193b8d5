import AppStoreWire
import Crypto
import Foundation

/// Verifies the user tokens an app's own backend issues: compact JWS, HS256 or ES256, with `sub`, `exp` and the
/// configured `iss` / `aud`. The algorithm comes from the configured keys, never from the token alone.
public struct UserTokenVerifier: Sendable {
    public struct Claims: Sendable, Decodable {
        public var sub: String?
        public var exp: Double?
        public var nbf: Double?
        public var iss: String?
        public var aud: Audience?
    }

    /// `aud` is a string or an array of strings.
    public enum Audience: Sendable, Decodable {
        case one(String)
        case many([String])

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let single = try? container.decode(String.self) {
                self = .one(single)
            } else {
                self = .many(try container.decode([String].self))
            }
        }

        func contains(_ value: String) -> Bool {
            switch self {
            case .one(let single): single == value
            case .many(let values): values.contains(value)
            }
        }
    }

    /// Why a token was refused (reported to the caller as `invalid_token` with this text).
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    let hs256Key: SymmetricKey?
    let es256Key: P256.Signing.PublicKey?
    let issuer: String?
    let audience: String?
    let leeway: TimeInterval

    public init(configuration: AuthConfiguration) throws {
        hs256Key = configuration.jwtHS256Secret.map { SymmetricKey(data: Data($0.utf8)) }
        es256Key = try configuration.jwtES256PublicKeyPEM.map { try P256.Signing.PublicKey(pemRepresentation: $0) }
        issuer = configuration.jwtIssuer
        audience = configuration.jwtAudience
        leeway = Double(configuration.leeway.components.seconds)
    }

    public var isEnabled: Bool { hs256Key != nil || es256Key != nil }

    /// The verified subject.
    public func verify(_ token: String, now: Date = Date()) throws(Failure) -> String {
        let jws: SignedToken
        do {
            jws = try SignedToken(token, maximumLength: 8192)
        } catch {
            throw Failure(error.description)
        }
        switch jws.header.alg {
        case "HS256":
            guard let hs256Key else { throw Failure("HS256 tokens are not accepted") }
            guard jws.isSigned(by: hs256Key) else { throw Failure("bad signature") }
        case "ES256":
            guard let es256Key else { throw Failure("ES256 tokens are not accepted") }
            guard jws.isSigned(by: es256Key) else { throw Failure("bad signature") }
        default:
            throw Failure("algorithm \(jws.header.alg) is not accepted")
        }
        guard let claims = try? jws.claims(Claims.self) else { throw Failure("unreadable claims") }
        let seconds = now.timeIntervalSince1970
        guard let exp = claims.exp else { throw Failure("exp is required") }
        guard seconds <= exp + leeway else { throw Failure("token expired") }
        if let nbf = claims.nbf, seconds + leeway < nbf { throw Failure("token not yet valid") }
        if let issuer, claims.iss != issuer { throw Failure("wrong issuer") }
        if let audience, claims.aud?.contains(audience) != true { throw Failure("wrong audience") }
        guard let sub = claims.sub, !sub.isEmpty else { throw Failure("sub is required") }
        return sub
    }

    /// Makes an HS256 token (tests, the demo and the benchmark play the app's backend).
    public static func hs256Token(
        subject: String,
        secret: String,
        issuer: String? = nil,
        audience: String? = nil,
        lifetime: TimeInterval = 3600,
        now: Date = Date()
    ) -> String {
        struct Made: Encodable {
            var sub: String
            var exp: Int
            var iss: String?
            var aud: String?
        }
        let claims = Made(sub: subject, exp: Int(now.timeIntervalSince1970 + lifetime), iss: issuer, aud: audience)
        // Encoding four plain members cannot fail.
        return try! SignedToken.sign(claims: claims, with: SymmetricKey(data: Data(secret.utf8)))
    }
}

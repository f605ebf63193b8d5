import Crypto
import Foundation
import _CryptoExtras

/// A small compact JWS or JWT (a bearer token, a signed offer or request, a user token, Google's OAuth assertions and
/// ID tokens): made here, and read here — split and decoded, but trusted only once `isSigned(by:)` says so. The one
/// implementation every signer and key-based verifier uses (App Store signed data, whose chains are large and
/// verified in bulk, has its zero-copy reader in `SignedDataVerifier`).
///
/// Reading is strict: exactly three segments, unpadded base64url (a second spelling of one token must not verify),
/// a JSON header with a string `alg`, and no `crit` (RFC 7515 §4.1.11: nothing here understands an extension).
public struct SignedToken: Sendable {
    /// The protected header's members that readers check.
    public struct Header: Codable, Sendable, Hashable {
        public var alg: String
        public var kid: String?
        public var typ: String?
        public var crit: [String]?

        public init(alg: String, kid: String? = nil, typ: String? = nil) {
            self.alg = alg
            self.kid = kid
            self.typ = typ
        }
    }

    /// What is wrong with a token's shape or claims, in one line.
    public struct Malformed: Error, Hashable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// Tokens are a few hundred bytes; the limit stops a hostile caller from making us decode megabytes.
    public static let maximumLength = 16_384

    public let header: Header
    public let payload: Data
    public let signature: Data
    /// `header.payload`, the bytes the signature covers.
    public let signingInput: Data

    /// Splits and decodes `token`; the signature segment may be empty (an `alg: none` token is refused by the
    /// signature check, after the caller has had the chance to name its algorithm).
    public init(_ token: String, maximumLength: Int = SignedToken.maximumLength) throws(Malformed) {
        guard token.utf8.count <= maximumLength else { throw Malformed("token is longer than \(maximumLength) bytes") }
        let parts = token.split(separator: ".", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw Malformed("not a compact JWS: expected three dot-separated segments") }
        guard !parts[0].isEmpty, !parts[1].isEmpty else { throw Malformed("not a compact JWS: empty header or payload segment") }
        let headerJSON = try Self.decode(parts[0], "header")
        do {
            header = try JSONDecoder().decode(Header.self, from: headerJSON)
        } catch {
            throw Malformed("JWS header is not a JSON object with a string alg")
        }
        if header.crit != nil { throw Malformed("JWS header lists critical extensions, none are supported") }
        payload = try Self.decode(parts[1], "payload")
        signature = parts[2].isEmpty ? Data() : try Self.decode(parts[2], "signature")
        signingInput = Data(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
    }

    /// Whether the token is ES256-signed by `key` (its signature the fixed 64-byte R‖S, never DER: RFC 7518 §3.4).
    public func isSigned(by key: P256.Signing.PublicKey) -> Bool {
        guard header.alg == "ES256", signature.count == 64, let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return key.isValidSignature(ecdsa, for: signingInput)
    }

    /// Whether the token is RS256-signed by `key` (RSASSA-PKCS1-v1_5 with SHA-256: Google's OAuth assertions and ID
    /// tokens).
    public func isSigned(by key: _RSA.Signing.PublicKey) -> Bool {
        guard header.alg == "RS256", !signature.isEmpty else { return false }
        return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: signingInput, padding: .insecurePKCS1v1_5)
    }

    /// Whether the token is HS256-signed with `key` (compared in constant time).
    public func isSigned(by key: SymmetricKey) -> Bool {
        header.alg == "HS256" && HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signingInput, using: key)
    }

    /// Decodes the claims; a missing claim decodes as `nil` (callers name it), a mistyped one is malformed.
    public func claims<Claims: Decodable>(_ type: Claims.Type, decoder: JSONDecoder = JSONDecoder()) throws(Malformed) -> Claims {
        do {
            return try decoder.decode(type, from: payload)
        } catch DecodingError.typeMismatch(_, let context) where !context.codingPath.isEmpty {
            throw Malformed("claim \(context.codingPath[0].stringValue) has the wrong type")
        } catch {
            throw Malformed("JWS payload is not a JSON object")
        }
    }

    private static func decode(_ segment: Substring, _ name: String) throws(Malformed) -> Data {
        // Bytes, not Foundation's string search: every request's user token passes here.
        guard !segment.utf8.contains(UInt8(ascii: "=")), let bytes = Base64URL.decode(segment.utf8) else {
            throw Malformed("JWS \(name) is not base64url")
        }
        return Data(bytes)
    }

    // MARK: Making tokens

    /// The encoder tokens are made with: sorted keys, slashes as they are.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// `header.claims.signature`, ES256, the header already in base64url (a signer of many tokens encodes it once)
    /// and the claims already JSON.
    public static func sign(encodedHeader: String, claims: some Collection<UInt8>, with key: P256.Signing.PrivateKey) throws -> String {
        let input = encodedHeader + "." + Base64URL.encode(claims)
        return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }

    /// A header in base64url, for ``sign(encodedHeader:claims:with:)``.
    public static func encode(header: some Encodable) throws -> String {
        Base64URL.encode(try encoder().encode(header))
    }

    /// `header.claims.signature`, ES256.
    public static func sign(
        header: some Encodable,
        claims: some Encodable,
        with key: P256.Signing.PrivateKey,
        encoder: JSONEncoder = SignedToken.encoder()
    ) throws -> String {
        try sign(encodedHeader: Base64URL.encode(try encoder.encode(header)), claims: try encoder.encode(claims), with: key)
    }

    /// `header.claims.signature`, RS256 (RSASSA-PKCS1-v1_5 with SHA-256), the header's `alg` set to RS256.
    public static func sign(
        header: Header,
        claims: some Encodable,
        with key: _RSA.Signing.PrivateKey,
        encoder: JSONEncoder = SignedToken.encoder()
    ) throws -> String {
        var header = header
        header.alg = "RS256"
        let input = Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// `header.claims.signature`, HS256 (header `{"alg":"HS256","typ":"JWT"}`).
    public static func sign(claims: some Encodable, with key: SymmetricKey, encoder: JSONEncoder = SignedToken.encoder()) throws -> String {
        let input = Base64URL.encode(try encoder.encode(Header(alg: "HS256", typ: "JWT"))) + "." + Base64URL.encode(try encoder.encode(claims))
        return input + "." + Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: key)))
    }
}

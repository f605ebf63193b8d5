import AppStoreWire
import Crypto
import Foundation
import Testing

@Suite struct AppStoreRequestSignerTests {
    static let nonce = UUID(uuidString: "0F1E2D3C-4B5A-4978-8695-A4B3C2D1E0F9")!
    static let issuedAt = Date(timeIntervalSince1970: 1_750_000_000.75)
    static var header: [String: Any] { ["alg": "ES256", "kid": "KEY123ABCD", "typ": "JWT"] }

    static func signer(_ key: P256.Signing.PrivateKey) -> AppStoreRequestSigner {
        AppStoreRequestSigner(
            privateKey: key,
            keyIdentifier: "KEY123ABCD",
            issuerId: "57246542-96fe-1a63-e053-0824d011072a",
            bundleId: "com.example.app"
        )
    }

    static func commonClaims(audience: String) -> [String: Any] {
        [
            "iss": "57246542-96fe-1a63-e053-0824d011072a",
            "iat": 1_750_000_000,
            "bid": "com.example.app",
            "aud": audience,
            "nonce": "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9",
        ]
    }

    static func merged(_ base: [String: Any], _ extra: [String: Any]) -> [String: Any] {
        base.merging(extra) { _, new in new }
    }

    @Test(arguments: [nil, "2000000123456789"] as [String?])
    func promotionalOfferV2VerifiesWithPythonCryptography(transactionId: String?) throws {
        let key = P256.Signing.PrivateKey()
        let token = try Self.signer(key).promotionalOfferV2(
            productId: "com.example.monthly",
            offerIdentifier: "WINBACK_50",
            transactionId: transactionId,
            nonce: Self.nonce,
            issuedAt: Self.issuedAt
        )
        var claims = Self.merged(
            Self.commonClaims(audience: "promotional-offer"),
            ["productId": "com.example.monthly", "offerIdentifier": "WINBACK_50"]
        )
        if let transactionId { claims["transactionId"] = transactionId }
        let outcome = try PythonSignatureCheck.verifyJWS(
            keyPEM: key.publicKey.pemRepresentation,
            token: token,
            header: Self.header,
            claims: claims
        )
        #expect(outcome.status == 0, "python: \(outcome.output)")
    }

    @Test(arguments: [true, false])
    func introductoryOfferEligibilityVerifiesWithPythonCryptography(allow: Bool) throws {
        let key = P256.Signing.PrivateKey()
        let token = try Self.signer(key).introductoryOfferEligibility(
            productId: "com.example.yearly",
            allowIntroductoryOffer: allow,
            transactionId: "2000000000000042",
            nonce: Self.nonce,
            issuedAt: Self.issuedAt
        )
        let claims = Self.merged(
            Self.commonClaims(audience: "introductory-offer-eligibility"),
            ["productId": "com.example.yearly", "allowIntroductoryOffer": allow, "transactionId": "2000000000000042"]
        )
        let outcome = try PythonSignatureCheck.verifyJWS(
            keyPEM: key.publicKey.pemRepresentation,
            token: token,
            header: Self.header,
            claims: claims
        )
        #expect(outcome.status == 0, "python: \(outcome.output)")
    }

    @Test func pythonRejectsATamperedPayload() throws {
        let key = P256.Signing.PrivateKey()
        let token = try Self.signer(key).promotionalOfferV2(
            productId: "com.example.monthly",
            offerIdentifier: "WINBACK_50",
            nonce: Self.nonce,
            issuedAt: Self.issuedAt
        )
        let parts = token.split(separator: ".").map(String.init)
        let claims = Self.merged(
            Self.commonClaims(audience: "promotional-offer"),
            ["productId": "com.example.monthly", "offerIdentifier": "FREE_FOREVER"]
        )
        let forgedPayload = try Self.base64URL(JSONSerialization.data(withJSONObject: claims))
        let forged = [parts[0], forgedPayload, parts[2]].joined(separator: ".")
        let outcome = try PythonSignatureCheck.verifyJWS(
            keyPEM: key.publicKey.pemRepresentation,
            token: forged,
            header: Self.header,
            claims: claims
        )
        #expect(outcome.status == 1, "python: \(outcome.output)")
        // And the genuine token does not carry the forged claims.
        let genuine = try PythonSignatureCheck.verifyJWS(
            keyPEM: key.publicKey.pemRepresentation,
            token: token,
            header: Self.header,
            claims: claims
        )
        #expect(genuine.status == 2, "python: \(genuine.output)")
    }

    @Test func eachSignatureHasAFreshLowercaseNonceAndNoExpiry() throws {
        let signer = Self.signer(P256.Signing.PrivateKey())
        let first = try Self.claims(of: signer.promotionalOfferV2(productId: "p", offerIdentifier: "o"))
        let second = try Self.claims(of: signer.promotionalOfferV2(productId: "p", offerIdentifier: "o"))
        let nonce = try #require(first["nonce"] as? String)
        #expect(nonce == nonce.lowercased() && UUID(uuidString: nonce) != nil)
        #expect(nonce != second["nonce"] as? String)
        #expect(first["exp"] == nil)
        #expect(first["transactionId"] == nil)
        let iat = try #require(first["iat"] as? Int)
        #expect(abs(Double(iat) - Date().timeIntervalSince1970) < 60)
    }

    @Test(.enabled(if: TestVectors.available))
    func appleTestKeySignaturesVerify() throws {
        let pem = try TestVectors.string("certs/testSigningKey.p8")
        let signer = try AppStoreRequestSigner(
            p8PEM: pem,
            keyIdentifier: "keyId",
            issuerId: "issuerId",
            bundleId: "bundleId"
        )
        let token = try signer.introductoryOfferEligibility(
            productId: "productId",
            allowIntroductoryOffer: true,
            transactionId: "transactionId",
            nonce: Self.nonce,
            issuedAt: Self.issuedAt
        )
        let claims: [String: Any] = [
            "iss": "issuerId", "iat": 1_750_000_000, "bid": "bundleId", "aud": "introductory-offer-eligibility",
            "nonce": "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", "productId": "productId", "allowIntroductoryOffer": true,
            "transactionId": "transactionId",
        ]
        let header: [String: Any] = ["alg": "ES256", "kid": "keyId", "typ": "JWT"]
        // Python derives the public key from the .p8 itself.
        let outcome = try PythonSignatureCheck.verifyJWS(keyPEM: pem, token: token, header: header, claims: claims)
        #expect(outcome.status == 0, "python: \(outcome.output)")
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func claims(of token: String) throws -> [String: Any] {
        var payload = String(token.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        let data = try #require(Data(base64Encoded: payload))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

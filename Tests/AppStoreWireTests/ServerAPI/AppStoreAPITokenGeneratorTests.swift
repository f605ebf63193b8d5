import Crypto
import Foundation
import Testing

@testable import AppStoreWire

@Suite("App Store Server API JWT")
struct AppStoreAPITokenGeneratorTests {
    @Test func tokenHasApplesHeaderClaimsAndAValidSignature() throws {
        let identity = TestSigningIdentity()
        let now = Date(timeIntervalSince1970: 1_700_000_000.75)
        let token = try identity.tokenGenerator().makeToken(now: now)
        #expect(!token.contains("="))
        let jwt = try #require(JWTInspector(token))
        #expect(jwt.header["alg"] as? String == "ES256")
        #expect(jwt.header["kid"] as? String == TestSigningIdentity.keyId)
        #expect(jwt.header["typ"] as? String == "JWT")
        #expect(jwt.header.count == 3)
        #expect(jwt.claims["iss"] as? String == TestSigningIdentity.issuerId)
        #expect(jwt.claims["aud"] as? String == "appstoreconnect-v1")
        #expect(jwt.claims["bid"] as? String == TestSigningIdentity.bundleId)
        #expect(jwt.intClaim("iat") == 1_700_000_000)
        #expect(jwt.intClaim("exp") == 1_700_000_300)  // default five minutes
        #expect(jwt.signature.count == 64)  // raw R‖S, not DER
        #expect(jwt.verifies(with: identity.publicKey))
        #expect(!jwt.verifies(with: P256.Signing.PrivateKey().publicKey))
    }

    @Test(arguments: [1, 300, 3600])
    func lifetimeNeverExceedsAnHour(lifetime: Int) throws {
        let token = try TestSigningIdentity().tokenGenerator(lifetime: lifetime).makeToken()
        let jwt = try #require(JWTInspector(token))
        let iat = try #require(jwt.intClaim("iat"))
        let exp = try #require(jwt.intClaim("exp"))
        #expect(exp - iat == Int64(lifetime))
        #expect(exp - iat <= 3600)
    }

    @Test(arguments: [0, -5, 3601, 86_400])
    func rejectsLifetimesOutsideAppleLimits(lifetime: Int) {
        #expect(throws: AppStoreAPITokenError.invalidTokenLifetime(seconds: lifetime)) {
            try TestSigningIdentity().tokenGenerator(lifetime: lifetime)
        }
    }

    @Test func eachTokenIsFreshlySigned() throws {
        let generator = try TestSigningIdentity().tokenGenerator()
        let now = Date()
        // ECDSA signatures are randomised, so even same-second tokens differ.
        #expect(try generator.makeToken(now: now) != generator.makeToken(now: now))
    }

    @Test func rejectsUnusableKeysWithoutEchoingThem() {
        let garbage = "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----"
        #expect(throws: AppStoreAPITokenError.invalidPrivateKey) {
            try AppStoreAPITokenGenerator(privateKeyPEM: garbage, keyId: "k", issuerId: "i", bundleId: "b")
        }
        #expect(!AppStoreAPITokenError.invalidPrivateKey.description.contains("bm90"))
        // A P-384 key is the wrong curve for ES256.
        let p384 = P384.Signing.PrivateKey().pemRepresentation
        #expect(throws: AppStoreAPITokenError.invalidPrivateKey) {
            try AppStoreAPITokenGenerator(privateKeyPEM: p384, keyId: "k", issuerId: "i", bundleId: "b")
        }
        #expect(throws: AppStoreAPITokenError.missingIdentity("keyId")) {
            try AppStoreAPITokenGenerator(
                privateKey: P256.Signing.PrivateKey(),
                keyId: "",
                issuerId: "i",
                bundleId: "b"
            )
        }
    }

    @Test func descriptionsNeverContainTheKey() throws {
        let identity = TestSigningIdentity()
        let generator = try identity.tokenGenerator()
        let pemBody =
            identity.privateKey.pemRepresentation
            .split(separator: "\n").dropFirst().first.map(String.init) ?? ""
        let rawKeyBase64 = identity.privateKey.rawRepresentation.base64EncodedString()
        var dumped = ""
        dump(generator, to: &dumped)
        for text in ["\(generator)", String(reflecting: generator), dumped] {
            #expect(text.contains("<redacted>"))
            #expect(!text.contains(pemBody))
            #expect(!text.contains(rawKeyBase64))
        }
    }

    @Test(
        "Apple's test signing key (.p8) signs verifiable tokens",
        .enabled(if: TestVectors.available, "apple-test-vectors not found")
    )
    func applesTestKey() throws {
        let pem = String(decoding: try TestVectors.data("certs/testSigningKey.p8"), as: UTF8.self)
        let generator = try AppStoreAPITokenGenerator(
            privateKeyPEM: pem,
            keyId: "keyId",
            issuerId: "issuerId",
            bundleId: "com.example"
        )
        let jwt = try #require(JWTInspector(try generator.makeToken()))
        let publicKey = try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey
        #expect(jwt.verifies(with: publicKey))
        #expect(jwt.claims["bid"] as? String == "com.example")
    }
}

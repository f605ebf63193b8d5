import AppStoreSimulator
import AppStoreWire
import Crypto
import Foundation
import Testing

@Suite struct ServerAPITokenVerifierTests {
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let keyId = "2X9R4HXF34"
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let bundleId = "com.example.storekeeper"
    static let iat = Int(now.timeIntervalSince1970)

    let key = P256.Signing.PrivateKey()
    let otherKey = P256.Signing.PrivateKey()

    var verifier: ServerAPITokenVerifier {
        ServerAPITokenVerifier(publicKeys: [Self.keyId: key.publicKey], issuerId: Self.issuerId, bundleId: Self.bundleId)
    }

    func token(
        key: P256.Signing.PrivateKey? = nil,
        keyId: String = keyId,
        issuerId: String = issuerId,
        bundleId: String = bundleId,
        lifetime: Int = 300,
        at date: Date = now
    ) throws -> String {
        try AppStoreAPITokenGenerator(
            privateKey: key ?? self.key,
            keyId: keyId,
            issuerId: issuerId,
            bundleId: bundleId,
            tokenLifetimeSeconds: lifetime
        ).makeToken(now: date)
    }

    static let header = #"{"alg":"ES256","kid":"2X9R4HXF34","typ":"JWT"}"#

    static func claims(
        iss: String = issuerId,
        aud: String = "appstoreconnect-v1",
        bid: String = bundleId,
        iat: Int = iat,
        exp: Int = iat + 300
    ) -> String {
        #"{"aud":"\#(aud)","bid":"\#(bid)","exp":\#(exp),"iat":\#(iat),"iss":"\#(iss)"}"#
    }

    // MARK: Accepted

    @Test(arguments: [1, 300, 3600])
    func generatorTokensPass(lifetime: Int) throws {
        let token = try token(lifetime: lifetime)
        let claims = try verifier.verify(authorization: "Bearer \(token)", now: Self.now)
        #expect(
            claims
                == ServerAPITokenClaims(
                    keyId: Self.keyId,
                    issuerId: Self.issuerId,
                    bundleId: Self.bundleId,
                    issuedAt: Self.now,
                    expiresAt: Self.now.addingTimeInterval(TimeInterval(lifetime))
                )
        )
        // Still good one second before it runs out.
        try verifier.verify(token: token, now: Self.now.addingTimeInterval(TimeInterval(lifetime - 1)))
    }

    @Test func forgedTokenWithinPolicyPasses() throws {
        // Guards the forge itself: the refusals below differ from this token in one thing only.
        try verifier.verify(token: JWTForge.es256(header: Self.header, claims: Self.claims(), key: key), now: Self.now)
    }

    @Test func severalKeysEachVerifyTheirOwnTokens() throws {
        let second = P256.Signing.PrivateKey()
        let verifier = ServerAPITokenVerifier(
            publicKeys: [Self.keyId: key.publicKey, "SECONDKEY1": second.publicKey],
            issuerId: Self.issuerId,
            bundleId: Self.bundleId
        )
        #expect(try verifier.verify(token: token(), now: Self.now).keyId == Self.keyId)
        #expect(try verifier.verify(token: token(key: second, keyId: "SECONDKEY1"), now: Self.now).keyId == "SECONDKEY1")
        // A key's token does not pass under the other key's id.
        #expect(throws: ServerAPITokenFailure.invalidSignature) {
            try verifier.verify(token: token(key: second, keyId: Self.keyId), now: Self.now)
        }
    }

    @Test func issuedWithinClockSkewPasses() throws {
        try verifier.verify(token: token(at: Self.now.addingTimeInterval(30)), now: Self.now)
    }

    @Test func tokenWithoutIatPassesAsApplesPythonClientSendsIt() throws {
        // Apple's app-store-server-library (Python) signs only bid, iss, aud and exp, five minutes ahead.
        let claims = #"{"bid":"\#(Self.bundleId)","iss":"\#(Self.issuerId)","aud":"appstoreconnect-v1","exp":\#(Self.iat + 300)}"#
        let token = try JWTForge.es256(header: #"{"alg":"ES256","kid":"2X9R4HXF34","typ":"JWT"}"#, claims: claims, key: key)
        let verified = try verifier.verify(authorization: "Bearer \(token)", now: Self.now)
        #expect(verified.issuedAt == nil)
        #expect(verified.expiresAt == Self.now.addingTimeInterval(300))
        #expect(verified.bundleId == Self.bundleId)
        // Every other check still applies: the wrong key, the wrong bundle, a token past its exp.
        #expect(throws: ServerAPITokenFailure.invalidSignature) {
            try verifier.verify(token: JWTForge.es256(header: Self.header, claims: claims, key: otherKey), now: Self.now)
        }
        let otherBundle = claims.replacingOccurrences(of: Self.bundleId, with: "com.example.other")
        #expect(throws: ServerAPITokenFailure.wrongBundleId("com.example.other")) {
            try verifier.verify(token: JWTForge.es256(header: Self.header, claims: otherBundle, key: key), now: Self.now)
        }
        #expect(throws: ServerAPITokenFailure.expired(expiresAt: Self.now.addingTimeInterval(300))) {
            try verifier.verify(token: token, now: Self.now.addingTimeInterval(300))
        }
    }

    @Test func tokenWithoutIatMayNotExpireMoreThanAnHourAhead() throws {
        func token(expiringIn seconds: Int) throws -> String {
            let claims = #"{"aud":"appstoreconnect-v1","bid":"\#(Self.bundleId)","exp":\#(Self.iat + seconds),"iss":"\#(Self.issuerId)"}"#
            return try JWTForge.es256(header: Self.header, claims: claims, key: key)
        }
        // An hour (plus the clock skew allowed for iat) is Apple's ceiling on a token's life.
        try verifier.verify(token: token(expiringIn: 3600), now: Self.now)
        try verifier.verify(token: token(expiringIn: 3660), now: Self.now)
        #expect(throws: ServerAPITokenFailure.self) { try verifier.verify(token: token(expiringIn: 3661), now: Self.now) }
        #expect(throws: ServerAPITokenFailure.self) { try verifier.verify(token: token(expiringIn: 86_400), now: Self.now) }
        let noExp = #"{"aud":"appstoreconnect-v1","bid":"\#(Self.bundleId)","iss":"\#(Self.issuerId)"}"#
        #expect(throws: ServerAPITokenFailure.missingClaim("exp")) {
            try verifier.verify(token: JWTForge.es256(header: Self.header, claims: noExp, key: key), now: Self.now)
        }
    }

    @Test func bearerSchemeIsCaseInsensitive() throws {
        try verifier.verify(authorization: "bearer  \(token())", now: Self.now)
        try verifier.verify(authorization: "BEARER \(token())", now: Self.now)
    }

    // MARK: Refused: request shape

    @Test func missingOrNonBearerAuthorizationIsRefused() throws {
        #expect(throws: ServerAPITokenFailure.missingAuthorization) {
            try verifier.verify(authorization: nil, now: Self.now)
        }
        for header in ["Basic dXNlcjpwYXNz", "Bearer", "Bearer   ", try token(), ""] {
            #expect(throws: ServerAPITokenFailure.notBearer) { try verifier.verify(authorization: header, now: Self.now) }
        }
    }

    @Test func malformedTokensAreRefused() throws {
        let good = try token()
        let parts = good.split(separator: ".").map(String.init)
        let cases = [
            "not-a-jwt",
            parts[0] + "." + parts[1],
            good + "." + parts[2],
            "." + parts[1] + "." + parts[2],
            "!!!" + parts[0] + "." + parts[1] + "." + parts[2],
            parts[0] + "." + parts[1] + "*." + parts[2],
            parts[0] + "." + parts[1] + "." + parts[2] + "==",
            parts[0] + "." + parts[1] + "." + String(parts[2].dropLast(4)),
            Base64URL.encode(Data("not json".utf8)) + "." + parts[1] + "." + parts[2],
            Base64URL.encode(Data(#"{"alg":256}"#.utf8)) + "." + parts[1] + "." + parts[2],
            Base64URL.encode(Data(#"{"kid":"2X9R4HXF34"}"#.utf8)) + "." + parts[1] + "." + parts[2],
            String(repeating: "a", count: 20_000),
        ]
        for token in cases {
            let failure = #expect(throws: ServerAPITokenFailure.self) { try verifier.verify(token: token, now: Self.now) }
            guard case .malformed = failure else {
                Issue.record("\(token.prefix(60)): expected .malformed, got \(String(describing: failure))")
                continue
            }
        }
    }

    @Test func mistypedOrMissingClaimsAreRefused() throws {
        let iatAsText =
            #"{"aud":"appstoreconnect-v1","bid":"\#(Self.bundleId)","exp":\#(Self.iat + 300),"iat":"\#(Self.iat)","iss":"\#(Self.issuerId)"}"#
        #expect(throws: ServerAPITokenFailure.malformed("claim iat has the wrong type")) {
            try verifier.verify(token: JWTForge.es256(header: Self.header, claims: iatAsText, key: key), now: Self.now)
        }
        let noBid = #"{"aud":"appstoreconnect-v1","exp":\#(Self.iat + 300),"iat":\#(Self.iat),"iss":"\#(Self.issuerId)"}"#
        #expect(throws: ServerAPITokenFailure.missingClaim("bid")) {
            try verifier.verify(token: JWTForge.es256(header: Self.header, claims: noBid, key: key), now: Self.now)
        }
        #expect(throws: ServerAPITokenFailure.malformed("JWS payload is not a JSON object")) {
            try verifier.verify(token: JWTForge.es256(header: Self.header, claims: "[1,2]", key: key), now: Self.now)
        }
        let noExp = #"{"aud":"appstoreconnect-v1","bid":"\#(Self.bundleId)","iat":\#(Self.iat),"iss":"\#(Self.issuerId)"}"#
        #expect(throws: ServerAPITokenFailure.missingClaim("exp")) {
            try verifier.verify(token: JWTForge.es256(header: Self.header, claims: noExp, key: key), now: Self.now)
        }
    }

    // MARK: Refused: header

    @Test func algNoneIsRefused() throws {
        let token = JWTForge.unsigned(header: #"{"alg":"none","kid":"2X9R4HXF34","typ":"JWT"}"#, claims: Self.claims())
        #expect(throws: ServerAPITokenFailure.unsupportedAlgorithm("none")) {
            try verifier.verify(token: token, now: Self.now)
        }
    }

    @Test func hs256IsRefused() throws {
        // Algorithm confusion: HMAC keyed with the public key's bytes.
        let token = JWTForge.hs256(
            header: #"{"alg":"HS256","kid":"2X9R4HXF34","typ":"JWT"}"#,
            claims: Self.claims(),
            secret: key.publicKey.x963Representation
        )
        #expect(throws: ServerAPITokenFailure.unsupportedAlgorithm("HS256")) {
            try verifier.verify(token: token, now: Self.now)
        }
    }

    @Test func unknownKeyIdIsRefused() throws {
        #expect(throws: ServerAPITokenFailure.unknownKey("ZZZZZZZZZZ")) {
            try verifier.verify(token: token(keyId: "ZZZZZZZZZZ"), now: Self.now)
        }
    }

    @Test func missingKeyIdIsRefused() throws {
        let token = try JWTForge.es256(header: #"{"alg":"ES256","typ":"JWT"}"#, claims: Self.claims(), key: key)
        #expect(throws: ServerAPITokenFailure.missingKeyId) { try verifier.verify(token: token, now: Self.now) }
    }

    @Test func wrongTypIsRefused() throws {
        let jose = try JWTForge.es256(
            header: #"{"alg":"ES256","kid":"2X9R4HXF34","typ":"JOSE"}"#,
            claims: Self.claims(),
            key: key
        )
        #expect(throws: ServerAPITokenFailure.wrongType("JOSE")) { try verifier.verify(token: jose, now: Self.now) }
        let none = try JWTForge.es256(header: #"{"alg":"ES256","kid":"2X9R4HXF34"}"#, claims: Self.claims(), key: key)
        #expect(throws: ServerAPITokenFailure.wrongType(nil)) { try verifier.verify(token: none, now: Self.now) }
    }

    // MARK: Refused: signature

    @Test func tamperedPayloadIsRefused() throws {
        let token = try token(bundleId: "com.example.other")
        let tampered = JWTForge.replacingPayload(
            of: token,
            with: JWTForge.payload(of: token).replacingOccurrences(of: "com.example.other", with: Self.bundleId)
        )
        #expect(throws: ServerAPITokenFailure.invalidSignature) { try verifier.verify(token: tampered, now: Self.now) }
    }

    @Test func signatureByAnotherKeyIsRefused() throws {
        #expect(throws: ServerAPITokenFailure.invalidSignature) {
            try verifier.verify(token: token(key: otherKey), now: Self.now)
        }
    }

    // MARK: Refused: claims

    @Test func wrongAudienceIsRefused() throws {
        let token = try JWTForge.es256(header: Self.header, claims: Self.claims(aud: "appstoreconnect-v2"), key: key)
        #expect(throws: ServerAPITokenFailure.wrongAudience("appstoreconnect-v2")) {
            try verifier.verify(token: token, now: Self.now)
        }
    }

    @Test func wrongIssuerIsRefused() throws {
        #expect(throws: ServerAPITokenFailure.wrongIssuer("00000000-0000-0000-0000-000000000000")) {
            try verifier.verify(token: token(issuerId: "00000000-0000-0000-0000-000000000000"), now: Self.now)
        }
    }

    @Test func wrongBundleIdIsRefused() throws {
        #expect(throws: ServerAPITokenFailure.wrongBundleId("com.example.other")) {
            try verifier.verify(token: token(bundleId: "com.example.other"), now: Self.now)
        }
    }

    @Test func expiredTokenIsRefused() throws {
        let token = try token()
        let expiry = Self.now.addingTimeInterval(300)
        #expect(throws: ServerAPITokenFailure.expired(expiresAt: expiry)) {
            try verifier.verify(token: token, now: expiry)
        }
        #expect(throws: ServerAPITokenFailure.expired(expiresAt: expiry)) {
            try verifier.verify(token: token, now: Self.now.addingTimeInterval(3600))
        }
    }

    @Test func lifetimeOverAnHourIsRefused() throws {
        let token = try JWTForge.es256(header: Self.header, claims: Self.claims(exp: Self.iat + 3601), key: key)
        #expect(throws: ServerAPITokenFailure.invalidLifetime(seconds: 3601)) {
            try verifier.verify(token: token, now: Self.now)
        }
    }

    @Test func expiryNotAfterIssueIsRefused() throws {
        let token = try JWTForge.es256(header: Self.header, claims: Self.claims(exp: Self.iat), key: key)
        #expect(throws: ServerAPITokenFailure.invalidLifetime(seconds: 0)) {
            try verifier.verify(token: token, now: Self.now)
        }
    }

    @Test func issuedInTheFutureIsRefused() throws {
        let issued = Self.now.addingTimeInterval(120)
        #expect(throws: ServerAPITokenFailure.issuedInFuture(issuedAt: issued)) {
            try verifier.verify(token: token(at: issued), now: Self.now)
        }
    }

    @Test func failuresDescribeThemselves() {
        #expect(ServerAPITokenFailure.unknownKey("K").description == "kid K is not a known In-App Purchase key")
        #expect(ServerAPITokenFailure.wrongType(nil).description == "typ (absent) is not JWT")
    }
}

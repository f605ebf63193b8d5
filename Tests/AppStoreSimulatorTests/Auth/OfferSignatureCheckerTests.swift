import AppStoreSimulator
import AppStoreWire
import Crypto
import Foundation
import Testing

@Suite struct OfferSignatureCheckerTests {
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let day: TimeInterval = 86_400
    static let keyId = "OFFERKEY01"
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let bundleId = "com.example.storekeeper"
    static let product = "com.example.storekeeper.membership.monthly"
    static let offer = "WINBACK50"
    static let accountToken = "8E8C5E4A-6B59-4C7E-9F0B-3A6D2F1C0B7E"
    static let customerTransactions: Set<String> = ["2000000000000001", "2000000000000002"]

    let key = P256.Signing.PrivateKey()
    let otherKey = P256.Signing.PrivateKey()

    func checker(nonceCapacity: Int = 100_000) -> OfferSignatureChecker {
        OfferSignatureChecker(
            publicKeys: [Self.keyId: key.publicKey],
            issuerId: Self.issuerId,
            nonceCapacity: nonceCapacity
        )
    }

    func v1Signer(key: P256.Signing.PrivateKey? = nil, keyId: String = keyId) -> PromotionalOfferV1Signer {
        PromotionalOfferV1Signer(privateKey: key ?? self.key, keyIdentifier: keyId, bundleId: Self.bundleId)
    }

    func requestSigner(
        key: P256.Signing.PrivateKey? = nil,
        keyId: String = keyId,
        issuerId: String = issuerId,
        bundleId: String = bundleId
    ) -> AppStoreRequestSigner {
        AppStoreRequestSigner(
            privateKey: key ?? self.key,
            keyIdentifier: keyId,
            issuerId: issuerId,
            bundleId: bundleId
        )
    }

    func v1(
        signature: PromotionalOfferV1Signature,
        product: String = product,
        offer: String = offer,
        token: String = accountToken,
        checker: OfferSignatureChecker,
        at date: Date = now
    ) throws(OfferSignatureFailure) {
        try checker.checkPromotionalOfferV1(
            signature,
            bundleId: Self.bundleId,
            productId: product,
            offerId: offer,
            appAccountToken: token,
            now: date
        )
    }

    @discardableResult
    func v2(
        _ jws: String,
        product: String = product,
        offer: String = offer,
        checker: OfferSignatureChecker,
        at date: Date = now
    ) throws(OfferSignatureFailure) -> OfferRequestClaims {
        try checker.checkPromotionalOfferV2(
            jws,
            bundleId: Self.bundleId,
            productId: product,
            offerIdentifier: offer,
            customerTransactionIds: Self.customerTransactions,
            now: date
        )
    }

    @discardableResult
    func eligibility(
        _ jws: String,
        checker: OfferSignatureChecker,
        at date: Date = now
    ) throws(OfferSignatureFailure)
        -> OfferRequestClaims
    {
        try checker.checkIntroductoryOfferEligibility(
            jws,
            bundleId: Self.bundleId,
            productId: Self.product,
            customerTransactionIds: Self.customerTransactions,
            now: date
        )
    }

    // MARK: Promotional offer v1

    @Test func v1SignaturePasses() throws {
        let checker = checker()
        // The device may send the token in upper case; both sides sign it lowercased.
        let signature = try v1Signer().sign(
            productId: Self.product,
            offerId: Self.offer,
            appAccountToken: Self.accountToken,
            timestamp: Self.now
        )
        try v1(signature: signature, checker: checker)
        #expect(checker.rememberedNonceCount == 1)
    }

    @Test func v1SignaturePassesFromRawFields() throws {
        let signature = try v1Signer().sign(productId: Self.product, offerId: Self.offer, timestamp: Self.now)
        try checker().checkPromotionalOfferV1(
            keyIdentifier: signature.keyIdentifier,
            nonce: signature.nonce.uuidString.lowercased(),
            timestamp: signature.timestamp,
            signature: signature.signature,
            bundleId: Self.bundleId,
            productId: Self.product,
            offerId: Self.offer,
            now: Self.now
        )
    }

    @Test func v1ForgedByAnotherKeyIsRefused() throws {
        let signature = try v1Signer(key: otherKey).sign(
            productId: Self.product,
            offerId: Self.offer,
            appAccountToken: Self.accountToken,
            timestamp: Self.now
        )
        #expect(throws: OfferSignatureFailure.invalidSignature) { try v1(signature: signature, checker: checker()) }
    }

    @Test(arguments: [
        (product: "com.example.storekeeper.membership.yearly", offer: "WINBACK50", token: OfferSignatureCheckerTests.accountToken),
        (product: "com.example.storekeeper.membership.monthly", offer: "LOYALTY25", token: OfferSignatureCheckerTests.accountToken),
        (product: "com.example.storekeeper.membership.monthly", offer: "WINBACK50", token: "00000000-0000-0000-0000-000000000000"),
        (product: "com.example.storekeeper.membership.monthly", offer: "WINBACK50", token: ""),
    ])
    func v1BoundToProductOfferAndToken(product: String, offer: String, token: String) throws {
        let checker = checker()
        let signature = try v1Signer().sign(
            productId: Self.product,
            offerId: Self.offer,
            appAccountToken: Self.accountToken,
            timestamp: Self.now
        )
        #expect(throws: OfferSignatureFailure.invalidSignature) {
            try v1(signature: signature, product: product, offer: offer, token: token, checker: checker)
        }
        // A refused attempt does not burn the nonce.
        try v1(signature: signature, checker: checker)
    }

    @Test func v1ForAnotherAppIsRefused() throws {
        let signature = try v1Signer().sign(productId: Self.product, offerId: Self.offer, timestamp: Self.now)
        #expect(throws: OfferSignatureFailure.invalidSignature) {
            try checker().checkPromotionalOfferV1(
                signature,
                bundleId: "com.example.other",
                productId: Self.product,
                offerId: Self.offer,
                now: Self.now
            )
        }
    }

    @Test func v1StaleIsRefused() throws {
        let signedAt = Self.now.addingTimeInterval(-Self.day - 1)
        let signature = try v1Signer().sign(
            productId: Self.product,
            offerId: Self.offer,
            appAccountToken: Self.accountToken,
            timestamp: signedAt
        )
        #expect(throws: OfferSignatureFailure.stale(signedAt: signedAt)) {
            try v1(signature: signature, checker: checker())
        }
        // Exactly 24 hours old is still accepted.
        let lastMoment = try v1Signer().sign(
            productId: Self.product,
            offerId: Self.offer,
            appAccountToken: Self.accountToken,
            timestamp: Self.now.addingTimeInterval(-Self.day)
        )
        try v1(signature: lastMoment, checker: checker())
    }

    @Test func v1FromTheFutureIsRefused() throws {
        let signedAt = Self.now.addingTimeInterval(120)
        let signature = try v1Signer().sign(
            productId: Self.product,
            offerId: Self.offer,
            appAccountToken: Self.accountToken,
            timestamp: signedAt
        )
        #expect(throws: OfferSignatureFailure.signedInFuture(signedAt: signedAt)) {
            try v1(signature: signature, checker: checker())
        }
        // Within the clock skew it passes.
        let slightlyAhead = try v1Signer().sign(
            productId: Self.product,
            offerId: Self.offer,
            appAccountToken: Self.accountToken,
            timestamp: Self.now.addingTimeInterval(30)
        )
        try v1(signature: slightlyAhead, checker: checker())
    }

    @Test func v1ReplayedNonceIsRefused() throws {
        let checker = checker()
        let signature = try v1Signer().sign(
            productId: Self.product,
            offerId: Self.offer,
            appAccountToken: Self.accountToken,
            timestamp: Self.now
        )
        try v1(signature: signature, checker: checker)
        #expect(throws: OfferSignatureFailure.nonceReused(signature.nonce.uuidString.lowercased())) {
            try v1(signature: signature, checker: checker, at: Self.now.addingTimeInterval(3600))
        }
        // A new signature with the same nonce is still a replay.
        let sameNonce = try v1Signer().sign(
            productId: Self.product,
            offerId: Self.offer,
            appAccountToken: Self.accountToken,
            nonce: signature.nonce,
            timestamp: Self.now.addingTimeInterval(60)
        )
        #expect(throws: OfferSignatureFailure.nonceReused(signature.nonce.uuidString.lowercased())) {
            try v1(signature: sameNonce, checker: checker, at: Self.now.addingTimeInterval(120))
        }
    }

    @Test func v1UnknownKeyIdIsRefused() throws {
        let signature = try v1Signer(keyId: "UNKNOWN123").sign(
            productId: Self.product,
            offerId: Self.offer,
            appAccountToken: Self.accountToken,
            timestamp: Self.now
        )
        #expect(throws: OfferSignatureFailure.unknownKey("UNKNOWN123")) {
            try v1(signature: signature, checker: checker())
        }
    }

    @Test func v1MalformedFieldsAreRefused() throws {
        let checker = checker()
        let good = try v1Signer().sign(productId: Self.product, offerId: Self.offer, timestamp: Self.now)
        func check(keyId: String = Self.keyId, nonce: String? = nil, signature: String? = nil) throws(OfferSignatureFailure) {
            try checker.checkPromotionalOfferV1(
                keyIdentifier: keyId,
                nonce: nonce ?? good.nonce.uuidString,
                timestamp: good.timestamp,
                signature: signature ?? good.signature,
                bundleId: Self.bundleId,
                productId: Self.product,
                offerId: Self.offer,
                now: Self.now
            )
        }
        #expect(throws: OfferSignatureFailure.malformed("nonce not-a-uuid is not a UUID")) {
            try check(nonce: "not-a-uuid")
        }
        #expect(throws: OfferSignatureFailure.malformed("signature is not a base64 DER ECDSA signature")) {
            try check(signature: "%%%not base64%%%")
        }
        #expect(throws: OfferSignatureFailure.malformed("signature is not a base64 DER ECDSA signature")) {
            try check(signature: Data(repeating: 7, count: 64).base64EncodedString())
        }
        #expect(throws: OfferSignatureFailure.missingKeyId) { try check(keyId: "") }
        #expect(checker.rememberedNonceCount == 0)
    }

    // MARK: Promotional offer V2 (JWS)

    @Test func v2SignaturePasses() throws {
        let checker = checker()
        let nonce = UUID()
        let jws = try requestSigner().promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            nonce: nonce,
            issuedAt: Self.now
        )
        let claims = try v2(jws, checker: checker)
        #expect(
            claims
                == OfferRequestClaims(
                    keyId: Self.keyId,
                    issuerId: Self.issuerId,
                    bundleId: Self.bundleId,
                    audience: "promotional-offer",
                    issuedAt: Self.now,
                    nonce: nonce.uuidString.lowercased(),
                    productId: Self.product,
                    offerIdentifier: Self.offer
                )
        )
        let withTransaction = try requestSigner().promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            transactionId: "2000000000000002",
            issuedAt: Self.now
        )
        #expect(try v2(withTransaction, checker: checker).transactionId == "2000000000000002")
    }

    @Test func v2ForgedByAnotherKeyIsRefused() throws {
        let jws = try requestSigner(key: otherKey).promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            issuedAt: Self.now
        )
        #expect(throws: OfferSignatureFailure.invalidSignature) { try v2(jws, checker: checker()) }
    }

    @Test func v2TamperedPayloadIsRefused() throws {
        let jws = try requestSigner().promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: "LOYALTY25",
            issuedAt: Self.now
        )
        let tampered = JWTForge.replacingPayload(
            of: jws,
            with: JWTForge.payload(of: jws).replacingOccurrences(of: "LOYALTY25", with: Self.offer)
        )
        #expect(throws: OfferSignatureFailure.invalidSignature) { try v2(tampered, checker: checker()) }
    }

    @Test func v2WrongProductOfferOrTransactionIsRefused() throws {
        let checker = checker()
        let jws = try requestSigner().promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            transactionId: "2000000000000001",
            issuedAt: Self.now
        )
        #expect(throws: OfferSignatureFailure.wrongProduct(Self.product)) {
            try v2(jws, product: "com.example.storekeeper.membership.yearly", checker: checker)
        }
        #expect(throws: OfferSignatureFailure.wrongOffer(Self.offer)) {
            try v2(jws, offer: "LOYALTY25", checker: checker)
        }
        #expect(throws: OfferSignatureFailure.transactionNotOwned("2000000000000001")) {
            try checker.checkPromotionalOfferV2(
                jws,
                bundleId: Self.bundleId,
                productId: Self.product,
                offerIdentifier: Self.offer,
                customerTransactionIds: ["3000000000000009"],
                now: Self.now
            )
        }
        // None of those burnt the nonce.
        try v2(jws, checker: checker)
    }

    @Test func v2WrongAppOrIssuerIsRefused() throws {
        let otherApp = try requestSigner(bundleId: "com.example.other").promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            issuedAt: Self.now
        )
        #expect(throws: OfferSignatureFailure.wrongBundleId("com.example.other")) { try v2(otherApp, checker: checker()) }
        let otherTeam = try requestSigner(issuerId: "00000000-0000-0000-0000-000000000000").promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            issuedAt: Self.now
        )
        #expect(throws: OfferSignatureFailure.wrongIssuer("00000000-0000-0000-0000-000000000000")) {
            try v2(otherTeam, checker: checker())
        }
    }

    @Test func eligibilityTokenIsNotAPromotionalOffer() throws {
        let jws = try requestSigner().introductoryOfferEligibility(
            productId: Self.product,
            allowIntroductoryOffer: true,
            transactionId: "2000000000000001",
            issuedAt: Self.now
        )
        #expect(throws: OfferSignatureFailure.wrongAudience("introductory-offer-eligibility")) {
            try v2(jws, checker: checker())
        }
    }

    @Test func v2StaleOrFutureIsRefused() throws {
        let stale = Self.now.addingTimeInterval(-Self.day - 1)
        let old = try requestSigner().promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            issuedAt: stale
        )
        #expect(throws: OfferSignatureFailure.stale(signedAt: stale)) { try v2(old, checker: checker()) }
        let future = Self.now.addingTimeInterval(300)
        let early = try requestSigner().promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            issuedAt: future
        )
        #expect(throws: OfferSignatureFailure.signedInFuture(signedAt: future)) { try v2(early, checker: checker()) }
    }

    @Test func v2ReplayedNonceIsRefused() throws {
        let checker = checker()
        let nonce = UUID()
        let jws = try requestSigner().promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            nonce: nonce,
            issuedAt: Self.now
        )
        try v2(jws, checker: checker)
        #expect(throws: OfferSignatureFailure.nonceReused(nonce.uuidString.lowercased())) {
            try v2(jws, checker: checker, at: Self.now.addingTimeInterval(10))
        }
    }

    @Test func v2UnknownKeyIdIsRefused() throws {
        let jws = try requestSigner(keyId: "UNKNOWN123").promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            issuedAt: Self.now
        )
        #expect(throws: OfferSignatureFailure.unknownKey("UNKNOWN123")) { try v2(jws, checker: checker()) }
    }

    @Test func v2OtherAlgorithmsAreRefused() throws {
        let claims =
            #"{"aud":"promotional-offer","bid":"\#(Self.bundleId)","iat":\#(Int(Self.now.timeIntervalSince1970)),"iss":"\#(Self.issuerId)","nonce":"\#(UUID().uuidString.lowercased())","offerIdentifier":"\#(Self.offer)","productId":"\#(Self.product)"}"#
        let hs256 = JWTForge.hs256(
            header: #"{"alg":"HS256","kid":"OFFERKEY01","typ":"JWT"}"#,
            claims: claims,
            secret: key.publicKey.x963Representation
        )
        #expect(throws: OfferSignatureFailure.unsupportedAlgorithm("HS256")) { try v2(hs256, checker: checker()) }
        let none = JWTForge.unsigned(header: #"{"alg":"none","kid":"OFFERKEY01"}"#, claims: claims)
        #expect(throws: OfferSignatureFailure.unsupportedAlgorithm("none")) { try v2(none, checker: checker()) }
        // The same claims properly signed pass: only the algorithm was wrong.
        try v2(
            JWTForge.es256(header: #"{"alg":"ES256","kid":"OFFERKEY01","typ":"JWT"}"#, claims: claims, key: key),
            checker: checker()
        )
    }

    @Test func v2MissingOrMalformedNonceIsRefused() throws {
        let iat = Int(Self.now.timeIntervalSince1970)
        let header = #"{"alg":"ES256","kid":"OFFERKEY01","typ":"JWT"}"#
        let base =
            #""aud":"promotional-offer","bid":"\#(Self.bundleId)","iat":\#(iat),"iss":"\#(Self.issuerId)","offerIdentifier":"\#(Self.offer)","productId":"\#(Self.product)""#
        #expect(throws: OfferSignatureFailure.missingClaim("nonce")) {
            try v2(JWTForge.es256(header: header, claims: "{\(base)}", key: key), checker: checker())
        }
        #expect(throws: OfferSignatureFailure.malformed("nonce abc is not a UUID")) {
            try v2(JWTForge.es256(header: header, claims: #"{\#(base),"nonce":"abc"}"#, key: key), checker: checker())
        }
        #expect(throws: OfferSignatureFailure.wrongType("JWE")) {
            try v2(
                JWTForge.es256(
                    header: #"{"alg":"ES256","kid":"OFFERKEY01","typ":"JWE"}"#,
                    claims: #"{\#(base),"nonce":"\#(UUID())"}"#,
                    key: key
                ),
                checker: checker()
            )
        }
    }

    @Test func malformedJWSIsRefused() throws {
        let header = Base64URL.encode(Data(#"{"alg":"ES256","kid":"OFFERKEY01"}"#.utf8))
        let signature = Base64URL.encode(Data(repeating: 1, count: 64))
        let cases = [
            "", "a.b", "a.b.c.d", header + ".e30=." + signature, header + ".e30." + "AAAA",
            header + ".e30." + signature + "=",
        ]
        for jws in cases {
            let failure = #expect(throws: OfferSignatureFailure.self) { try v2(jws, checker: checker()) }
            guard case .malformed = failure else {
                Issue.record("\(jws): expected .malformed, got \(String(describing: failure))")
                continue
            }
        }
    }

    // MARK: Introductory offer eligibility (JWS)

    @Test(arguments: [true, false])
    func eligibilitySignaturePasses(allow: Bool) throws {
        let jws = try requestSigner().introductoryOfferEligibility(
            productId: Self.product,
            allowIntroductoryOffer: allow,
            transactionId: "2000000000000001",
            issuedAt: Self.now
        )
        let claims = try eligibility(jws, checker: checker())
        #expect(claims.allowIntroductoryOffer == allow)
        #expect(claims.transactionId == "2000000000000001")
        #expect(claims.audience == "introductory-offer-eligibility")
    }

    @Test func eligibilityForAnotherCustomerIsRefused() throws {
        let jws = try requestSigner().introductoryOfferEligibility(
            productId: Self.product,
            allowIntroductoryOffer: true,
            transactionId: "3000000000000009",
            issuedAt: Self.now
        )
        #expect(throws: OfferSignatureFailure.transactionNotOwned("3000000000000009")) {
            try eligibility(jws, checker: checker())
        }
    }

    @Test func eligibilityWithoutTransactionIdIsRefused() throws {
        let claims =
            #"{"allowIntroductoryOffer":true,"aud":"introductory-offer-eligibility","bid":"\#(Self.bundleId)","iat":\#(Int(Self.now.timeIntervalSince1970)),"iss":"\#(Self.issuerId)","nonce":"\#(UUID().uuidString.lowercased())","productId":"\#(Self.product)"}"#
        let jws = try JWTForge.es256(header: #"{"alg":"ES256","kid":"OFFERKEY01","typ":"JWT"}"#, claims: claims, key: key)
        #expect(throws: OfferSignatureFailure.missingClaim("transactionId")) { try eligibility(jws, checker: checker()) }
    }

    @Test func eligibilityRefusesPromotionalOfferForgeryStaleAndReplay() throws {
        let checker = checker()
        let promotional = try requestSigner().promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            transactionId: "2000000000000001",
            issuedAt: Self.now
        )
        #expect(throws: OfferSignatureFailure.wrongAudience("promotional-offer")) {
            try eligibility(promotional, checker: checker)
        }
        let forged = try requestSigner(key: otherKey).introductoryOfferEligibility(
            productId: Self.product,
            allowIntroductoryOffer: true,
            transactionId: "2000000000000001",
            issuedAt: Self.now
        )
        #expect(throws: OfferSignatureFailure.invalidSignature) { try eligibility(forged, checker: checker) }
        let staleDate = Self.now.addingTimeInterval(-2 * Self.day)
        let stale = try requestSigner().introductoryOfferEligibility(
            productId: Self.product,
            allowIntroductoryOffer: true,
            transactionId: "2000000000000001",
            issuedAt: staleDate
        )
        #expect(throws: OfferSignatureFailure.stale(signedAt: staleDate)) { try eligibility(stale, checker: checker) }
        let nonce = UUID()
        let good = try requestSigner().introductoryOfferEligibility(
            productId: Self.product,
            allowIntroductoryOffer: true,
            transactionId: "2000000000000001",
            nonce: nonce,
            issuedAt: Self.now
        )
        try eligibility(good, checker: checker)
        #expect(throws: OfferSignatureFailure.nonceReused(nonce.uuidString.lowercased())) {
            try eligibility(good, checker: checker)
        }
    }

    // MARK: Nonce memory

    @Test func noncesAreSharedAcrossKinds() throws {
        let checker = checker()
        let nonce = UUID()
        let v1 = try v1Signer().sign(productId: Self.product, offerId: Self.offer, nonce: nonce, timestamp: Self.now)
        try checker.checkPromotionalOfferV1(
            v1,
            bundleId: Self.bundleId,
            productId: Self.product,
            offerId: Self.offer,
            now: Self.now
        )
        let jws = try requestSigner().promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            nonce: nonce,
            issuedAt: Self.now
        )
        #expect(throws: OfferSignatureFailure.nonceReused(nonce.uuidString.lowercased())) { try v2(jws, checker: checker) }
    }

    @Test func staleNoncesAreForgotten() throws {
        let checker = checker()
        for _ in 0..<5 {
            let jws = try requestSigner().promotionalOfferV2(
                productId: Self.product,
                offerIdentifier: Self.offer,
                issuedAt: Self.now
            )
            try v2(jws, checker: checker)
        }
        #expect(checker.rememberedNonceCount == 5)
        let later = Self.now.addingTimeInterval(Self.day + 60)
        let jws = try requestSigner().promotionalOfferV2(
            productId: Self.product,
            offerIdentifier: Self.offer,
            issuedAt: later
        )
        try v2(jws, checker: checker, at: later)
        #expect(checker.rememberedNonceCount == 1)
    }

    @Test func nonceMemoryIsBounded() throws {
        let checker = checker(nonceCapacity: 3)
        for _ in 0..<10 {
            let jws = try requestSigner().promotionalOfferV2(
                productId: Self.product,
                offerIdentifier: Self.offer,
                issuedAt: Self.now
            )
            try v2(jws, checker: checker)
        }
        #expect(checker.rememberedNonceCount == 3)
    }

    @Test func concurrentReplaysRedeemOnce() async throws {
        let checker = checker()
        let signature = try v1Signer().sign(productId: Self.product, offerId: Self.offer, timestamp: Self.now)
        let accepted = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    (try? checker.checkPromotionalOfferV1(
                        signature,
                        bundleId: Self.bundleId,
                        productId: Self.product,
                        offerId: Self.offer,
                        now: Self.now
                    )) != nil
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(accepted == 1)
    }
}

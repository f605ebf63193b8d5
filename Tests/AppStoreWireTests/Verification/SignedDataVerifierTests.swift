import AppStoreTestSigning
import AppStoreWire
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@Suite struct SignedDataVerifierTests {
    /// Runs `body` and returns the verification error it throws (failing the test when it succeeds).
    func failure(_ body: () async throws -> Void) async -> SignedDataVerificationError? {
        do {
            try await body()
            Issue.record("expected a verification failure")
            return nil
        } catch let error as SignedDataVerificationError {
            return error
        } catch {
            Issue.record("unexpected error type: \(error)")
            return nil
        }
    }

    func expectFailure(
        _ code: String,
        containing fragment: String? = nil,
        _ body: () async throws -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        guard let error = await failure(body) else { return }
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        if let fragment {
            #expect(error.message.contains(fragment), "message was: \(error.message)", sourceLocation: sourceLocation)
        }
    }

    /// Re-encodes one segment of a JWS.
    func replacingSegment(_ jws: String, at index: Int, with bytes: [UInt8]) -> String {
        var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[index] = Base64URL.encode(bytes)
        return parts.joined(separator: ".")
    }

    func segment(_ jws: String, _ index: Int) -> [UInt8] {
        Base64URL.decode(String(jws.split(separator: ".", omittingEmptySubsequences: false)[index]))!
    }

    // MARK: Tests

    @Test func verifiesEachKindOfPayload() async throws {
        let fixtures = try SigningFixtures()
        let verifier = try fixtures.verifier()

        let transaction = try await verifier.verifyTransaction(try fixtures.sign(SigningFixtures.transaction()))
        #expect(transaction.transactionId == "2000000123456789")
        #expect(transaction.productId == "com.example.monthly")
        #expect(transaction.type == .autoRenewable)
        #expect(transaction.price == 9990)
        #expect(transaction.signedDate == Date(timeIntervalSince1970: 1_767_225_600))

        let renewal = try await verifier.verifyRenewalInfo(try fixtures.sign(SigningFixtures.renewalInfo()))
        #expect(renewal.autoRenewProductId == "com.example.monthly")

        let signedTransaction = try fixtures.sign(SigningFixtures.transaction())
        let data: [String: Any] = [
            "bundleId": SigningFixtures.bundleId, "environment": "Sandbox", "bundleVersion": "1",
            "signedTransactionInfo": signedTransaction, "status": 1,
        ]
        let notification = try await verifier.verifyNotification(try fixtures.sign(SigningFixtures.notification(data: data)))
        #expect(notification.notificationType == .subscribed)
        #expect(notification.subtype == .initialBuy)
        #expect(notification.data?.signedTransactionInfo == signedTransaction)

        let app = try await verifier.verifyAppTransaction(try fixtures.sign(SigningFixtures.appTransaction()))
        #expect(app.appAppleId == SigningFixtures.appAppleId)
        #expect(verifier.cachedChainCount == 1)
    }

    @Test func tamperedPayloadFailsSignature() async throws {
        let fixtures = try SigningFixtures()
        let verifier = try fixtures.verifier()
        let jws = try fixtures.sign(SigningFixtures.transaction())
        var payload = String(decoding: segment(jws, 1), as: UTF8.self)
        payload = payload.replacingOccurrences(of: "com.example.monthly", with: "com.example.yearly1")
        let tampered = replacingSegment(jws, at: 1, with: Array(payload.utf8))
        await expectFailure("invalid_signature") { _ = try await verifier.verifyTransaction(tampered) }
        // The untampered original still verifies: the failure was the edit, not the fixture.
        _ = try await verifier.verifyTransaction(jws)
    }

    @Test func tamperedSignatureFails() async throws {
        let fixtures = try SigningFixtures()
        let verifier = try fixtures.verifier()
        let jws = try fixtures.sign(SigningFixtures.transaction())
        var signature = segment(jws, 2)
        signature[10] ^= 0x01
        await expectFailure("invalid_signature") {
            _ = try await verifier.verifyTransaction(replacingSegment(jws, at: 2, with: signature))
        }
        // A signature by another P-256 key over the same bytes.
        let other = try fixtures.sign(SigningFixtures.transaction(), key: P256.Signing.PrivateKey())
        await expectFailure("invalid_signature") { _ = try await verifier.verifyTransaction(other) }
    }

    @Test func refusesAlgorithmsOtherThanES256() async throws {
        let fixtures = try SigningFixtures()
        let verifier = try fixtures.verifier()
        let x5c = try fixtures.chain.x5c()
        let payload = try JSONSerialization.data(withJSONObject: SigningFixtures.transaction(), options: .sortedKeys)

        for alg in ["none", "HS256", "RS256", "ES384", "EdDSA", "es256"] {
            let header = try JSONSerialization.data(withJSONObject: ["alg": alg, "x5c": x5c], options: .sortedKeys)
            let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
            // HS256 keyed with the leaf's public key: the classic algorithm-confusion forgery.
            let publicKeyBytes = fixtures.chain.leafKey.publicKey.derRepresentation
            let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: publicKeyBytes))
            let forged = input + "." + Base64URL.encode(Array(mac) + Array(mac))
            await expectFailure("malformed", containing: "algorithm") { _ = try await verifier.verifyTransaction(forged) }
        }
        // alg none with the empty signature it calls for.
        let noneHeader = try JSONSerialization.data(withJSONObject: ["alg": "none"], options: .sortedKeys)
        let unsigned = Base64URL.encode(noneHeader) + "." + Base64URL.encode(payload) + "."
        await expectFailure("malformed") { _ = try await verifier.verifyTransaction(unsigned) }
    }

    @Test func requiresExactlyThreeCertificates() async throws {
        let fixtures = try SigningFixtures()
        let verifier = try fixtures.verifier()
        let x5c = try fixtures.chain.x5c()
        let payload = SigningFixtures.transaction()
        for chain in [Array(x5c.prefix(2)), x5c + [x5c[2]], [], Array(x5c.prefix(1))] {
            let jws = try fixtures.sign(payload, header: ["alg": "ES256", "x5c": chain])
            await expectFailure("malformed", containing: "x5c") { _ = try await verifier.verifyTransaction(jws) }
        }
        let noChain = try fixtures.sign(payload, header: ["alg": "ES256"])
        await expectFailure("malformed", containing: "x5c") { _ = try await verifier.verifyTransaction(noChain) }
    }

    @Test func requiresAppleMarkerExtensions() async throws {
        for (options, fragment) in [
            (AppStoreSigningChain.Options(leafMarker: false), "1.2.840.113635.100.6.11.1"),
            (AppStoreSigningChain.Options(intermediateMarker: false), "1.2.840.113635.100.6.2.1"),
        ] {
            let fixtures = try SigningFixtures(options)
            let verifier = try fixtures.verifier()
            let jws = try fixtures.sign(SigningFixtures.transaction())
            await expectFailure("invalid_certificate", containing: fragment) {
                _ = try await verifier.verifyTransaction(jws)
            }
        }
    }

    @Test func refusesChainToUnpinnedRoot() async throws {
        let pinned = try SigningFixtures()
        let attacker = try SigningFixtures(.init(name: "Attacker"))
        let verifier = try pinned.verifier()
        // A complete, self-consistent chain with Apple's markers, ending at a root nobody pinned.
        let jws = try attacker.sign(SigningFixtures.transaction())
        await expectFailure("invalid_certificate", containing: "pinned root") {
            _ = try await verifier.verifyTransaction(jws)
        }
        // Carrying the pinned root as x5c[2] does not help: the supplied root is never trusted.
        let attackerX5C = try attacker.chain.x5c()
        let spoofed = try attacker.sign(
            SigningFixtures.transaction(),
            header: ["alg": "ES256", "x5c": [attackerX5C[0], attackerX5C[1], try pinned.chain.x5c()[2]]]
        )
        await expectFailure("invalid_certificate") { _ = try await verifier.verifyTransaction(spoofed) }
        // Whereas a genuine chain is accepted whatever its x5c[2] holds, because x5c[2] is ignored.
        let genuine = try pinned.chain.x5c()
        let odd = try pinned.sign(
            SigningFixtures.transaction(),
            header: ["alg": "ES256", "x5c": [genuine[0], genuine[1], attackerX5C[2]]]
        )
        _ = try await verifier.verifyTransaction(odd)
    }

    @Test func checksValidityAtSignedDate() async throws {
        // Certificates valid for 2025 only.
        let window = Date(timeIntervalSince1970: 1_735_689_600)...Date(timeIntervalSince1970: 1_767_225_599)
        let fixtures = try SigningFixtures(.init(validity: window))
        let verifier = try fixtures.verifier()
        let inside: Int64 = 1_750_000_000_000
        // Signed while valid: still verifies today, after the certificates expired.
        _ = try await verifier.verifyTransaction(try fixtures.sign(SigningFixtures.transaction(signedDate: inside)))
        // ...but not when the caller asks for "now".
        let strict = try fixtures.verifier(validationTime: .now)
        await expectFailure("invalid_certificate", containing: "expired") {
            _ = try await strict.verifyTransaction(try fixtures.sign(SigningFixtures.transaction(signedDate: inside)))
        }
        // Signed after expiry, even with the chain already cached.
        await expectFailure("invalid_certificate", containing: "expired") {
            _ = try await verifier.verifyTransaction(
                try fixtures.sign(SigningFixtures.transaction(signedDate: 1_770_000_000_000))
            )
        }
        // Signed before the certificates were valid.
        await expectFailure("invalid_certificate", containing: "not valid until") {
            _ = try await verifier.verifyTransaction(
                try fixtures.sign(SigningFixtures.transaction(signedDate: 1_700_000_000_000))
            )
        }
    }

    @Test func expiredIntermediateOrRootFails() async throws {
        let fixtures = try SigningFixtures()
        var options = AppStoreSigningChain.Options()
        options.intermediateValidity = Date(timeIntervalSince1970: 1_600_000_000)...Date(timeIntervalSince1970: 1_700_000_000)
        let shortIntermediate = try AppStoreSigningChain.make(
            options,
            rootKey: fixtures.chain.rootKey,
            intermediateKey: fixtures.chain.intermediateKey,
            leafKey: fixtures.chain.leafKey
        )
        let jws = try fixtures.sign(
            SigningFixtures.transaction(),
            header: ["alg": "ES256", "x5c": try shortIntermediate.x5c()]
        )
        let verifier = try SignedDataVerifier(
            configuration: .init(
                bundleId: SigningFixtures.bundleId,
                roots: try TrustedRoots.only([shortIntermediate.root]),
                deployment: .development
            )
        )
        await expectFailure("invalid_certificate", containing: "intermediate certificate expired") {
            _ = try await verifier.verifyTransaction(jws)
        }

        var rootOptions = AppStoreSigningChain.Options()
        rootOptions.rootValidity = Date(timeIntervalSince1970: 1_600_000_000)...Date(timeIntervalSince1970: 1_700_000_000)
        let shortRoot = try SigningFixtures(rootOptions)
        await expectFailure("invalid_certificate", containing: "pinned root") {
            _ = try await shortRoot.verifier().verifyTransaction(try shortRoot.sign(SigningFixtures.transaction()))
        }
    }

    @Test func checksTheAppsIdentity() async throws {
        let fixtures = try SigningFixtures()
        let verifier = try fixtures.verifier()
        await expectFailure("wrong_app", containing: "com.example.other") {
            _ = try await verifier.verifyTransaction(
                try fixtures.sign(SigningFixtures.transaction(bundleId: "com.example.other"))
            )
        }
        let sandboxOnly = try fixtures.verifier(environments: [.sandbox])
        await expectFailure("wrong_environment", containing: "Production") {
            _ = try await sandboxOnly.verifyTransaction(
                try fixtures.sign(SigningFixtures.transaction(environment: "Production"))
            )
        }
        var app = SigningFixtures.appTransaction()
        app["appAppleId"] = 999
        await expectFailure("wrong_app", containing: "appAppleId") {
            _ = try await verifier.verifyAppTransaction(try fixtures.sign(app))
        }
        let data: [String: Any] = ["bundleId": SigningFixtures.bundleId, "environment": "Production", "appAppleId": 42]
        await expectFailure("wrong_app", containing: "appAppleId") {
            _ = try await verifier.verifyNotification(
                try fixtures.sign(SigningFixtures.notification(data: data, type: "TEST", subtype: nil))
            )
        }
        // Xcode and LocalTesting data is refused unless explicitly enabled.
        for environment in ["Xcode", "LocalTesting"] {
            await expectFailure("wrong_environment") {
                _ = try await verifier.verifyTransaction(
                    try fixtures.sign(SigningFixtures.transaction(environment: environment))
                )
            }
        }
    }

    @Test func refusesMalformedInput() async throws {
        let fixtures = try SigningFixtures()
        let verifier = try fixtures.verifier()
        let jws = try fixtures.sign(SigningFixtures.transaction())
        let parts = jws.split(separator: ".").map(String.init)
        let cases: [(String, String)] = [
            ("", "empty"),
            ("abc", "three"),
            ("a.b", "three"),
            ("a.b.c.d", "more than three"),
            ("..", "empty"),
            (parts[0] + "..", "empty"),
            ("!!!!." + parts[1] + "." + parts[2], "header is not base64url"),
            (parts[0] + ".a*b." + parts[2], "payload is not base64url"),
            (parts[0] + "." + parts[1] + ".=====", "signature is not base64url"),
            (parts[0] + "." + Base64URL.encode(Array("{not json".utf8)) + "." + parts[2], "not a valid"),
            (parts[0] + "." + Base64URL.encode(Array("[1,2]".utf8)) + "." + parts[2], "not a valid"),
            (Base64URL.encode(Array("[]".utf8)) + "." + parts[1] + "." + parts[2], "header"),
            (parts[0] + "." + parts[1] + "." + Base64URL.encode([1, 2, 3]), "64 bytes"),
            (parts[0] + "." + Base64URL.encode(Array(#"{"signedDate":"yesterday"}"#.utf8)) + "." + parts[2], "signedDate"),
        ]
        for (input, fragment) in cases {
            await expectFailure("malformed", containing: fragment) { _ = try await verifier.verifyTransaction(input) }
        }
        // Standard-alphabet base64 in x5c is required; a corrupt certificate is a certificate error.
        let badCertificate = try fixtures.sign(
            SigningFixtures.transaction(),
            header: ["alg": "ES256", "x5c": ["AAAA", "AAAA", "AAAA"]]
        )
        await expectFailure("invalid_certificate") { _ = try await verifier.verifyTransaction(badCertificate) }
    }

    @Test func refusesOversizedInput() async throws {
        let fixtures = try SigningFixtures()
        let verifier = try fixtures.verifier(maximumInputSize: 8 * 1024)
        var payload = SigningFixtures.transaction()
        payload["padding"] = String(repeating: "x", count: 16 * 1024)
        await expectFailure("malformed", containing: "limit") {
            _ = try await verifier.verifyTransaction(try fixtures.sign(payload))
        }
        await expectFailure("malformed", containing: "limit") {
            _ = try await verifier.verifyTransaction(String(repeating: "A", count: 10_000_000))
        }
    }

    @Test func cachesChainsAndSharesThemAcrossTasks() async throws {
        let fixtures = try SigningFixtures()
        let verifier = try fixtures.verifier()
        let jws = try fixtures.sign(SigningFixtures.transaction())
        let verified = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<50 { _ = try await verifier.verifyTransaction(jws) }
                    return 50
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(verified == 400)
        #expect(verifier.cachedChainCount == 1)
        // A cached chain does not excuse a bad signature.
        var signature = segment(jws, 2)
        signature[0] ^= 0xFF
        await expectFailure("invalid_signature") {
            _ = try await verifier.verifyTransaction(replacingSegment(jws, at: 2, with: signature))
        }
    }

    @Test func cacheIsBounded() async throws {
        let verifierFixtures = try SigningFixtures()
        var roots: [Certificate] = []
        var signed: [String] = []
        for index in 0..<40 {
            let fixtures = try SigningFixtures(.init(name: "Chain \(index)"))
            roots.append(fixtures.chain.root)
            signed.append(try fixtures.sign(SigningFixtures.transaction()))
        }
        let verifier = try SignedDataVerifier(
            configuration: .init(
                bundleId: SigningFixtures.bundleId,
                roots: try TrustedRoots.only(roots + [verifierFixtures.chain.root]),
                deployment: .development,
                chainCacheCapacity: 16
            )
        )
        for jws in signed { _ = try await verifier.verifyTransaction(jws) }
        #expect(verifier.cachedChainCount <= 16)
        #expect(verifier.cachedChainCount > 0)
    }

    @Test func productionConfigurationPinsOnlyApple() throws {
        let fixtures = try SigningFixtures()
        #expect(throws: SignedDataVerifier.ConfigurationError.self) {
            try SignedDataVerifier(
                configuration: .init(
                    bundleId: "b",
                    appAppleId: 1,
                    roots: try TrustedRoots.apple(adding: [fixtures.chain.root]),
                    deployment: .production
                )
            )
        }
        #expect(throws: SignedDataVerifier.ConfigurationError.self) {
            try SignedDataVerifier(
                configuration: .init(
                    bundleId: "b",
                    appAppleId: 1,
                    environments: [.production, .xcode],
                    roots: try TrustedRoots.apple(),
                    deployment: .production
                )
            )
        }
        #expect(throws: SignedDataVerifier.ConfigurationError.self) {
            try SignedDataVerifier(configuration: .init(bundleId: "b", roots: try TrustedRoots.apple(), deployment: .production))
        }
        let production = try SignedDataVerifier(
            configuration: .init(bundleId: "b", appAppleId: 1, roots: try TrustedRoots.apple(), deployment: .production)
        )
        #expect(production.configuration.roots.isAppleOnly)
    }

    @Test func defaultDeploymentIsProduction() throws {
        let fixtures = try SigningFixtures()
        // Forgetting to choose a deployment must not quietly allow a test root.
        #expect(throws: SignedDataVerifier.ConfigurationError.self) {
            try SignedDataVerifier(
                configuration: .init(bundleId: "b", appAppleId: 1, roots: try TrustedRoots.only([fixtures.chain.root]))
            )
        }
        #expect(throws: SignedDataVerifier.ConfigurationError.self) {
            try SignedDataVerifier(configuration: .init(bundleId: nil, appAppleId: 1, roots: try TrustedRoots.apple()))
        }
    }

    @Test func paddedSegmentsAreRefused() async throws {
        let fixtures = try SigningFixtures()
        let verifier = try fixtures.verifier()
        let jws = try fixtures.sign(SigningFixtures.transaction())
        _ = try await verifier.verifyTransaction(jws)
        // The 64-byte signature encodes to 86 characters; "==" makes a second spelling of the same bytes.
        await expectFailure("malformed", containing: "signature") { _ = try await verifier.verifyTransaction(jws + "==") }
    }

    @Test func builtInAppleRootMatchesItsFingerprint() throws {
        let root = try AppleRootCertificates.appleRootCAG3()
        let fingerprint = SHA256.hash(data: try root.derBytes()).map { String(format: "%02X", $0) }.joined()
        #expect(fingerprint == AppleRootCertificates.appleRootCAG3SHA256Fingerprint)
        #expect(root.subject.description.contains("Apple Root CA - G3"))
    }

    @Test(.enabled(if: TestVectors.referenceAvailable))
    func realAppleIntermediateValidatesToBuiltInRoot() async throws {
        let pem = try String(
            contentsOf: TestVectors.reference.appendingPathComponent("certs/AppleWWDRCA-G6.pem"),
            encoding: .utf8
        )
        let intermediate = try Certificate(pemEncoded: pem)
        var verifier = Verifier(rootCertificates: CertificateStore(try TrustedRoots.apple().certificates)) {
            RFC5280Policy()
        }
        let result = await verifier.validate(leaf: intermediate, intermediates: CertificateStore())
        guard case .validCertificate(let chain) = result else {
            Issue.record("Apple WWDR G6 did not validate to the built-in root: \(result)")
            return
        }
        #expect(Array(chain).count == 2)
        #expect(intermediate.extensions[oid: [1, 2, 840, 113635, 100, 6, 2, 1]] != nil)
        // And an unrelated root does not validate it.
        let other = try SigningFixtures()
        var wrong = Verifier(rootCertificates: CertificateStore([other.chain.root])) { RFC5280Policy() }
        guard case .couldNotValidate = await wrong.validate(leaf: intermediate, intermediates: CertificateStore()) else {
            Issue.record("validated against the wrong root")
            return
        }
    }

    @Test func xcodeDataOnlyWhenExplicitlyEnabled() async throws {
        let fixtures = try SigningFixtures()
        let selfSigned = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("StoreKit Testing in Xcode") }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(selfSigned.publicKey),
            notValidBefore: Date(timeIntervalSince1970: 0),
            notValidAfter: Date(timeIntervalSince1970: 4_000_000_000),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: .init(),
            issuerPrivateKey: .init(selfSigned)
        )
        let x5c = [Data(try certificate.derBytes()).base64EncodedString()]
        let jws = try fixtures.sign(
            SigningFixtures.transaction(environment: "Xcode"),
            header: ["alg": "ES256", "x5c": x5c],
            key: selfSigned
        )
        await expectFailure("wrong_environment") { _ = try await fixtures.verifier().verifyTransaction(jws) }
        let enabled = try fixtures.verifier(environments: [.xcode])
        let transaction = try await enabled.verifyTransaction(jws)
        #expect(transaction.environment == .xcode)
        #expect(enabled.cachedChainCount == 0)
        // Even enabled, the signature must match the certificate it carries.
        let forged = try fixtures.sign(
            SigningFixtures.transaction(environment: "Xcode"),
            header: ["alg": "ES256", "x5c": x5c]
        )
        await expectFailure("invalid_signature") { _ = try await enabled.verifyTransaction(forged) }
    }
}

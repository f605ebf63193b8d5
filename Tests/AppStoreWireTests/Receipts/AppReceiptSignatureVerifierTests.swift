import AppStoreTestSigning
import AppStoreWire
import Crypto
import Foundation
import SwiftASN1
import Testing
@_spi(CMS) import X509  // CMS.sign, to check receipts signed by a standard CMS implementation

@Suite struct AppReceiptSignatureVerifierTests {
    static let creationDate = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14

    static func payload(creationDate: Date = creationDate, bundleId: String = "com.example.signed") throws -> [UInt8] {
        var receipt = AppReceipt()
        receipt.bundleId = bundleId
        receipt.appVersion = "7"
        receipt.creationDate = creationDate
        var purchase = AppReceiptInAppPurchase()
        purchase.transactionId = "1000000000000001"
        purchase.productId = "com.example.lifetime"
        purchase.quantity = 1
        receipt.inAppPurchases = [purchase]
        return try ReceiptTestBuilder.payload(ReceiptTestBuilder.attributes(for: receipt))
    }

    /// A receipt signed the way Apple signs: RSA, SignerInfo naming only `rsaEncryption`, no signed attributes.
    static func appleStyleReceipt(
        pki: ReceiptTestPKI,
        digestOID: ASN1ObjectIdentifier,
        algorithm: Certificate.SignatureAlgorithm,
        content: [UInt8],
        signedBytesOverride: [UInt8]? = nil
    ) throws -> [UInt8] {
        try ReceiptTestBuilder.signedData(
            content: content,
            certificates: [pki.leaf, pki.intermediate, pki.root],
            signer: .init(
                certificate: pki.leaf,
                key: pki.leafKey,
                algorithm: algorithm,
                digestOID: digestOID,
                signatureOID: ReceiptTestBuilder.rsaEncryptionOID,
                signedBytesOverride: signedBytesOverride
            )
        )
    }

    static func reason(_ error: AppReceiptError?) -> String { error.map(String.init(describing:)) ?? "no error" }

    @Test(arguments: [
        (ReceiptTestBuilder.sha1OID, Certificate.SignatureAlgorithm.sha1WithRSAEncryption),
        (ReceiptTestBuilder.sha256OID, Certificate.SignatureAlgorithm.sha256WithRSAEncryption),
    ])
    func appleStyleRSAReceiptVerifies(
        digestOID: ASN1ObjectIdentifier,
        algorithm: Certificate.SignatureAlgorithm
    )
        async throws
    {
        let pki = try ReceiptTestPKI.make(rsa: true)
        let bytes = try Self.appleStyleReceipt(
            pki: pki,
            digestOID: digestOID,
            algorithm: algorithm,
            content: Self.payload()
        )
        let verifier = AppReceiptSignatureVerifier(trustedRoots: [pki.root])
        let receipt = try await verifier.verify(bytes)
        #expect(receipt.bundleId == "com.example.signed")
        #expect(receipt.inAppPurchases.first?.transactionId == "1000000000000001")
        #expect(try await verifier.verify(base64Encoded: Data(bytes).base64EncodedString()) == receipt)
    }

    @Test func genuineReceiptOfAnotherAppIsRejected() async throws {
        let pki = try ReceiptTestPKI.make(rsa: true)
        let bytes = try Self.appleStyleReceipt(
            pki: pki,
            digestOID: ReceiptTestBuilder.sha256OID,
            algorithm: .sha256WithRSAEncryption,
            content: Self.payload(bundleId: "com.example.cheaper")
        )
        let verifier = AppReceiptSignatureVerifier(trustedRoots: [pki.root], bundleId: "com.example.signed")
        do {
            _ = try await verifier.verify(bytes)
            Issue.record("another app's receipt verified")
        } catch {
            guard case .wrongApp(let reason) = error else {
                Issue.record("expected wrongApp, got \(error)")
                return
            }
            #expect(reason.contains("com.example.cheaper"))
        }
        // The same receipt is accepted for its own app.
        let own = AppReceiptSignatureVerifier(trustedRoots: [pki.root], bundleId: "com.example.cheaper")
        #expect(try await own.verify(bytes).bundleId == "com.example.cheaper")
    }

    @Test func builtInAppleIncRootIsPinnedAndRejectsTestReceipts() async throws {
        let root = try AppleRootCertificates.appleIncRoot()
        let fingerprint = SHA256.hash(data: try root.derBytes()).map { String(format: "%02X", $0) }.joined()
        #expect(fingerprint == AppleRootCertificates.appleIncRootSHA256Fingerprint)
        let pki = try ReceiptTestPKI.make(rsa: true)
        let bytes = try Self.appleStyleReceipt(
            pki: pki,
            digestOID: ReceiptTestBuilder.sha256OID,
            algorithm: .sha256WithRSAEncryption,
            content: Self.payload()
        )
        let apple = try AppReceiptSignatureVerifier.apple(bundleId: "com.example.signed")
        do {
            _ = try await apple.verify(bytes)
            Issue.record("a test-signed receipt verified against Apple Inc. Root")
        } catch {
            guard case .untrustedCertificateChain = error else {
                Issue.record("expected untrustedCertificateChain, got \(error)")
                return
            }
        }
    }

    @Test func cmsSignedReceiptWithSignedAttributesVerifies() async throws {
        // swift-certificates' own CMS signer: ECDSA, signed attributes (content type, digest, signing time).
        let pki = try ReceiptTestPKI.make(rsa: false)
        let bytes = try CMS.sign(
            Self.payload(),
            additionalIntermediateCertificates: [pki.intermediate],
            certificate: pki.leaf,
            privateKey: pki.leafKey,
            signingTime: Self.creationDate,
            detached: false
        )
        let verifier = AppReceiptSignatureVerifier(trustedRoots: [pki.root])
        #expect(try await verifier.verify(bytes).bundleId == "com.example.signed")

        // The same without signed attributes.
        let plain = try CMS.sign(
            Self.payload(),
            additionalIntermediateCertificates: [pki.intermediate],
            certificate: pki.leaf,
            privateKey: pki.leafKey,
            detached: false
        )
        #expect(try await verifier.verify(plain).bundleId == "com.example.signed")
    }

    @Test func wrongRootIsRejected() async throws {
        let pki = try ReceiptTestPKI.make(rsa: true)
        let bytes = try Self.appleStyleReceipt(
            pki: pki,
            digestOID: ReceiptTestBuilder.sha256OID,
            algorithm: .sha256WithRSAEncryption,
            content: Self.payload()
        )
        // An unrelated root, and an impostor with the same name but another key.
        let unrelated = try ReceiptTestPKI.make(rsa: false, rootName: "Some Other Root").root
        let impostor = try ReceiptTestPKI.make(rsa: false).root
        for root in [unrelated, impostor] {
            let error = await #expect(throws: AppReceiptError.self) {
                try await AppReceiptSignatureVerifier(trustedRoots: [root]).verify(bytes)
            }
            guard case .untrustedCertificateChain? = error else {
                Issue.record("expected an untrusted chain, got \(Self.reason(error))")
                continue
            }
        }
        // No roots at all trusts nothing.
        await #expect(throws: AppReceiptError.self) {
            try await AppReceiptSignatureVerifier(trustedRoots: []).verify(bytes)
        }
    }

    @Test func signerWithoutTheReceiptSigningMarkerIsRejected() async throws {
        // Like a developer's own certificate under Apple's root: a valid chain, but not a receipt signer.
        let pki = try ReceiptTestPKI.make(rsa: true, markLeaf: false)
        let bytes = try Self.appleStyleReceipt(
            pki: pki,
            digestOID: ReceiptTestBuilder.sha256OID,
            algorithm: .sha256WithRSAEncryption,
            content: Self.payload()
        )
        let error = await #expect(throws: AppReceiptError.self) {
            try await AppReceiptSignatureVerifier(trustedRoots: [pki.root]).verify(bytes)
        }
        guard case .untrustedCertificateChain(let reason)? = error else {
            Issue.record("expected an untrusted chain, got \(Self.reason(error))")
            return
        }
        #expect(reason.contains("1.2.840.113635.100.6.11.1"))
        // Callers can waive the marker for their own signers.
        let relaxed = AppReceiptSignatureVerifier(trustedRoots: [pki.root], requiredSignerExtensions: [])
        #expect(try await relaxed.verify(bytes).bundleId == "com.example.signed")
    }

    @Test func tamperedContentIsRejected() async throws {
        let pki = try ReceiptTestPKI.make(rsa: true)
        let genuine = try Self.payload(bundleId: "com.example.signed")
        let tampered = try Self.payload(bundleId: "com.example.signeD")
        #expect(genuine.count == tampered.count)
        let bytes = try Self.appleStyleReceipt(
            pki: pki,
            digestOID: ReceiptTestBuilder.sha256OID,
            algorithm: .sha256WithRSAEncryption,
            content: tampered,
            signedBytesOverride: genuine
        )
        // It still parses; only the signature check catches it.
        #expect(try AppReceiptParser().parse(bytes).bundleId == "com.example.signeD")
        let error = await #expect(throws: AppReceiptError.self) {
            try await AppReceiptSignatureVerifier(trustedRoots: [pki.root]).verify(bytes)
        }
        guard case .invalidSignature? = error else {
            Issue.record("expected an invalid signature, got \(Self.reason(error))")
            return
        }
    }

    @Test func tamperedCMSContentIsRejected() async throws {
        // Flip one byte of the bundle identifier inside a CMS-signed receipt with signed attributes.
        let pki = try ReceiptTestPKI.make(rsa: false)
        var bytes = try CMS.sign(
            Self.payload(),
            additionalIntermediateCertificates: [pki.intermediate],
            certificate: pki.leaf,
            privateKey: pki.leafKey,
            signingTime: Self.creationDate,
            detached: false
        )
        let needle = Array("com.example.signed".utf8)
        let index = try #require(bytes.firstRange(of: needle)).lowerBound
        bytes[index] = UInt8(ascii: "C")
        #expect(try AppReceiptParser().parse(bytes).bundleId == "Com.example.signed")
        await #expect(throws: AppReceiptError.self) {
            try await AppReceiptSignatureVerifier(trustedRoots: [pki.root]).verify(bytes)
        }
    }

    @Test func chainIsValidatedAtTheReceiptCreationDate() async throws {
        // Certificates valid 2020-09 … 2023-12; the receipt was created inside that window.
        let validity = Date(timeIntervalSince1970: 1_600_000_000)...Date(timeIntervalSince1970: 1_702_000_000)
        let pki = try ReceiptTestPKI.make(rsa: true, validity: validity)
        let verifier = AppReceiptSignatureVerifier(trustedRoots: [pki.root])
        let inside = try Self.appleStyleReceipt(
            pki: pki,
            digestOID: ReceiptTestBuilder.sha1OID,
            algorithm: .sha1WithRSAEncryption,
            content: Self.payload(creationDate: Self.creationDate)
        )
        // Verifies today although the chain has long expired: what counts is when the receipt was made.
        #expect(try await verifier.verify(inside).creationDate == Self.creationDate)
        // An explicit validation time overrides the receipt's date.
        await #expect(throws: AppReceiptError.self) { try await verifier.verify(inside, validationTime: Date()) }

        let after = try Self.appleStyleReceipt(
            pki: pki,
            digestOID: ReceiptTestBuilder.sha1OID,
            algorithm: .sha1WithRSAEncryption,
            content: Self.payload(creationDate: Date(timeIntervalSince1970: 1_710_000_000))
        )
        let error = await #expect(throws: AppReceiptError.self) { try await verifier.verify(after) }
        guard case .untrustedCertificateChain? = error else {
            Issue.record("expected an untrusted chain, got \(Self.reason(error))")
            return
        }
    }

    @Test func leafIssuedByANonCAIsRejected() async throws {
        // Chain-shift forgery: a genuine end-entity certificate of the hierarchy "issues" a new signing cert.
        let pki = try ReceiptTestPKI.make(rsa: false)
        let forgerKey = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let forgedLeaf = try ReceiptTestPKI.certificate(
            subject: DistinguishedName { CommonName("Forged Signing") },
            key: forgerKey.publicKey,
            issuer: pki.leaf.subject,
            issuerKey: pki.leafKey,
            isCA: false,
            algorithm: .ecdsaWithSHA256,
            validity: pki.leaf.notValidBefore...pki.leaf.notValidAfter,
            receiptSigner: true  // so that only the CA check can catch it
        )
        let bytes = try ReceiptTestBuilder.signedData(
            content: Self.payload(),
            certificates: [forgedLeaf, pki.leaf, pki.intermediate],
            signer: .init(
                certificate: forgedLeaf,
                key: forgerKey,
                algorithm: .ecdsaWithSHA256,
                digestOID: ReceiptTestBuilder.sha256OID,
                signatureOID: ReceiptTestBuilder.ecdsaWithSHA256OID
            )
        )
        let error = await #expect(throws: AppReceiptError.self) {
            try await AppReceiptSignatureVerifier(trustedRoots: [pki.root]).verify(bytes)
        }
        guard case .untrustedCertificateChain? = error else {
            Issue.record("expected an untrusted chain, got \(Self.reason(error))")
            return
        }
    }

    @Test func unsignedOrMismatchedSignerInfosAreRejected() async throws {
        let pki = try ReceiptTestPKI.make(rsa: true)
        let verifier = AppReceiptSignatureVerifier(trustedRoots: [pki.root])
        let unsigned = try ReceiptTestBuilder.signedData(content: Self.payload(), certificates: [pki.leaf])
        let signerNotEmbedded = try ReceiptTestBuilder.signedData(
            content: Self.payload(),
            certificates: [pki.intermediate],
            signer: .init(
                certificate: pki.leaf,
                key: pki.leafKey,
                algorithm: .sha256WithRSAEncryption,
                digestOID: ReceiptTestBuilder.sha256OID,
                signatureOID: ReceiptTestBuilder.rsaEncryptionOID
            )
        )
        let contradictoryDigest = try ReceiptTestBuilder.signedData(
            content: Self.payload(),
            certificates: [pki.leaf, pki.intermediate],
            signer: .init(
                certificate: pki.leaf,
                key: pki.leafKey,
                algorithm: .sha256WithRSAEncryption,
                digestOID: ReceiptTestBuilder.sha1OID,
                signatureOID: ReceiptTestBuilder.sha256WithRSAOID
            )
        )
        // More certificates than any real receipt carries (chain building cost grows factorially with them).
        let crowded = try ReceiptTestBuilder.signedData(
            content: Self.payload(),
            certificates: [pki.leaf, pki.intermediate] + Array(repeating: pki.root, count: 4),
            signer: .init(
                certificate: pki.leaf,
                key: pki.leafKey,
                algorithm: .sha256WithRSAEncryption,
                digestOID: ReceiptTestBuilder.sha256OID,
                signatureOID: ReceiptTestBuilder.rsaEncryptionOID
            )
        )
        for bytes in [unsigned, signerNotEmbedded, contradictoryDigest, crowded] {
            let error = await #expect(throws: AppReceiptError.self) { try await verifier.verify(bytes) }
            guard case .invalidSignature? = error else {
                Issue.record("expected an invalid signature, got \(Self.reason(error))")
                continue
            }
        }
    }

    @Test(.enabled(if: TestVectors.available))
    func xcodeReceiptVerifiesAgainstItsOwnStoreKitCertificate() async throws {
        // Xcode signs with a self-signed "StoreKit" certificate embedded in the receipt (BER, indefinite lengths).
        let text = try TestVectors.string("xcode/xcode-app-receipt-with-transaction")
        let bytes = Array(try #require(Data(base64Encoded: text, options: .ignoreUnknownCharacters)))
        let storeKit = try Self.firstEmbeddedCertificate(bytes)
        let xcodeVerifier = AppReceiptSignatureVerifier(trustedRoots: [storeKit], requiredSignerExtensions: [])
        let receipt = try await xcodeVerifier.verify(bytes)
        #expect(receipt.inAppPurchases.first?.transactionId == "0")

        // Apple's root (or any other) does not vouch for Xcode's certificate.
        let other = try ReceiptTestPKI.make(rsa: true).root
        await #expect(throws: AppReceiptError.self) {
            try await AppReceiptSignatureVerifier(trustedRoots: [other], requiredSignerExtensions: []).verify(bytes)
        }
        // Xcode's certificate is not an Apple receipt signer, so the default verifier refuses it even as a root.
        await #expect(throws: AppReceiptError.self) {
            try await AppReceiptSignatureVerifier(trustedRoots: [storeKit]).verify(bytes)
        }
        // One changed byte of the payload breaks the signature.
        var tampered = bytes
        let index = try #require(tampered.firstRange(of: Array("pass.premium".utf8))).lowerBound
        tampered[index] = UInt8(ascii: "P")
        await #expect(throws: AppReceiptError.self) {
            try await xcodeVerifier.verify(tampered)
        }
    }

    /// ContentInfo → [0] → SignedData → the `[0] certificates` element → its first certificate.
    /// (swift-certificates' CMS reader rejects Xcode's constructed OCTET STRING, so walk the nodes directly.)
    static func firstEmbeddedCertificate(_ bytes: [UInt8]) throws -> Certificate {
        func children(_ node: ASN1Node) throws -> [ASN1Node] {
            guard case .constructed(let nodes) = node.content else {
                throw ASN1Error.invalidASN1Object(reason: "primitive")
            }
            return Array(nodes)
        }
        let signedData = try children(children(BER.parse(bytes))[1])[0]
        let certificates = try #require(
            children(signedData).first { $0.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) }
        )
        return try Certificate(derEncoded: Array(try children(certificates)[0].encodedBytes))
    }

    @Test func derRootsAreAccepted() async throws {
        let pki = try ReceiptTestPKI.make(rsa: true)
        let verifier = try AppReceiptSignatureVerifier(trustedRootsDER: [ReceiptTestBuilder.der(pki.root)])
        let bytes = try Self.appleStyleReceipt(
            pki: pki,
            digestOID: ReceiptTestBuilder.sha256OID,
            algorithm: .sha256WithRSAEncryption,
            content: Self.payload()
        )
        #expect(try await verifier.verify(bytes).appVersion == "7")
    }
}

import AppStoreSimulator
import AppStoreWire
import Foundation
import Testing
import X509
import _CryptoExtras

@Suite struct ReceiptSigningIdentityTests {
    typealias F = ReceiptFixtures

    @Test func chainIsShapedLikeApplesReceiptChain() throws {
        let identity = try F.identity()
        #expect(identity.root.subject.description.contains("CN=Storekeeper Inc. Root"))
        #expect(identity.root.issuer == identity.root.subject)
        #expect(identity.intermediate.issuer == identity.root.subject)
        #expect(identity.leaf.issuer == identity.intermediate.subject)
        for certificate in [identity.root, identity.intermediate, identity.leaf] {
            #expect(certificate.signatureAlgorithm == .sha256WithRSAEncryption)
        }
        #expect(identity.intermediate.extensions[oid: ReceiptSigningIdentity.intermediateMarker] != nil)
        #expect(identity.leaf.extensions[oid: ReceiptSigningIdentity.receiptSigningMarker] != nil)
        #expect(identity.leaf.extensions[oid: ReceiptSigningIdentity.intermediateMarker] == nil)
        #expect(try identity.leaf.extensions.basicConstraints == .notCertificateAuthority)
        #expect(try identity.intermediate.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: 0))
        #expect(identity.rootKey.keySizeInBits == 2048)
        #expect(identity.leafKey.keySizeInBits == 2048)
        #expect(try identity.rootPEM().hasPrefix("-----BEGIN CERTIFICATE-----"))
    }

    /// Every common name of a certificate's subject.
    static func commonNames(_ certificate: Certificate) -> [String] {
        certificate.subject.flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }.map { attribute in
            // The value prints as the bare string for UTF8String / PrintableString names.
            String(describing: attribute.value)
        }
    }

    @Test func commonNamesStayWithinX509sUpperBound() throws {
        let identity = try F.identity()
        for certificate in [identity.root, identity.intermediate, identity.leaf] {
            let names = Self.commonNames(certificate)
            #expect(names.count == 1)
            // RFC 5280 ub-common-name: 64 characters.
            #expect(names.allSatisfy { $0.count <= 64 }, "\(names)")
        }
        // Even a long chain name keeps every common name within the bound.
        let long = try ReceiptSigningIdentity.make(
            .init(name: String(repeating: "Long Name ", count: 8)),
            rootKey: identity.rootKey,
            intermediateKey: identity.intermediateKey,
            leafKey: identity.leafKey
        )
        for certificate in [long.root, long.intermediate, long.leaf] {
            #expect(Self.commonNames(certificate).allSatisfy { $0.count <= 64 })
        }
    }

    @Test func intermediateAndLeafNameAnOCSPResponderAsApplesDo() async throws {
        let identity = try F.identity()
        let ocsp = AuthorityInformationAccess.AccessDescription(
            method: .ocspServer,
            location: .uniformResourceIdentifier(SimulatorSigningChain.defaultOCSPURL)
        )
        for certificate in [identity.intermediate, identity.leaf] {
            let access = try #require(try certificate.extensions.authorityInformationAccess)
            #expect(Array(access) == [ocsp])
            #expect(certificate.extensions[oid: .X509ExtensionID.authorityInformationAccess]?.critical == false)
        }
        #expect(try identity.root.extensions.authorityInformationAccess == nil)
        // The address is configurable, and can be left out.
        let custom = try ReceiptSigningIdentity.make(
            .init(ocspURL: "http://simulator.test/ocsp"),
            rootKey: identity.rootKey,
            intermediateKey: identity.intermediateKey,
            leafKey: identity.leafKey
        )
        #expect(
            try custom.leaf.extensions.authorityInformationAccess.map(Array.init)?.first?.location
                == .uniformResourceIdentifier("http://simulator.test/ocsp")
        )
        let bare = try ReceiptSigningIdentity.make(
            .init(ocspURL: nil),
            rootKey: identity.rootKey,
            intermediateKey: identity.intermediateKey,
            leafKey: identity.leafKey
        )
        #expect(try bare.leaf.extensions.authorityInformationAccess == nil)
        // Receipts signed by the chain still verify.
        let receipt = try F.builder(identity: identity).build(transactions: F.transactions())
        let parsed = try await AppReceiptSignatureVerifier(trustedRoots: [identity.root], bundleId: F.bundleId).verify(receipt.der)
        #expect(parsed.bundleId == F.bundleId)
    }

    @Test func certificatesAreReproducibleFromPEMKeys() throws {
        let identity = try F.identity()
        let files = try identity.pemFiles()
        let rebuilt = try ReceiptSigningIdentity(
            rootKeyPEM: try #require(files[ReceiptSigningIdentity.rootKeyFile]),
            intermediateKeyPEM: try #require(files[ReceiptSigningIdentity.intermediateKeyFile]),
            leafKeyPEM: try #require(files[ReceiptSigningIdentity.leafKeyFile])
        )
        #expect(rebuilt.root == identity.root)
        #expect(rebuilt.intermediate == identity.intermediate)
        #expect(rebuilt.leaf == identity.leaf)
        #expect(try rebuilt.pemFiles() == files)
    }

    @Test func persistsInADirectory() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("receipt-identity-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }

        let created = try ReceiptSigningIdentity.loadOrGenerate(in: directory)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let expectedNames = try created.pemFiles().keys.sorted()
        #expect(names == expectedNames)
        let keyAttributes = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent(ReceiptSigningIdentity.leafKeyFile).path
        )
        #expect((keyAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let loaded = try ReceiptSigningIdentity.loadOrGenerate(in: directory)
        #expect(loaded.root == created.root && loaded.intermediate == created.intermediate)
        #expect(loaded.leaf == created.leaf)

        // Without the certificates, the keys alone give the same chain back.
        for name in [
            ReceiptSigningIdentity.rootCertificateFile, ReceiptSigningIdentity.intermediateCertificateFile,
            ReceiptSigningIdentity.leafCertificateFile,
        ] {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        let rebuilt = try ReceiptSigningIdentity.load(from: directory)
        #expect(rebuilt.root == created.root && rebuilt.leaf == created.leaf)
    }

    @Test func refusesKeysThatDoNotMatchTheirCertificates() throws {
        let identity = try F.identity()
        let other = try F.otherIdentity()
        #expect(throws: ReceiptIssuanceError.self) {
            _ = try ReceiptSigningIdentity(
                root: identity.root,
                intermediate: identity.intermediate,
                leaf: identity.leaf,
                rootKey: identity.rootKey,
                intermediateKey: identity.intermediateKey,
                leafKey: other.leafKey
            )
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("receipt-identity-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try identity.write(to: directory)
        try Data(try other.pemFiles()[ReceiptSigningIdentity.rootKeyFile]!.utf8)
            .write(to: directory.appendingPathComponent(ReceiptSigningIdentity.rootKeyFile))
        #expect(throws: ReceiptIssuanceError.self) { _ = try ReceiptSigningIdentity.load(from: directory) }
        try FileManager.default.removeItem(at: directory.appendingPathComponent(ReceiptSigningIdentity.leafKeyFile))
        #expect(throws: ReceiptIssuanceError.self) { _ = try ReceiptSigningIdentity.load(from: directory) }
    }
}

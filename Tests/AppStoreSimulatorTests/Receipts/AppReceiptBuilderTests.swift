import AppStoreSimulator
import AppStoreWire
import Foundation
import SwiftASN1
import Testing
import X509

@Suite struct AppReceiptBuilderTests {
    typealias F = ReceiptFixtures

    @Test func receiptParsesBackWithEveryFieldOfEveryTransaction() throws {
        let transactions = F.transactions()
        let signed = try F.builder(identity: try F.identity()).build(transactions: transactions)
        let parsed = try AppReceiptParser().parse(signed.der)
        #expect(try AppReceiptParser().parse(base64Encoded: signed.base64) == parsed)

        #expect(parsed.receiptType == "ProductionSandbox")
        #expect(parsed.environment == .sandbox)
        #expect(parsed.bundleId == F.bundleId)
        #expect(parsed.appVersion == "42")
        #expect(parsed.originalApplicationVersion == "1.0")
        #expect(parsed.creationDate == F.now)
        #expect(parsed.opaqueValue?.count == 16)
        #expect(parsed.sha1Hash?.count == 20)
        #expect(parsed.appItemId == nil)

        // in_app is a SET: compare per transaction id, against the JWS input directly.
        #expect(parsed.inAppPurchases.count == transactions.count)
        let byId = Dictionary(uniqueKeysWithValues: parsed.inAppPurchases.map { ($0.transactionId ?? "", $0) })
        for transaction in transactions {
            let entry = try #require(byId[transaction.transactionId ?? ""])
            #expect(entry.quantity == Int64(transaction.quantity!))
            #expect(entry.productId == transaction.productId)
            #expect(entry.originalTransactionId == transaction.originalTransactionId)
            #expect(entry.purchaseDate == transaction.purchaseDate)
            #expect(entry.originalPurchaseDate == transaction.originalPurchaseDate)
            #expect(entry.expiresDate == transaction.expiresDate)
            #expect(entry.webOrderLineItemId == transaction.webOrderLineItemId.flatMap { Int64($0) })
            #expect(entry.cancellationDate == transaction.revocationDate)
        }
        // Offer flags, promotional offer id and product type, spelled out per case.
        let expected: [String: (trial: Bool, intro: Bool, promo: String?, type: Int64)] = [
            "1000": (true, false, nil, 3), "1001": (false, true, nil, 3), "1002": (false, false, "winback.half", 3),
            "1003": (false, false, nil, 3), "2000": (false, false, nil, 3), "2001": (false, false, nil, 3),
            "3000": (false, false, nil, 1), "3001": (false, false, nil, 0), "3002": (false, false, nil, 2),
        ]
        for (id, flags) in expected {
            let entry = try #require(byId[id])
            #expect(entry.isTrialPeriod == flags.trial, "\(id)")
            #expect(entry.isInIntroOfferPeriod == flags.intro, "\(id)")
            #expect(entry.promotionalOfferId == flags.promo, "\(id)")
            #expect(entry.productType == flags.type, "\(id)")
        }
        #expect(byId["3000"]?.quantity == 3)
        #expect(byId["3001"]?.cancellationDate == F.now.addingTimeInterval(-195 * F.day))

        // The builder's own account of the receipt is exactly what parses back.
        var described = signed.receipt
        described.inAppPurchases = []
        var header = parsed
        header.inAppPurchases = []
        #expect(header == described)
        #expect(Set(parsed.inAppPurchases) == Set(signed.receipt.inAppPurchases))
    }

    @Test func datesAreTruncatedToWholeSeconds() throws {
        let transaction = JWSTransactionDecodedPayload(
            transactionId: "9",
            originalTransactionId: "9",
            productId: "p",
            purchaseDate: Date(timeIntervalSince1970: 1_767_225_600.999),
            quantity: 1,
            type: .consumable
        )
        let signed = try F.builder(identity: try F.identity(), creationDate: F.now.addingTimeInterval(0.5))
            .build(transactions: [transaction])
        let parsed = try AppReceiptParser().parse(signed.der)
        #expect(parsed.creationDate == F.now)
        #expect(parsed.inAppPurchases.first?.purchaseDate == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(parsed.inAppPurchases.first?.expiresDate == nil)
    }

    @Test func signatureVerifiesOnlyAgainstItsRootAndBundle() async throws {
        let identity = try F.identity()
        let signed = try F.builder(identity: identity).build(transactions: F.transactions())

        let verified = try await AppReceiptSignatureVerifier(trustedRoots: [identity.root], bundleId: F.bundleId)
            .verify(signed.der)
        #expect(Set(verified.inAppPurchases) == Set(signed.receipt.inAppPurchases))
        _ = try await AppReceiptSignatureVerifier(trustedRoots: [identity.root], bundleId: F.bundleId)
            .verify(base64Encoded: signed.base64)

        // Same names, other keys: the impostor root must not vouch for it.
        let impostor = AppReceiptSignatureVerifier(trustedRoots: [try F.otherIdentity().root], bundleId: F.bundleId)
        let untrusted = await #expect(throws: AppReceiptError.self) { try await impostor.verify(signed.der) }
        #expect(untrusted.map(Self.isUntrusted) == true, "\(String(describing: untrusted))")

        let apple = try AppReceiptSignatureVerifier.apple(bundleId: F.bundleId)
        let notApple = await #expect(throws: AppReceiptError.self) { try await apple.verify(signed.der) }
        #expect(notApple.map(Self.isUntrusted) == true, "\(String(describing: notApple))")

        let otherApp = AppReceiptSignatureVerifier(trustedRoots: [identity.root], bundleId: "com.example.other")
        let wrongApp = await #expect(throws: AppReceiptError.self) { try await otherApp.verify(signed.der) }
        guard case .wrongApp? = wrongApp else {
            Issue.record("expected wrongApp, got \(String(describing: wrongApp))")
            return
        }
    }

    static func isUntrusted(_ error: AppReceiptError) -> Bool {
        if case .untrustedCertificateChain = error { return true }
        return false
    }

    @Test func signatureCoversTheContent() async throws {
        let identity = try F.identity()
        var der = try F.builder(identity: identity).build(transactions: F.transactions()).der
        // Flip one byte of the bundle id inside the content; the DER stays well-formed.
        let needle = Array(F.bundleId.utf8)
        let start = try #require(
            (0...(der.count - needle.count)).first { Array(der[$0..<($0 + needle.count)]) == needle }
        )
        der[start] ^= 0x01
        let verifier = AppReceiptSignatureVerifier(trustedRoots: [identity.root])
        let tampered = der
        let error = await #expect(throws: AppReceiptError.self) { try await verifier.verify(tampered) }
        guard case .invalidSignature? = error else {
            Issue.record("expected invalidSignature, got \(String(describing: error))")
            return
        }
    }

    @Test func deviceHashMatchesOnlyTheDevice() throws {
        let signed = try F.builder(identity: try F.identity()).build(transactions: [])
        let parsed = try AppReceiptParser().parse(signed.der)
        #expect(parsed.isValidDeviceHash(identifierForVendor: F.device))
        #expect(parsed.isValidDeviceHash(deviceIdentifier: AppReceiptBuilder.deviceIdentifier(F.device)))
        #expect(!parsed.isValidDeviceHash(identifierForVendor: UUID()))
        #expect(!parsed.isValidDeviceHash(deviceIdentifier: [0x00, 0x1B, 0x63, 0x84, 0x45, 0xE6]))
        // The hash covers the bundle id's DER bytes (tag and length included), as Apple's does.
        #expect(parsed.bundleIdData == Data([0x0C, UInt8(F.bundleId.utf8.count)] + Array(F.bundleId.utf8)))

        // A Mac's receipt hashes its MAC address instead.
        var mac = F.builder(identity: try F.identity())
        mac.deviceIdentifier = [0x00, 0x1B, 0x63, 0x84, 0x45, 0xE6]
        let macReceipt = try AppReceiptParser().parse(try mac.build(transactions: []).der)
        #expect(macReceipt.isValidDeviceHash(deviceIdentifier: [0x00, 0x1B, 0x63, 0x84, 0x45, 0xE6]))
        #expect(!macReceipt.isValidDeviceHash(identifierForVendor: F.device))
    }

    @Test func productionReceiptsAndOptionalAttributes() throws {
        let production = AppReceiptBuilder.receiptType(for: .production)
        var builder = F.builder(identity: try F.identity(), receiptType: production)
        builder.appItemId = 1_234_567_890
        builder.opaqueValue = [1, 2, 3, 4, 5, 6, 7, 8]
        builder.originalApplicationVersion = "7"
        let parsed = try AppReceiptParser().parse(try builder.build(transactions: []).der)
        #expect(parsed.receiptType == "Production")
        #expect(parsed.environment == .production)
        #expect(parsed.appItemId == 1_234_567_890)
        #expect(parsed.opaqueValue == Data([1, 2, 3, 4, 5, 6, 7, 8]))
        #expect(parsed.originalApplicationVersion == "7")
        #expect(parsed.inAppPurchases.isEmpty)
        #expect(parsed.isValidDeviceHash(identifierForVendor: F.device))
        #expect(AppReceiptBuilder.receiptType(for: .sandbox) == "ProductionSandbox")
    }

    @Test func buildsAreReproducible() throws {
        let builder = F.builder(identity: try F.identity())
        #expect(try builder.build(transactions: F.transactions()) == builder.build(transactions: F.transactions()))
        var later = builder
        later.creationDate = F.now.addingTimeInterval(1)
        #expect(
            try AppReceiptParser().parse(later.build(transactions: []).der).opaqueValue
                != AppReceiptParser().parse(builder.build(transactions: []).der).opaqueValue
        )
    }

    @Test func rejectsNonNumericWebOrderLineItemId() throws {
        let transaction = JWSTransactionDecodedPayload(transactionId: "1", webOrderLineItemId: "abc")
        #expect(throws: ReceiptIssuanceError.self) {
            _ = try F.builder(identity: try F.identity()).build(transactions: [transaction])
        }
    }

    /// The envelope is strict DER and signed the way Apple signs: SHA-256 digest, `rsaEncryption` signer, no
    /// signed attributes, leaf + intermediate + root embedded.
    @Test func signedDataIsAppleShapedDER() throws {
        let identity = try F.identity()
        let der = try F.builder(identity: identity).build(transactions: F.transactions()).der
        let root = try DER.parse(der)  // rejects BER: indefinite lengths, non-minimal encodings
        let signedData = try DER.sequence(root, identifier: .sequence) { nodes in
            #expect(try ASN1ObjectIdentifier(derEncoded: &nodes) == [1, 2, 840, 113549, 1, 7, 2])
            return try DER.explicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { $0 }
        }
        guard case .constructed(let parts) = signedData.content else {
            Issue.record("SignedData is primitive")
            return
        }
        let nodes = Array(parts)
        #expect(nodes.count == 5)  // version, digestAlgorithms, encapContentInfo, certificates, signerInfos
        #expect(try Int(derEncoded: nodes[0]) == 1)
        #expect(nodes[3].identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific))
        guard case .constructed(let certificateNodes) = nodes[3].content else {
            Issue.record("certificates are primitive")
            return
        }
        let certificates = try certificateNodes.map { try Certificate(derEncoded: $0) }
        #expect(Set(certificates) == [identity.leaf, identity.intermediate, identity.root])

        guard case .constructed(let signerInfos) = nodes[4].content, let signerInfo = Array(signerInfos).first else {
            Issue.record("no SignerInfo")
            return
        }
        guard case .constructed(let signerParts) = signerInfo.content else {
            Issue.record("SignerInfo is primitive")
            return
        }
        let fields = Array(signerParts)
        #expect(fields.count == 5)  // version, sid, digestAlgorithm, signatureAlgorithm, signature: no attributes
        func oid(_ node: ASN1Node) throws -> ASN1ObjectIdentifier {
            try DER.sequence(node, identifier: .sequence) { nodes in
                let oid = try ASN1ObjectIdentifier(derEncoded: &nodes)
                #expect(try ASN1Null(derEncoded: &nodes) == ASN1Null())  // explicit NULL parameters
                return oid
            }
        }
        #expect(try oid(fields[2]) == [2, 16, 840, 1, 101, 3, 4, 2, 1])  // sha256
        #expect(try oid(fields[3]) == [1, 2, 840, 113549, 1, 1, 1])  // rsaEncryption
        #expect(try ASN1OctetString(derEncoded: fields[4]).bytes.count == 256)  // RSA-2048
    }
}

import AppStoreWire
import Crypto
import Foundation
import Testing

@Suite struct PromotionalOfferV1SignerTests {
    static let nonce = UUID(uuidString: "A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF")!
    static let timestamp = Date(timeIntervalSince1970: 1_700_000_000.123_9)
    static let separator = "\u{2063}"

    /// The message written out by hand from §8, independently of the signer's own builder.
    static let expectedMessage = [
        "com.example.app", "KEY123ABCD", "com.example.monthly", "WINBACK_50",
        "6f1b1c5e-0c3a-4f6e-9a4e-2d8b6b7c1a00", "a1b2c3d4-e5f6-4711-8899-aabbccddeeff", "1700000000123",
    ].joined(separator: separator)

    static func sign(with key: P256.Signing.PrivateKey) throws -> PromotionalOfferV1Signature {
        try PromotionalOfferV1Signer(privateKey: key, keyIdentifier: "KEY123ABCD", bundleId: "com.example.app").sign(
            productId: "com.example.monthly",
            offerId: "WINBACK_50",
            appAccountToken: "6F1B1C5E-0C3A-4F6E-9A4E-2D8B6B7C1A00",
            nonce: nonce,
            timestamp: timestamp
        )
    }

    @Test func messageFollowsTheDocumentedLayout() {
        let message = PromotionalOfferV1Signer.message(
            bundleId: "com.example.app",
            keyIdentifier: "KEY123ABCD",
            productId: "com.example.monthly",
            offerId: "WINBACK_50",
            appAccountToken: "6F1B1C5E-0C3A-4F6E-9A4E-2D8B6B7C1A00",
            nonce: Self.nonce,
            timestamp: 1_700_000_000_123
        )
        #expect(message == Self.expectedMessage)
        #expect(Array(Self.separator.utf8) == [0xE2, 0x81, 0xA3])
        // An empty appAccountToken leaves an empty field between two separators.
        let anonymous = PromotionalOfferV1Signer.message(
            bundleId: "b",
            keyIdentifier: "k",
            productId: "p",
            offerId: "o",
            appAccountToken: "",
            nonce: Self.nonce,
            timestamp: 1
        )
        #expect(
            anonymous == "b\u{2063}k\u{2063}p\u{2063}o\u{2063}\u{2063}a1b2c3d4-e5f6-4711-8899-aabbccddeeff\u{2063}1"
        )
    }

    @Test func signatureCarriesTheInjectedValues() throws {
        let signature = try Self.sign(with: P256.Signing.PrivateKey())
        #expect(signature.keyIdentifier == "KEY123ABCD")
        #expect(signature.nonce == Self.nonce)
        #expect(signature.timestamp == 1_700_000_000_123)
        // Standard base64 of a DER SEQUENCE.
        let der = try #require(Data(base64Encoded: signature.signature))
        #expect(der.first == 0x30)
        #expect(!signature.signature.contains("-") && !signature.signature.contains("_"))
    }

    @Test func pythonCryptographyAcceptsTheSignatureAndRejectsATamperedMessage() throws {
        let key = P256.Signing.PrivateKey()
        let signature = try Self.sign(with: key)
        let pem = key.publicKey.pemRepresentation
        let valid = try PythonSignatureCheck.verifyDER(
            keyPEM: pem,
            message: Data(Self.expectedMessage.utf8),
            signatureBase64: signature.signature
        )
        #expect(valid.status == 0, "python: \(valid.output)")

        let tamperedMessage = Self.expectedMessage.replacingOccurrences(of: "WINBACK_50", with: "WINBACK_99")
        let tampered = try PythonSignatureCheck.verifyDER(
            keyPEM: pem,
            message: Data(tamperedMessage.utf8),
            signatureBase64: signature.signature
        )
        #expect(tampered.status == 1, "python: \(tampered.output)")
    }

    @Test func ownVerifierAcceptsOnlyTheSignedDetails() throws {
        let key = P256.Signing.PrivateKey()
        let signature = try Self.sign(with: key)
        func check(
            _ signature: PromotionalOfferV1Signature,
            key: P256.Signing.PublicKey,
            product: String = "com.example.monthly",
            token: String = "6f1b1c5e-0c3a-4f6e-9a4e-2d8b6b7c1a00"
        ) -> Bool {
            signature.isValid(
                publicKey: key,
                bundleId: "com.example.app",
                productId: product,
                offerId: "WINBACK_50",
                appAccountToken: token
            )
        }
        #expect(check(signature, key: key.publicKey))
        // The token is compared lowercased, as it is signed.
        #expect(check(signature, key: key.publicKey, token: "6F1B1C5E-0C3A-4F6E-9A4E-2D8B6B7C1A00"))
        #expect(!check(signature, key: key.publicKey, product: "com.example.yearly"))
        #expect(!check(signature, key: key.publicKey, token: ""))
        #expect(!check(signature, key: P256.Signing.PrivateKey().publicKey))
        var altered = signature
        altered.timestamp += 1
        #expect(!check(altered, key: key.publicKey))
        altered = signature
        altered.signature = "not base64!"
        #expect(!check(altered, key: key.publicKey))
    }

    @Test func freshnessIsTwentyFourHours() throws {
        let signature = try Self.sign(with: P256.Signing.PrivateKey())
        #expect(signature.isFresh(at: Self.timestamp))
        #expect(signature.isFresh(at: Self.timestamp.addingTimeInterval(23 * 3600)))
        #expect(!signature.isFresh(at: Self.timestamp.addingTimeInterval(25 * 3600)))
        #expect(!signature.isFresh(at: Self.timestamp.addingTimeInterval(-60)))
    }

    @Test func signatureRoundTripsThroughJSON() throws {
        let signature = try Self.sign(with: P256.Signing.PrivateKey())
        let decoded = try JSONDecoder().decode(PromotionalOfferV1Signature.self, from: JSONEncoder().encode(signature))
        #expect(decoded == signature)
    }

    @Test(.enabled(if: TestVectors.available))
    func appleTestKeySignaturesVerify() throws {
        let pem = try TestVectors.string("certs/testSigningKey.p8")
        let signer = try PromotionalOfferV1Signer(p8PEM: pem, keyIdentifier: "keyId", bundleId: "com.example")
        let signature = try signer.sign(productId: "productId", offerId: "offerId", appAccountToken: "")
        #expect(
            signature.isValid(
                publicKey: signer.publicKey,
                bundleId: "com.example",
                productId: "productId",
                offerId: "offerId"
            )
        )

        let message = [
            "com.example", "keyId", "productId", "offerId", "", signature.nonce.uuidString.lowercased(),
            String(signature.timestamp),
        ]
        .joined(separator: Self.separator)
        // Python derives the public key from the .p8 itself.
        let outcome = try PythonSignatureCheck.verifyDER(
            keyPEM: pem,
            message: Data(message.utf8),
            signatureBase64: signature.signature
        )
        #expect(outcome.status == 0, "python: \(outcome.output)")
        let tampered = try PythonSignatureCheck.verifyDER(
            keyPEM: pem,
            message: Data((message + "0").utf8),
            signatureBase64: signature.signature
        )
        #expect(tampered.status == 1, "python: \(tampered.output)")
    }

    @Test func malformedKeysAreRejected() {
        #expect(throws: (any Error).self) {
            try PromotionalOfferV1Signer(
                p8PEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
                keyIdentifier: "k",
                bundleId: "b"
            )
        }
    }
}

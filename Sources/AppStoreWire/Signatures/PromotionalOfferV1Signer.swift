import Crypto
import Foundation

/// Creates subscription promotional offer signatures, version 1 (protocol reference §8).
///
/// The message is `bundleId ⁣ keyId ⁣ productId ⁣ offerId ⁣ appAccountToken ⁣ nonce ⁣ timestamp` joined by
/// U+2063 INVISIBLE SEPARATOR, signed with ECDSA P-256 / SHA-256 by the In-App Purchase key.
public struct PromotionalOfferV1Signer: Sendable {
    public let keyIdentifier: String
    public let bundleId: String
    // Crypto's key types are not Sendable, so the signer keeps the key's raw scalar and rebuilds it per use.
    private let privateKey: P256.Signing.PrivateKey

    public init(privateKey: P256.Signing.PrivateKey, keyIdentifier: String, bundleId: String) {
        self.privateKey = privateKey
        self.keyIdentifier = keyIdentifier
        self.bundleId = bundleId
    }

    /// Creates a signer from the PEM text of an In-App Purchase key (`SubscriptionKey_XXXXXXXXXX.p8`).
    public init(p8PEM: String, keyIdentifier: String, bundleId: String) throws {
        self.init(
            privateKey: try P256.Signing.PrivateKey(pemRepresentation: p8PEM),
            keyIdentifier: keyIdentifier,
            bundleId: bundleId
        )
    }

    /// The public key to check this signer's signatures with.
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    /// Signs an offer for one purchase.
    ///
    /// - Parameters:
    ///   - appAccountToken: the purchase's `appAccountToken` / `applicationUsername`, or `""`; signed lowercased.
    ///   - nonce: a fresh UUID per signature (injectable for tests).
    ///   - timestamp: the signing time (injectable for tests); truncated to milliseconds.
    public func sign(
        productId: String,
        offerId: String,
        appAccountToken: String = "",
        nonce: UUID = UUID(),
        timestamp: Date = Date()
    ) throws -> PromotionalOfferV1Signature {
        let milliseconds = Int64((timestamp.timeIntervalSince1970 * 1000).rounded(.down))
        let message = Self.message(
            bundleId: bundleId,
            keyIdentifier: keyIdentifier,
            productId: productId,
            offerId: offerId,
            appAccountToken: appAccountToken,
            nonce: nonce,
            timestamp: milliseconds
        )
        let signature = try privateKey.signature(for: Data(message.utf8))
        return PromotionalOfferV1Signature(
            keyIdentifier: keyIdentifier,
            nonce: nonce,
            timestamp: milliseconds,
            signature: signature.derRepresentation.base64EncodedString()
        )
    }

    /// The exact string that is signed (UTF-8 encoded) for these offer details.
    public static func message(
        bundleId: String,
        keyIdentifier: String,
        productId: String,
        offerId: String,
        appAccountToken: String,
        nonce: UUID,
        timestamp: Int64
    ) -> String {
        [
            bundleId,
            keyIdentifier,
            productId,
            offerId,
            appAccountToken.lowercased(),
            nonce.uuidString.lowercased(),
            String(timestamp),
        ].joined(separator: "\u{2063}")
    }
}

import Crypto
import Foundation

/// A subscription promotional offer signature (v1, `SKPaymentDiscount`), with the fields the app sends
/// alongside the offer identifier.
public struct PromotionalOfferV1Signature: Sendable, Hashable, Codable {
    /// The In-App Purchase key identifier that signed.
    public var keyIdentifier: String
    /// The one-time nonce, signed in lowercase.
    public var nonce: UUID
    /// When the signature was made, in milliseconds since 1970 (Apple accepts it for 24 hours).
    public var timestamp: Int64
    /// The DER-encoded ECDSA P-256 / SHA-256 signature, standard base64.
    public var signature: String

    public init(keyIdentifier: String, nonce: UUID, timestamp: Int64, signature: String) {
        self.keyIdentifier = keyIdentifier
        self.nonce = nonce
        self.timestamp = timestamp
        self.signature = signature
    }

    /// How long Apple accepts a signature after its timestamp.
    public static let validityPeriod: TimeInterval = 24 * 60 * 60

    /// Whether ``signature`` is a valid signature by `publicKey` over the v1 message for these offer details.
    public func isValid(
        publicKey: P256.Signing.PublicKey,
        bundleId: String,
        productId: String,
        offerId: String,
        appAccountToken: String = ""
    ) -> Bool {
        guard let der = Data(base64Encoded: signature),
            let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: der)
        else {
            return false
        }
        let message = PromotionalOfferV1Signer.message(
            bundleId: bundleId,
            keyIdentifier: keyIdentifier,
            productId: productId,
            offerId: offerId,
            appAccountToken: appAccountToken,
            nonce: nonce,
            timestamp: timestamp
        )
        return publicKey.isValidSignature(ecdsa, for: Data(message.utf8))
    }

    /// Whether Apple would still accept this signature at `date` (within ``validityPeriod`` of ``timestamp``).
    public func isFresh(at date: Date = Date()) -> Bool {
        let age = date.timeIntervalSince1970 - Double(timestamp) / 1000
        return age >= 0 && age <= Self.validityPeriod
    }
}

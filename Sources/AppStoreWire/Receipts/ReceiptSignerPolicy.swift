import SwiftASN1
import X509

/// The receipt-specific part of chain validation, applied alongside RFC 5280: the signing certificate must
/// carry the marker extensions that single out receipt signers.
///
/// Chaining to Apple Inc. Root alone proves little: the same root vouches for every developer's code-signing
/// certificate, so without the marker any developer could sign a receipt that verifies.
struct ReceiptSignerPolicy: VerifierPolicy {
    var requiredSignerExtensions: [ASN1ObjectIdentifier]

    // Extended Key Usage is accepted as handled: receipt signers use vendor-specific purposes (Xcode's StoreKit
    // certificate marks it critical with codeSigning), and the marker extensions identify the signer instead.
    // The markers themselves are understood here too, should a certificate mark them critical.
    var verifyingCriticalExtensions: [ASN1ObjectIdentifier] {
        [.X509ExtensionID.extendedKeyUsage] + requiredSignerExtensions
    }

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        let leaf = chain.leaf
        for oid in requiredSignerExtensions where leaf.extensions[oid: oid] == nil {
            return .failsToMeetPolicy(reason: "signing certificate \(leaf.subject) lacks required extension \(oid)")
        }
        return .meetsPolicy
    }
}

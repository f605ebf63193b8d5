import SwiftASN1
import X509

/// Requires Apple's marker extensions: 1.2.840.113635.100.6.11.1 on the leaf (App Store receipt signing) and
/// 1.2.840.113635.100.6.2.1 on the intermediate (Apple WWDR CA).
///
/// A chain from any other Apple-issued certificate (a push or developer certificate, say) fails here.
struct AppleMarkerExtensionPolicy: VerifierPolicy {
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    // The markers carry no semantics a generic verifier must enforce, but if a certificate marks them critical
    // this policy is what understands them.
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [Self.leafMarker, Self.intermediateMarker]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "chain must be leaf, intermediate and root; got \(chain.count)")
        }
        if let reason = Self.missingMarker(leaf: chain[0], intermediate: chain[1]) {
            return .failsToMeetPolicy(reason: reason)
        }
        return .meetsPolicy
    }

    /// Names the missing marker, or `nil` when both are present.
    static func missingMarker(leaf: Certificate, intermediate: Certificate) -> String? {
        if leaf.extensions[oid: leafMarker] == nil {
            return "leaf certificate lacks Apple's receipt-signing extension 1.2.840.113635.100.6.11.1"
        }
        if intermediate.extensions[oid: intermediateMarker] == nil {
            return "intermediate certificate lacks Apple's WWDR extension 1.2.840.113635.100.6.2.1"
        }
        return nil
    }
}

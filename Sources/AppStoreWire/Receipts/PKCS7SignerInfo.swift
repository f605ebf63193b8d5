import SwiftASN1
import X509

/// One PKCS#7 / CMS `SignerInfo` (RFC 5652 §5.3), decoded with BER rules.
struct PKCS7SignerInfo {
    /// How the signer names its certificate (`SignerIdentifier`).
    enum SignerIdentifier {
        /// `issuerAndSerialNumber`.
        case issuerAndSerialNumber(issuer: DistinguishedName, serialNumber: Certificate.SerialNumber)
        /// `[0] subjectKeyIdentifier`.
        case subjectKeyIdentifier(ArraySlice<UInt8>)
    }

    var signerIdentifier: SignerIdentifier
    var digestAlgorithm: ASN1ObjectIdentifier
    /// The `[0] IMPLICIT SignedAttributes` node, if present.
    var signedAttributes: ASN1Node?
    /// `signatureAlgorithm` (PKCS#7's `digestEncryptionAlgorithm`): often plain `rsaEncryption`.
    var signatureAlgorithm: ASN1ObjectIdentifier
    var signature: ArraySlice<UInt8>

    init(berEncoded node: ASN1Node) throws {
        self = try BER.sequence(node, identifier: .sequence) { nodes in
            _ = try Int(berEncoded: &nodes)  // version
            guard let sidNode = nodes.next() else {
                throw ASN1Error.invalidASN1Object(reason: "SignerInfo.sid is missing")
            }
            let sid: SignerIdentifier
            if sidNode.identifier == .sequence {
                sid = try BER.sequence(sidNode, identifier: .sequence) { nodes in
                    guard let issuerNode = nodes.next() else {
                        throw ASN1Error.invalidASN1Object(reason: "IssuerAndSerialNumber.issuer is missing")
                    }
                    let issuer = try DistinguishedName(derEncoded: issuerNode)
                    guard let serial = nodes.next(), serial.identifier == .integer,
                        case .primitive(let serialBytes) = serial.content
                    else {
                        throw ASN1Error.invalidASN1Object(reason: "IssuerAndSerialNumber.serialNumber is invalid")
                    }
                    return .issuerAndSerialNumber(
                        issuer: issuer,
                        serialNumber: Certificate.SerialNumber(bytes: serialBytes)
                    )
                }
            } else if sidNode.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                let keyId = try ASN1OctetString(berEncoded: sidNode, withIdentifier: sidNode.identifier)
                sid = .subjectKeyIdentifier(keyId.bytes)
            } else {
                throw ASN1Error.unexpectedFieldType(sidNode.identifier)
            }
            let digestAlgorithm = try Self.algorithm(&nodes)
            let signedAttributes = BER.optionalImplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) {
                $0
            }
            let signatureAlgorithm = try Self.algorithm(&nodes)
            let signature = try ASN1OctetString(berEncoded: &nodes).bytes
            // unsignedAttrs: nothing in them is covered by the signature.
            _ = BER.optionalImplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { _ in }
            return Self(
                signerIdentifier: sid,
                digestAlgorithm: digestAlgorithm,
                signedAttributes: signedAttributes,
                signatureAlgorithm: signatureAlgorithm,
                signature: signature
            )
        }
    }

    private init(
        signerIdentifier: SignerIdentifier,
        digestAlgorithm: ASN1ObjectIdentifier,
        signedAttributes: ASN1Node?,
        signatureAlgorithm: ASN1ObjectIdentifier,
        signature: ArraySlice<UInt8>
    ) {
        self.signerIdentifier = signerIdentifier
        self.digestAlgorithm = digestAlgorithm
        self.signedAttributes = signedAttributes
        self.signatureAlgorithm = signatureAlgorithm
        self.signature = signature
    }

    /// Reads an `AlgorithmIdentifier` and returns its OID; parameters (NULL or absent) are ignored.
    private static func algorithm(_ nodes: inout ASN1NodeCollection.Iterator) throws -> ASN1ObjectIdentifier {
        guard let node = nodes.next() else {
            throw ASN1Error.invalidASN1Object(reason: "AlgorithmIdentifier is missing")
        }
        return try BER.sequence(node, identifier: .sequence) { nodes in
            let oid = try ASN1ObjectIdentifier(berEncoded: &nodes)
            _ = nodes.next()
            return oid
        }
    }
}

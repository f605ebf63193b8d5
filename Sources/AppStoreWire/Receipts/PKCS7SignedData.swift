import SwiftASN1

/// The parts of a PKCS#7 / CMS `ContentInfo` carrying `SignedData` (RFC 5652 §3, §5.1) that receipts need.
///
/// Decoded with swift-asn1's BER rules because Apple's and Xcode's receipts use indefinite lengths and
/// constructed OCTET STRINGs. Certificates and signer infos stay undecoded nodes: only signature
/// verification needs them, and plain parsing must not fail on parts it never reads.
struct PKCS7SignedData {
    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]

    /// `encapContentInfo.eContentType`.
    var contentType: ASN1ObjectIdentifier
    /// The flattened octets of `encapContentInfo.eContent`; `nil` for a detached signature.
    var content: ArraySlice<UInt8>?
    /// `certificates`, each a node that should hold a DER `Certificate`.
    var certificates: [ASN1Node]
    /// `signerInfos`, each a `SignerInfo` node (see ``PKCS7SignerInfo``).
    var signerInfos: [ASN1Node]

    /// Reads a `ContentInfo` node; throws `AppReceiptError.wrongContentType` for anything but SignedData
    /// and swift-asn1's errors for malformed structure.
    init(contentInfo root: ASN1Node) throws {
        self = try BER.sequence(root, identifier: .sequence) { nodes in
            let outerType = try ASN1ObjectIdentifier(berEncoded: &nodes)
            guard outerType == Self.signedDataOID else {
                throw AppReceiptError.wrongContentType(
                    "ContentInfo is \(outerType), expected SignedData \(Self.signedDataOID)"
                )
            }
            return try BER.explicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { node in
                try Self(signedData: node)
            }
        }
    }

    private init(signedData node: ASN1Node) throws {
        self = try BER.sequence(node, identifier: .sequence) {
            (nodes: inout ASN1NodeCollection.Iterator) throws -> Self in
            _ = try Int(berEncoded: &nodes)  // version: 1 for Apple's receipts, not worth rejecting others
            guard let digestAlgorithms = nodes.next(), digestAlgorithms.identifier == .set else {
                throw ASN1Error.invalidASN1Object(reason: "SignedData.digestAlgorithms is missing")
            }
            let encapsulated = try Self.next(&nodes, "SignedData.encapContentInfo")
            let (contentType, content) = try Self.encapsulatedContent(encapsulated)
            let certificates: [ASN1Node] =
                try BER.optionalImplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) {
                    (node: ASN1Node) throws -> [ASN1Node] in
                    guard case .constructed(let children) = node.content else {
                        throw ASN1Error.invalidASN1Object(reason: "SignedData.certificates is primitive")
                    }
                    return Array(children)
                } ?? []
            _ = BER.optionalImplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { _ in }  // crls
            let signerInfosNode = try Self.next(&nodes, "SignedData.signerInfos")
            guard signerInfosNode.identifier == .set, case .constructed(let signerInfos) = signerInfosNode.content
            else {
                throw ASN1Error.unexpectedFieldType(signerInfosNode.identifier)
            }
            return Self(
                contentType: contentType,
                content: content,
                certificates: certificates,
                signerInfos: Array(signerInfos)
            )
        }
    }

    /// Reads `EncapsulatedContentInfo ::= SEQUENCE { eContentType, eContent [0] EXPLICIT OCTET STRING OPTIONAL }`.
    private static func encapsulatedContent(
        _ node: ASN1Node
    ) throws -> (ASN1ObjectIdentifier, ArraySlice<UInt8>?) {
        try BER.sequence(node, identifier: .sequence) { nodes in
            let type = try ASN1ObjectIdentifier(berEncoded: &nodes)
            let content = try BER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) {
                (node: ASN1Node) throws -> ArraySlice<UInt8> in
                // BER allows the OCTET STRING to be constructed from segments; this flattens them.
                try ASN1OctetString(berEncoded: node).bytes
            }
            return (type, content)
        }
    }

    private init(
        contentType: ASN1ObjectIdentifier,
        content: ArraySlice<UInt8>?,
        certificates: [ASN1Node],
        signerInfos: [ASN1Node]
    ) {
        self.contentType = contentType
        self.content = content
        self.certificates = certificates
        self.signerInfos = signerInfos
    }

    private static func next(_ nodes: inout ASN1NodeCollection.Iterator, _ what: String) throws -> ASN1Node {
        guard let node = nodes.next() else {
            throw ASN1Error.invalidASN1Object(reason: "\(what) is missing")
        }
        return node
    }
}

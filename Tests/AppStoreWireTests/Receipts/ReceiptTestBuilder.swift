import AppStoreWire
import Foundation
import SwiftASN1
import X509

/// Encodes test app receipts with swift-asn1's DER serializer: the attribute payload and the PKCS#7
/// SignedData around it, optionally signed the way Apple signs (no signed attributes).
enum ReceiptTestBuilder {
    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
    static let sha1OID: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    static let sha256OID: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let rsaEncryptionOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]
    static let sha256WithRSAOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 11]
    static let ecdsaWithSHA256OID: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 2]

    /// The value of one receipt attribute, before it is wrapped in the attribute's OCTET STRING.
    enum Value {
        case utf8(String)
        case ia5(String)
        case integer(Int64)
        /// Bytes placed in the OCTET STRING as they are (opaque value, hash, or deliberately broken DER).
        case raw([UInt8])
        case set([(type: Int, value: Value)])
    }

    /// `SET OF ReceiptAttribute`, each `SEQUENCE { type, version 1, OCTET STRING (DER of value) }`.
    static func payload(_ attributes: [(type: Int, value: Value)]) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .set) { serializer in
            for attribute in attributes {
                try serializer.appendConstructedNode(identifier: .sequence) { serializer in
                    try serializer.serialize(attribute.type)
                    try serializer.serialize(1)
                    try serializer.serialize(ASN1OctetString(contentBytes: try encode(attribute.value)[...]))
                }
            }
        }
        return serializer.serializedBytes
    }

    static func encode(_ value: Value) throws -> [UInt8] {
        var serializer = DER.Serializer()
        switch value {
        case .utf8(let string): try serializer.serialize(ASN1UTF8String(string))
        case .ia5(let string): try serializer.serialize(ASN1IA5String(string))
        case .integer(let number): try serializer.serialize(number)
        case .raw(let bytes): return bytes
        case .set(let attributes): return try payload(attributes)
        }
        return serializer.serializedBytes
    }

    /// The attributes that encode `receipt`, every field that is set, plus unknown types the parser must skip.
    static func attributes(for receipt: AppReceipt) -> [(type: Int, value: Value)] {
        var result: [(type: Int, value: Value)] = [
            (type: 8, value: .ia5("")), (type: 9999, value: .raw([0xFF, 0x00])),
        ]
        func add(_ type: Int, _ value: Value?) {
            if let value { result.append((type: type, value: value)) }
        }
        add(0, receipt.receiptType.map(Value.utf8))
        add(1, receipt.appItemId.map(Value.integer))
        add(2, receipt.bundleId.map(Value.utf8))
        add(3, receipt.appVersion.map(Value.utf8))
        add(4, receipt.opaqueValue.map { .raw(Array($0)) })
        add(5, receipt.sha1Hash.map { .raw(Array($0)) })
        add(12, receipt.creationDate.map { .ia5(rfc3339($0)) })
        add(15, receipt.downloadId.map(Value.integer))
        add(16, receipt.versionExternalIdentifier.map(Value.integer))
        add(18, receipt.originalPurchaseDate.map { .ia5(rfc3339($0)) })
        add(19, receipt.originalApplicationVersion.map(Value.utf8))
        add(21, receipt.expirationDate.map { .ia5(rfc3339($0)) })
        for purchase in receipt.inAppPurchases {
            var fields: [(type: Int, value: Value)] = [(type: 1799, value: .utf8("unknown in-app field"))]
            func field(_ type: Int, _ value: Value?) {
                if let value { fields.append((type: type, value: value)) }
            }
            field(1701, purchase.quantity.map(Value.integer))
            field(1702, purchase.productId.map(Value.utf8))
            field(1703, purchase.transactionId.map(Value.utf8))
            field(1704, purchase.purchaseDate.map { .ia5(rfc3339($0)) })
            field(1705, purchase.originalTransactionId.map(Value.utf8))
            field(1706, purchase.originalPurchaseDate.map { .ia5(rfc3339($0)) })
            field(1707, purchase.productType.map(Value.integer))
            // Apple writes an empty IA5String when a subscription was never cancelled.
            field(1712, .ia5(purchase.cancellationDate.map(rfc3339) ?? ""))
            field(1708, purchase.expiresDate.map { .ia5(rfc3339($0)) })
            field(1711, purchase.webOrderLineItemId.map(Value.integer))
            field(1713, purchase.isTrialPeriod.map { .integer($0 ? 1 : 0) })
            field(1719, purchase.isInIntroOfferPeriod.map { .integer($0 ? 1 : 0) })
            field(1721, purchase.promotionalOfferId.map(Value.utf8))
            result.append((type: 17, value: .set(fields)))
        }
        return result
    }

    static func rfc3339(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }

    /// How the SignerInfo is made.
    struct Signer {
        var certificate: Certificate
        var key: Certificate.PrivateKey
        /// The algorithm the key signs with.
        var algorithm: Certificate.SignatureAlgorithm
        var digestOID: ASN1ObjectIdentifier
        /// What the SignerInfo names as its signature algorithm: Apple names only `rsaEncryption`.
        var signatureOID: ASN1ObjectIdentifier
        /// Sign these bytes instead of the content (to make a signature that does not match).
        var signedBytesOverride: [UInt8]? = nil
    }

    /// A DER `ContentInfo` holding `SignedData` with `content` attached.
    static func signedData(
        content: [UInt8]?,
        outerType: ASN1ObjectIdentifier = signedDataOID,
        contentType: ASN1ObjectIdentifier = dataOID,
        certificates: [Certificate] = [],
        signer: Signer? = nil
    ) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { serializer in
            try serializer.serialize(outerType)
            try serializer.appendConstructedNode(
                identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
            ) { serializer in
                try serializer.appendConstructedNode(identifier: .sequence) { serializer in
                    try serializer.serialize(1)
                    try serializer.appendConstructedNode(identifier: .set) { serializer in
                        if let signer { try algorithmIdentifier(signer.digestOID, into: &serializer) }
                    }
                    try serializer.appendConstructedNode(identifier: .sequence) { serializer in
                        try serializer.serialize(contentType)
                        if let content {
                            try serializer.appendConstructedNode(
                                identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
                            ) { serializer in
                                try serializer.serialize(ASN1OctetString(contentBytes: content[...]))
                            }
                        }
                    }
                    if !certificates.isEmpty {
                        try serializer.appendConstructedNode(
                            identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
                        ) { serializer in
                            for certificate in certificates { try serializer.serialize(certificate) }
                        }
                    }
                    try serializer.appendConstructedNode(identifier: .set) { serializer in
                        guard let signer else { return }
                        try serializer.appendConstructedNode(identifier: .sequence) { serializer in
                            try serializer.serialize(1)
                            try serializer.appendConstructedNode(identifier: .sequence) { serializer in
                                try serializer.serialize(signer.certificate.issuer)
                                serializer.appendPrimitiveNode(identifier: .integer) {
                                    $0.append(contentsOf: signer.certificate.serialNumber.bytes)
                                }
                            }
                            try algorithmIdentifier(signer.digestOID, into: &serializer)
                            try algorithmIdentifier(signer.signatureOID, into: &serializer)
                            let signature = try signer.key.sign(
                                bytes: signer.signedBytesOverride ?? content ?? [],
                                signatureAlgorithm: signer.algorithm
                            )
                            try serializer.serialize(ASN1OctetString(contentBytes: signature.rawRepresentation[...]))
                        }
                    }
                }
            }
        }
        return serializer.serializedBytes
    }

    static func der(_ value: some DERSerializable) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(value)
        return serializer.serializedBytes
    }

    private static func algorithmIdentifier(_ oid: ASN1ObjectIdentifier, into serializer: inout DER.Serializer) throws {
        try serializer.appendConstructedNode(identifier: .sequence) { serializer in
            try serializer.serialize(oid)
            if oid != ecdsaWithSHA256OID { try serializer.serialize(ASN1Null()) }
        }
    }
}

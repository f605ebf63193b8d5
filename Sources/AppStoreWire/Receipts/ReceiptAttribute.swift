import Foundation
import SwiftASN1

/// One `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }` of an app receipt
/// payload or of an in-app purchase set, with decoders for the DER value wrapped in `value`.
struct ReceiptAttribute {
    var type: Int
    /// The octets of `value`: a DER encoding for most types, raw bytes for the opaque value and hash.
    var value: ArraySlice<UInt8>

    /// Reads the attributes of a `SET OF ReceiptAttribute` node.
    static func attributes(in node: ASN1Node) throws -> [ReceiptAttribute] {
        guard node.identifier == .set, case .constructed(let children) = node.content else {
            throw ASN1Error.invalidASN1Object(reason: "receipt payload is \(node.identifier), expected a SET")
        }
        return try children.map { child in
            try BER.sequence(child, identifier: .sequence) { nodes in
                let type = try Int(berEncoded: &nodes)
                guard let version = nodes.next(), version.identifier == .integer else {
                    throw ASN1Error.invalidASN1Object(reason: "receipt attribute \(type) has no version")
                }
                let value = try ASN1OctetString(berEncoded: &nodes).bytes
                return ReceiptAttribute(type: type, value: value)
            }
        }
    }

    /// The value as a string: UTF8String for most attributes, IA5String for dates; other
    /// character-string types are tolerated since they share the byte layout.
    func string() throws(AppReceiptError) -> String {
        let bytes = try decode { node in
            guard Self.stringTypes.contains(node.identifier) else {
                throw ASN1Error.unexpectedFieldType(node.identifier)
            }
            // Read through the OCTET STRING decoder so BER's constructed (segmented) strings are flattened too.
            return try ASN1OctetString(berEncoded: node, withIdentifier: node.identifier).bytes
        }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw .invalidAttribute(type: type, reason: "string is not valid UTF-8")
        }
        return string
    }

    func integer() throws(AppReceiptError) -> Int64 {
        try decode { try Int64(berEncoded: $0) }
    }

    func bool() throws(AppReceiptError) -> Bool {
        try integer() != 0
    }

    /// An RFC 3339 date; the empty string (Apple's "not set") is `nil`.
    func date() throws(AppReceiptError) -> Date? {
        let text = try string()
        if text.isEmpty { return nil }
        guard let date = Self.parseRFC3339(text) else {
            throw .invalidAttribute(type: type, reason: "\"\(text)\" is not an RFC 3339 date")
        }
        return date
    }

    private func decode<T>(_ body: (ASN1Node) throws -> T) throws(AppReceiptError) -> T {
        do {
            return try body(try BER.parse(value))
        } catch {
            throw .invalidAttribute(type: type, reason: String(describing: error))
        }
    }

    private static let stringTypes: [ASN1Identifier] = [.utf8String, .ia5String, .printableString, .visibleString]

    static func parseRFC3339(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle().parse(text) {
            return date
        }
        return try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
    }
}

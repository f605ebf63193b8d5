/// Reads the flat old-style (NeXTSTEP) property lists of iOS 6 transaction receipts:
/// `{ "key" = "value"; ... }` with quoted or bare string keys and values.
///
/// Foundation's property-list reader differs across platforms in its old-style support, and these receipts
/// use only this one shape, so a strict reader for exactly that shape is simpler and predictable.
struct LegacyPropertyList {
    private let bytes: [UInt8]
    private var index = 0

    /// Parses UTF-8 `bytes` as a dictionary of strings; nested dictionaries and arrays are rejected.
    static func dictionary(from bytes: [UInt8]) throws(TransactionReceiptError) -> [String: String] {
        var reader = LegacyPropertyList(bytes: bytes)
        return try reader.readDictionary()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private mutating func readDictionary() throws(TransactionReceiptError) -> [String: String] {
        try expect(UInt8(ascii: "{"))
        var result: [String: String] = [:]
        while true {
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                index += 1
                break
            }
            let key = try readString()
            try expect(UInt8(ascii: "="))
            let value = try readString()
            try expect(UInt8(ascii: ";"))
            result[key] = value
        }
        skipWhitespace()
        guard index == bytes.count else {
            throw .malformed(reason: "unexpected data after the dictionary at offset \(index)")
        }
        return result
    }

    private mutating func readString() throws(TransactionReceiptError) -> String {
        skipWhitespace()
        guard let first = peek() else { throw .malformed(reason: "unexpected end of property list") }
        var scalars: [UInt8] = []
        if first == UInt8(ascii: "\"") {
            index += 1
            while true {
                guard let byte = peek() else { throw .malformed(reason: "unterminated string") }
                index += 1
                if byte == UInt8(ascii: "\"") { break }
                if byte == UInt8(ascii: "\\") {
                    guard let escaped = peek() else { throw .malformed(reason: "unterminated escape") }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "n"): scalars.append(0x0A)
                    case UInt8(ascii: "t"): scalars.append(0x09)
                    case UInt8(ascii: "r"): scalars.append(0x0D)
                    default: scalars.append(escaped)  // \" and \\ (and any other) stand for themselves
                    }
                } else {
                    scalars.append(byte)
                }
            }
        } else {
            while let byte = peek(), Self.isBareStringByte(byte) {
                scalars.append(byte)
                index += 1
            }
            guard !scalars.isEmpty else {
                throw .malformed(reason: "expected a string at offset \(index)")
            }
        }
        guard let string = String(validating: scalars, as: UTF8.self) else {
            throw .malformed(reason: "string is not valid UTF-8")
        }
        return string
    }

    private mutating func expect(_ byte: UInt8) throws(TransactionReceiptError) {
        skipWhitespace()
        guard peek() == byte else {
            throw .malformed(reason: "expected '\(Character(Unicode.Scalar(byte)))' at offset \(index)")
        }
        index += 1
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            index += 1
        }
    }

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private static func isBareStringByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "_$+/:.-".utf8.contains(byte)
        }
    }
}

import Foundation

/// A strict, fast JSON decoder for the hot path of signed-payload verification.
///
/// Foundation's `JSONDecoder` spends about 10 µs scanning a 1 KB transaction payload before it decodes a single
/// field — a sixth of the whole verification budget. This decoder handles the plain JSON Apple actually sends
/// (objects, arrays, unescaped strings, integers, millisecond dates) and *refuses* anything else: escapes,
/// duplicate keys, unusual number forms, non-UTF-8, special Foundation types. A refusal is not an answer: the
/// caller then decodes with `JSONDecoder`, so results and errors are always Foundation's, and the differential
/// fuzz test holds this decoder to producing exactly what `JSONDecoder` produces whenever it succeeds.
enum FastJSONDecoder {
    /// Thrown whenever the input leaves the fast decoder's subset; the caller falls back to `JSONDecoder`.
    struct Unsupported: Error {}

    /// Decodes `T` from `bytes`, with dates as epoch milliseconds (``AppStoreJSON`` conventions).
    static func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeBufferPointer<UInt8>) throws -> T {
        var parser = Parser(bytes: bytes)
        try parser.parseDocument()
        let decoder = NodeDecoder(document: Document(bytes: bytes, nodes: parser.nodes), node: 0, codingPath: [])
        return try T(from: decoder)
    }

    // MARK: Parsing

    enum Kind: UInt8 { case object, array, string, number, trueValue, falseValue, null }

    /// One value; containers are followed by their children, and `next` skips the whole subtree.
    struct Node {
        var kind: Kind
        var start: Int32
        var end: Int32
        var next: Int32
    }

    struct Document {
        let bytes: UnsafeBufferPointer<UInt8>
        let nodes: [Node]

        func string(_ index: Int) throws -> String {
            let node = nodes[index]
            guard node.kind == .string else { throw Unsupported() }
            let slice = UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)])
            guard let string = String(validating: slice, as: UTF8.self) else { throw Unsupported() }
            return string
        }

        /// The digits of an integer written plainly (`-?(0|[1-9][0-9]*)`), or a refusal.
        func integer<I: FixedWidthInteger>(_ index: Int, as: I.Type) throws -> I {
            let node = nodes[index]
            guard node.kind == .number else { throw Unsupported() }
            var position = Int(node.start)
            let end = Int(node.end)
            let negative = bytes[position] == UInt8(ascii: "-")
            if negative { position += 1 }
            guard position < end else { throw Unsupported() }
            var value: I = 0
            while position < end {
                let digit = bytes[position] &- UInt8(ascii: "0")
                guard digit < 10 else { throw Unsupported() }
                let (times, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) =
                    negative ? times.subtractingReportingOverflow(I(digit)) : times.addingReportingOverflow(I(digit))
                guard !o1, !o2 else { throw Unsupported() }
                value = sum
                position += 1
            }
            return value
        }

        func double(_ index: Int) throws -> Double {
            let node = nodes[index]
            guard node.kind == .number else { throw Unsupported() }
            let slice = UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)])
            guard let value = Double(String(decoding: slice, as: UTF8.self)), value.isFinite else { throw Unsupported() }
            return value
        }
    }

    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0
        var nodes: [Node] = []
        static let maximumDepth = 32

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
            nodes.reserveCapacity(64)
        }

        mutating func parseDocument() throws {
            skipWhitespace()
            try parseValue(depth: 0)
            skipWhitespace()
            guard position == bytes.count else { throw Unsupported() }
        }

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        mutating func parseValue(depth: Int) throws {
            guard position < bytes.count, depth <= Self.maximumDepth else { throw Unsupported() }
            switch bytes[position] {
            case UInt8(ascii: "{"): try parseObject(depth: depth)
            case UInt8(ascii: "["): try parseArray(depth: depth)
            case UInt8(ascii: "\""): try parseString()
            case UInt8(ascii: "t"): try parseLiteral("true", .trueValue)
            case UInt8(ascii: "f"): try parseLiteral("false", .falseValue)
            case UInt8(ascii: "n"): try parseLiteral("null", .null)
            default: try parseNumber()
            }
        }

        mutating func parseObject(depth: Int) throws {
            let index = nodes.count
            nodes.append(Node(kind: .object, start: Int32(position), end: 0, next: 0))
            position += 1
            skipWhitespace()
            var first = true
            while true {
                guard position < bytes.count else { throw Unsupported() }
                if bytes[position] == UInt8(ascii: "}") {
                    position += 1
                    break
                }
                if !first {
                    guard bytes[position] == UInt8(ascii: ",") else { throw Unsupported() }
                    position += 1
                    skipWhitespace()
                }
                first = false
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw Unsupported() }
                let keyIndex = nodes.count
                try parseString()
                // Duplicate keys are resolved differently by different decoders: leave them to Foundation.
                var member = index + 1
                while member < keyIndex {
                    let key = nodes[member]
                    let candidate = nodes[keyIndex]
                    if key.end - key.start == candidate.end - candidate.start,
                        memcmp(
                            bytes.baseAddress! + Int(key.start),
                            bytes.baseAddress! + Int(candidate.start),
                            Int(key.end - key.start)
                        ) == 0
                    {
                        throw Unsupported()
                    }
                    member = Int(nodes[member + 1].next)
                }
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw Unsupported() }
                position += 1
                skipWhitespace()
                try parseValue(depth: depth + 1)
                skipWhitespace()
            }
            nodes[index].end = Int32(position)
            nodes[index].next = Int32(nodes.count)
        }

        mutating func parseArray(depth: Int) throws {
            let index = nodes.count
            nodes.append(Node(kind: .array, start: Int32(position), end: 0, next: 0))
            position += 1
            skipWhitespace()
            var first = true
            while true {
                guard position < bytes.count else { throw Unsupported() }
                if bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    break
                }
                if !first {
                    guard bytes[position] == UInt8(ascii: ",") else { throw Unsupported() }
                    position += 1
                    skipWhitespace()
                }
                first = false
                try parseValue(depth: depth + 1)
                skipWhitespace()
            }
            nodes[index].end = Int32(position)
            nodes[index].next = Int32(nodes.count)
        }

        /// An ASCII string without escapes or control characters; its node spans the bytes between the quotes.
        ///
        /// Non-ASCII is left to Foundation, which validates UTF-8 across the whole document (keys and values of
        /// unknown members included); Apple's payloads are ASCII.
        mutating func parseString() throws {
            position += 1
            let start = position
            // Eight bytes at a time while none of them ends the string or needs the byte loop's checks: the
            // signed transaction and renewal info are kilobytes of base64url inside one string.
            let raw = UnsafeRawBufferPointer(bytes)
            let ones: UInt64 = 0x0101_0101_0101_0101
            let high: UInt64 = 0x8080_8080_8080_8080
            while position + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: position, as: UInt64.self)
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                let special =
                    ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word) | word
                if special & high != 0 { break }
                position += 8
            }
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    nodes.append(Node(kind: .string, start: Int32(start), end: Int32(position), next: Int32(nodes.count + 1)))
                    position += 1
                    return
                }
                guard byte != UInt8(ascii: "\\"), byte >= 0x20, byte < 0x80 else { throw Unsupported() }
                position += 1
            }
            throw Unsupported()
        }

        mutating func parseLiteral(_ literal: StaticString, _ kind: Kind) throws {
            let length = literal.utf8CodeUnitCount
            guard position + length <= bytes.count,
                memcmp(bytes.baseAddress! + position, literal.utf8Start, length) == 0
            else { throw Unsupported() }
            nodes.append(Node(kind: kind, start: Int32(position), end: Int32(position + length), next: Int32(nodes.count + 1)))
            position += length
        }

        /// JSON's number grammar exactly: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
        mutating func parseNumber() throws {
            let start = position
            func digits() -> Int {
                let from = position
                while position < bytes.count, bytes[position] &- UInt8(ascii: "0") < 10 { position += 1 }
                return position - from
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard position < bytes.count else { throw Unsupported() }
            if bytes[position] == UInt8(ascii: "0") {
                position += 1
            } else {
                guard digits() > 0 else { throw Unsupported() }
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
                position += 1
                guard digits() > 0 else { throw Unsupported() }
            }
            if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                    position += 1
                }
                guard digits() > 0 else { throw Unsupported() }
            }
            nodes.append(Node(kind: .number, start: Int32(start), end: Int32(position), next: Int32(nodes.count + 1)))
        }
    }

    // MARK: Decoding

    struct NodeDecoder: Decoder {
        let document: Document
        let node: Int
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(document: Document, node: Int, codingPath: [any CodingKey]) {
            self.document = document
            self.node = node
            self.codingPath = codingPath
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard document.nodes[node].kind == .object else { throw Unsupported() }
            return KeyedDecodingContainer(KeyedContainer<Key>(document: document, object: node, codingPath: codingPath))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            guard document.nodes[node].kind == .array else { throw Unsupported() }
            return UnkeyedContainer(document: document, array: node, codingPath: codingPath)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            SingleValueContainer(document: document, node: node, codingPath: codingPath)
        }
    }

    /// Decodes one node as `T`, treating Foundation's specially-coded types the way `AppStoreJSON` does.
    static func value<T: Decodable>(_ type: T.Type, document: Document, node: Int, codingPath: [any CodingKey]) throws -> T {
        if T.self == Date.self {
            // Same arithmetic as JSONDecoder's .millisecondsSince1970.
            return Date(timeIntervalSince1970: try document.double(node) / 1000.0) as! T
        }
        if T.self == Data.self || T.self == URL.self || T.self == Decimal.self {
            throw Unsupported()
        }
        return try T(from: NodeDecoder(document: document, node: node, codingPath: codingPath))
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let document: Document
        let object: Int
        let codingPath: [any CodingKey]

        var allKeys: [Key] {
            var keys: [Key] = []
            var member = object + 1
            let end = Int(document.nodes[object].next)
            while member < end {
                if let name = try? document.string(member), let key = Key(stringValue: name) { keys.append(key) }
                member = Int(document.nodes[member + 1].next)
            }
            return keys
        }

        /// The value node for `key`, or nil when absent.
        func find(_ key: Key) -> Int? {
            var name = key.stringValue
            // One pass over the members with the key's bytes in hand: lengths first, bytes only on a length match.
            return name.withUTF8 { keyBytes in
                document.nodes.withUnsafeBufferPointer { nodes in
                    var member = object + 1
                    let end = Int(nodes[object].next)
                    while member < end {
                        let node = nodes[member]
                        if Int(node.end - node.start) == keyBytes.count,
                            keyBytes.isEmpty
                                || memcmp(keyBytes.baseAddress!, document.bytes.baseAddress! + Int(node.start), keyBytes.count) == 0
                        {
                            return member + 1
                        }
                        member = Int(nodes[member + 1].next)
                    }
                    return nil
                }
            }
        }

        func require(_ key: Key) throws -> Int {
            guard let node = find(key) else { throw Unsupported() }
            return node
        }

        func contains(_ key: Key) -> Bool { find(key) != nil }

        func decodeNil(forKey key: Key) throws -> Bool {
            document.nodes[try require(key)].kind == .null
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            switch document.nodes[try require(key)].kind {
            case .trueValue: return true
            case .falseValue: return false
            default: throw Unsupported()
            }
        }

        func decode(_ type: String.Type, forKey key: Key) throws -> String { try document.string(try require(key)) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try document.double(try require(key)) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw Unsupported() }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try document.integer(try require(key), as: Int.self) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try document.integer(try require(key), as: Int8.self) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try document.integer(try require(key), as: Int16.self) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try document.integer(try require(key), as: Int32.self) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try document.integer(try require(key), as: Int64.self) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try document.integer(try require(key), as: UInt.self) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try document.integer(try require(key), as: UInt8.self) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try document.integer(try require(key), as: UInt16.self) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try document.integer(try require(key), as: UInt32.self) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try document.integer(try require(key), as: UInt64.self) }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try FastJSONDecoder.value(T.self, document: document, node: try require(key), codingPath: codingPath)
        }

        // The default decodeIfPresent looks the key up three times (contains, decodeNil, decode); these look once.
        func present(_ key: Key) -> Int? {
            guard let node = find(key), document.nodes[node].kind != .null else { return nil }
            return node
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let node = present(key) else { return nil }
            return try FastJSONDecoder.value(T.self, document: document, node: node, codingPath: codingPath)
        }

        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(Bool.self)
        }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(String.self)
        }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(Double.self)
        }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(Float.self)
        }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(Int.self)
        }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(Int8.self)
        }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(Int16.self)
        }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(Int32.self)
        }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(Int64.self)
        }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(UInt.self)
        }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(UInt8.self)
        }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(UInt16.self)
        }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(UInt32.self)
        }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
            guard let node = present(key) else { return nil }
            return try SingleValueContainer(document: document, node: node, codingPath: codingPath).decode(UInt64.self)
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type,
            forKey key: Key
        ) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try NodeDecoder(document: document, node: try require(key), codingPath: codingPath)
                .container(keyedBy: NestedKey.self)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try NodeDecoder(document: document, node: try require(key), codingPath: codingPath).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder { throw Unsupported() }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw Unsupported() }
    }

    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let document: Document
        let array: Int
        let codingPath: [any CodingKey]
        var currentIndex = 0
        var cursor: Int

        init(document: Document, array: Int, codingPath: [any CodingKey]) {
            self.document = document
            self.array = array
            self.codingPath = codingPath
            self.cursor = array + 1
        }

        var count: Int? {
            var n = 0
            var element = array + 1
            while element < Int(document.nodes[array].next) {
                n += 1
                element = Int(document.nodes[element].next)
            }
            return n
        }

        var isAtEnd: Bool { cursor >= Int(document.nodes[array].next) }

        mutating func take() throws -> Int {
            guard !isAtEnd else { throw Unsupported() }
            let node = cursor
            cursor = Int(document.nodes[node].next)
            currentIndex += 1
            return node
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd else { throw Unsupported() }
            if document.nodes[cursor].kind == .null {
                _ = try take()
                return true
            }
            return false
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(T.self) }
        mutating func decode(_ type: Bool.Type) throws -> Bool { try next(Bool.self) }
        mutating func decode(_ type: String.Type) throws -> String { try next(String.self) }
        mutating func decode(_ type: Double.Type) throws -> Double { try next(Double.self) }
        mutating func decode(_ type: Float.Type) throws -> Float { try next(Float.self) }
        mutating func decode(_ type: Int.Type) throws -> Int { try next(Int.self) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(Int8.self) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(Int16.self) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(Int32.self) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(Int64.self) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { try next(UInt.self) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(UInt8.self) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(UInt16.self) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(UInt32.self) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(UInt64.self) }

        private mutating func next<T: Decodable>(_ type: T.Type) throws -> T {
            let node = try take()
            return try FastJSONDecoder.value(T.self, document: document, node: node, codingPath: codingPath)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type
        ) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try NodeDecoder(document: document, node: try take(), codingPath: codingPath).container(keyedBy: NestedKey.self)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try NodeDecoder(document: document, node: try take(), codingPath: codingPath).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder { throw Unsupported() }
    }

    struct SingleValueContainer: SingleValueDecodingContainer {
        let document: Document
        let node: Int
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool { document.nodes[node].kind == .null }

        func decode(_ type: Bool.Type) throws -> Bool {
            switch document.nodes[node].kind {
            case .trueValue: return true
            case .falseValue: return false
            default: throw Unsupported()
            }
        }

        func decode(_ type: String.Type) throws -> String { try document.string(node) }
        func decode(_ type: Double.Type) throws -> Double { try document.double(node) }
        func decode(_ type: Float.Type) throws -> Float { throw Unsupported() }
        func decode(_ type: Int.Type) throws -> Int { try document.integer(node, as: Int.self) }
        func decode(_ type: Int8.Type) throws -> Int8 { try document.integer(node, as: Int8.self) }
        func decode(_ type: Int16.Type) throws -> Int16 { try document.integer(node, as: Int16.self) }
        func decode(_ type: Int32.Type) throws -> Int32 { try document.integer(node, as: Int32.self) }
        func decode(_ type: Int64.Type) throws -> Int64 { try document.integer(node, as: Int64.self) }
        func decode(_ type: UInt.Type) throws -> UInt { try document.integer(node, as: UInt.self) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try document.integer(node, as: UInt8.self) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try document.integer(node, as: UInt16.self) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try document.integer(node, as: UInt32.self) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try document.integer(node, as: UInt64.self) }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try FastJSONDecoder.value(T.self, document: document, node: node, codingPath: codingPath)
        }
    }
}

/// Lets tests and benchmarks ask whether a payload takes the fast path (without the fallback).
public enum FastJSONDecoderProbe {
    /// The fast decoder's result, or `nil` when the input is outside its subset.
    public static func decodesFast<T: Decodable>(_ bytes: [UInt8], as type: T.Type) throws -> T? {
        try? bytes.withUnsafeBufferPointer { try FastJSONDecoder.decode(T.self, from: $0) }
    }
}

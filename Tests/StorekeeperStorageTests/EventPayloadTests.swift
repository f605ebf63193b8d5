import Foundation
import Testing

@testable import StorekeeperStorage

/// The outbox's hand-written JSON payloads read back exactly with a standard JSON decoder, and with the outbox's own
/// reader, which gives way to the standard decoder for anything it was not written to read.
@Suite struct EventPayloadTests {
    @Test func payloadsRoundTripThroughAJSONDecoder() throws {
        let tricky = [
            "plain": "value", "quote": #"say "hi""#, "backslash": #"C:\path"#, "newline": "a\nb\r\tc", "control": "\u{01}\u{1f}",
            "unicode": "ünïcødé ✓ 🎉", "": "empty key", "slash": "a/b", "key with \"quote\"": "x",
        ]
        for details in [[:], ["one": "1"], tricky] {
            let text = EventsTable.payload(details)
            let decoded = try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
            #expect(decoded == details, "\(text)")
        }
        // The outbox's own reader reads them as the standard decoder does, without falling back.
        for details in [[:], ["one": "1"], tricky] {
            let text = EventsTable.payload(details)
            #expect(FlatPayloadReader.read(text) == details, "\(text)")
            #expect(try EventsTable.details(fromPayload: text) == details)
        }
        // Random details, characters from every class the writer escapes or passes through.
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab\"\\/\n\r\t\u{00}\u{01}\u{1f}\u{7f}é✓🎉 {}:,[]")
        for _ in 0..<500 {
            var details: [String: String] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                let key = String((0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
                details[key] = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            }
            let text = EventsTable.payload(details)
            #expect(FlatPayloadReader.read(text) == details, "\(text)")
        }
        // JSON the writer never makes is left to the standard decoder, which still reads it.
        for other in [#"{ "a": "1" }"#, #"{"a":"\u00e9"}"#, #"{"a":"1",}"#, #"{"a":1}"#, #"{"a":"1"} "#, #"{"a":"1""#, "", "{", #"{"a"}"#] {
            #expect(FlatPayloadReader.read(other) == nil, "\(other)")
        }
        #expect(try EventsTable.details(fromPayload: #"{ "a": "\u00e9" }"#) == ["a": "é"])
        #expect(throws: (any Error).self) { try EventsTable.details(fromPayload: #"{"a":1}"#) }
        // Keys are sorted, so the same details always make the same bytes.
        #expect(EventsTable.payload(["b": "2", "a": "1"]) == #"{"a":"1","b":"2"}"#)
    }
}

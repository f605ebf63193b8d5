import Foundation
import Testing

@testable import StorekeeperStorage

/// The outbox's hand-written JSON payloads read back exactly with a standard JSON decoder.
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
        // Keys are sorted, so the same details always make the same bytes.
        #expect(EventsTable.payload(["b": "2", "a": "1"]) == #"{"a":"1","b":"2"}"#)
    }
}

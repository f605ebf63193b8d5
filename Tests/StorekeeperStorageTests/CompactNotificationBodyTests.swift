import Foundation
import StorekeeperStorage
import Testing

/// Stored notification bodies give back exactly the bytes Apple sent, or are stored raw.
@Suite("Compact notification bodies")
struct CompactNotificationBodyTests {
    /// A JWS-shaped string: a long header (like an x5c chain), a payload, a signature.
    static func jws(header: String, payload: String) -> String {
        [
            base64URL(Data(header.utf8)), base64URL(Data(payload.utf8)),
            base64URL(Data((0..<64).map { UInt8($0) })),
        ].joined(separator: ".")
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static let chain = #"{"alg":"ES256","x5c":[""# + String(repeating: "MIIBkTCB+wIJAKHHIG", count: 60) + #""]}"#

    static func body(signedDate: Int, outer: String = chain, inner: String = chain, note: String = #"ünïcødé \"quoted\""#) -> String {
        let transaction = jws(header: inner, payload: #"{"transactionId":"2000000001","signedDate":\#(signedDate)}"#)
        let renewal = jws(header: inner, payload: #"{"autoRenewStatus":1,"signedDate":\#(signedDate)}"#)
        let payload =
            #"{"notificationType":"DID_RENEW","data":{"signedTransactionInfo":"\#(transaction)","signedRenewalInfo":"\#(renewal)"},"note":"\#(note)"}"#
        return #"{"signedPayload":""# + jws(header: outer, payload: payload) + #""}"#
    }

    @Test("a notification body round-trips byte for byte, its shared headers factored out")
    func roundTrip() throws {
        let first = Self.body(signedDate: 1)
        let second = Self.body(signedDate: 2)
        let a = try #require(CompactNotificationBody(body: first))
        let b = try #require(CompactNotificationBody(body: second))
        #expect(try CompactNotificationBody.expand(a.text, headers: a.headers) == first)
        #expect(try CompactNotificationBody.expand(b.text, headers: a.headers.merging(b.headers) { x, _ in x }) == second)
        // The outer and both inner JWS carry the same chain: one header, referenced three times.
        #expect(a.headers.count == 1)
        #expect(a.headers == b.headers)
        #expect(CompactNotificationBody.references(in: a.text) == Set(a.headers.keys))
        #expect(a.text.utf8.count * 2 < first.utf8.count)
    }

    @Test("bodies it cannot restore exactly are left raw")
    func leftRaw() throws {
        let body = Self.body(signedDate: 3)
        // Not a V2 body.
        #expect(CompactNotificationBody(body: #"{"notification_type":"RENEWAL","password":"x"}"#) == nil)
        // A control byte the markers would collide with.
        #expect(CompactNotificationBody(body: body.replacingOccurrences(of: "{\"signedPayload", with: "{\u{1}\"signedPayload")) == nil)
        // Not three segments.
        #expect(CompactNotificationBody(body: #"{"signedPayload":"abc.def"}"#) == nil)
        // A payload that is not base64url.
        #expect(CompactNotificationBody(body: #"{"signedPayload":"eyJh.**.c2ln"}"#) == nil)
        // Non-canonical base64url (stray low bits in the last character) decodes but would not re-encode the same.
        let parts = body.dropFirst(#"{"signedPayload":""#.count).dropLast(2).split(separator: ".").map(String.init)
        var payload = Array(parts[1])
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        if payload.count % 4 != 0, let value = alphabet.firstIndex(of: payload[payload.count - 1]) {
            payload[payload.count - 1] = alphabet[value | 1]
            let tweaked = #"{"signedPayload":""# + [parts[0], String(payload), parts[2]].joined(separator: ".") + #""}"#
            if tweaked != body { #expect(CompactNotificationBody(body: tweaked) == nil) }
        }
    }

    @Test("a stored body whose header is missing is an error, not a wrong body")
    func missingHeader() throws {
        let compact = try #require(CompactNotificationBody(body: Self.body(signedDate: 4)))
        #expect(throws: CompactNotificationBody.Malformed.self) { try CompactNotificationBody.expand(compact.text, headers: [:]) }
        #expect(throws: CompactNotificationBody.Malformed.self) {
            try CompactNotificationBody.expand(String(compact.text.dropLast(4).prefix(100)), headers: compact.headers)
        }
    }

    @Test("a digest cache shared across bodies gives exactly the stored text computed without it")
    func sharedDigestCache() throws {
        let cache = HeaderDigestCache(capacity: 2)
        let chains = [
            Self.chain, Self.chain.replacingOccurrences(of: "MIIB", with: "MIIC"), Self.chain.replacingOccurrences(of: "MIIB", with: "MIID"),
        ]
        for round in 0..<30 {
            // Three chains through a cache of two: hits, misses and evictions, outer and inner headers mixed.
            let body = Self.body(signedDate: round, outer: chains[round % 3], inner: chains[(round / 3) % 3])
            let plain = try #require(CompactNotificationBody(body: body))
            let cached = try #require(CompactNotificationBody(body: body, digests: cache))
            #expect(cached == plain, "round \(round)")
            #expect(try CompactNotificationBody.expand(cached.text, headers: cached.headers) == body)
        }
    }

    @Test("a marker byte anywhere in the body or its payload leaves it raw; other control bytes do not")
    func markerBytesAnywhere() throws {
        let body = Self.body(signedDate: 5)
        let bytes = Array(body.utf8)
        // Every alignment of the word-at-a-time scan, across the whole body.
        for position in stride(from: 0, to: bytes.count, by: 89) {
            for marker: UInt8 in [0x01, 0x02, 0x03] {
                var tweaked = bytes
                tweaked[position] = marker
                #expect(CompactNotificationBody(body: String(decoding: tweaked, as: UTF8.self)) == nil, "0x0\(marker) at \(position)")
            }
        }
        // Inside the base64url payload a raw marker is invisible until decoded.
        #expect(CompactNotificationBody(body: Self.body(signedDate: 6, note: "a\u{2}b")) == nil)
        // A byte just above the markers is not one.
        let four = Self.body(signedDate: 7, note: "a\u{4}b")
        let compact = try #require(CompactNotificationBody(body: four))
        #expect(try CompactNotificationBody.expand(compact.text, headers: compact.headers) == four)
    }
}

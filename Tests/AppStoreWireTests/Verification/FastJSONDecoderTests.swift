import AppStoreWire
import Foundation
import Testing

/// The fast payload decoder takes the plain JSON Apple sends, matches JSONDecoder exactly, and refuses the rest.
@Suite struct FastJSONDecoderTests {
    func fast<T: Decodable>(_ json: String, as type: T.Type) throws -> T? {
        try FastJSONDecoderProbe.decodesFast(Array(json.utf8), as: T.self)
    }

    func foundation<T: Decodable>(_ json: String, as type: T.Type) throws -> T {
        try AppStoreJSON.makeDecoder().decode(T.self, from: Data(json.utf8))
    }

    // MARK: Tests

    @Test func decodesEveryFixturePayloadLikeFoundation() throws {
        let payloads: [(String, [String: Any])] = [
            ("transaction", SigningFixtures.transaction()), ("renewal", SigningFixtures.renewalInfo()),
            ("app", SigningFixtures.appTransaction()),
            ("notification", SigningFixtures.notification(data: ["bundleId": "b", "environment": "Sandbox", "status": 4])),
        ]
        for (name, object) in payloads {
            let json = String(decoding: try JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
            switch name {
            case "transaction":
                let value = try #require(try fast(json, as: JWSTransactionDecodedPayload.self))
                #expect(value == (try foundation(json, as: JWSTransactionDecodedPayload.self)))
                #expect(value.price == 9990)
            case "renewal":
                let value = try #require(try fast(json, as: JWSRenewalInfoDecodedPayload.self))
                #expect(value == (try foundation(json, as: JWSRenewalInfoDecodedPayload.self)))
            case "app":
                let value = try #require(try fast(json, as: AppTransaction.self))
                #expect(value == (try foundation(json, as: AppTransaction.self)))
            default:
                let value = try #require(try fast(json, as: ResponseBodyV2DecodedPayload.self))
                #expect(value == (try foundation(json, as: ResponseBodyV2DecodedPayload.self)))
                #expect(value.data?.status == .billingGracePeriod)
            }
        }
    }

    @Test(.enabled(if: TestVectors.available))
    func decodesApplesModelFixturesLikeFoundation() throws {
        for name in ["signedTransaction", "signedRenewalInfo", "signedTransactionWithRevocation"] {
            let json = try TestVectors.string("models/\(name).json")
            if name == "signedRenewalInfo" {
                let value = try fast(json, as: JWSRenewalInfoDecodedPayload.self)
                let expected = try foundation(json, as: JWSRenewalInfoDecodedPayload.self)
                #expect(value == nil || value == expected)
            } else {
                let value = try fast(json, as: JWSTransactionDecodedPayload.self)
                let expected = try foundation(json, as: JWSTransactionDecodedPayload.self)
                #expect(value == nil || value == expected)
            }
        }
        for name in ["signedNotification", "signedSummaryNotification", "signedConsumptionRequestNotification"] {
            let json = try TestVectors.string("models/\(name).json")
            let value = try fast(json, as: ResponseBodyV2DecodedPayload.self)
            let expected = try foundation(json, as: ResponseBodyV2DecodedPayload.self)
            #expect(value == nil || value == expected)
        }
    }

    @Test func fractionalMillisecondDatesMatchFoundation() throws {
        let json = #"{"signedDate":1697679936056.485,"purchaseDate":1697679936049.7297,"environment":"Xcode"}"#
        let value = try #require(try fast(json, as: JWSTransactionDecodedPayload.self))
        #expect(value == (try foundation(json, as: JWSTransactionDecodedPayload.self)))
        #expect(value.signedDate == Date(timeIntervalSince1970: 1697679936056.485 / 1000))
    }

    @Test func refusesWhatItDoesNotHandle() throws {
        let refused = [
            #"{"productId":"a\"b"}"#,  // escapes
            #"{"productId":"a","productId":"b"}"#,  // duplicate keys
            #"{"quantity":1.0}"#,  // non-integer form for an integer
            #"{"quantity":1e0}"#,
            #"{"quantity":99999999999}"#,  // overflows Int32
            #"{"quantity":01}"#,  // leading zero
            #"{"productId":1}"#,  // type mismatch
            #"{"productId":"x"} extra"#,  // trailing garbage
            #"{"productId":"x",}"#,  // trailing comma
            "{\"productId\":\"\u{1}\"}",  // control character
            #"[]"#,  // not an object
            "",
        ]
        for json in refused {
            #expect(try fast(json, as: JWSTransactionDecodedPayload.self) == nil, "accepted: \(json)")
        }
        // Refused inputs that are valid JSON still decode through the fallback, exactly as JSONDecoder would.
        let escaped = #"{"productId":"a\"b","environment":"Sandbox"}"#
        let decoded = try AppStoreJSON.decodePayload(JWSTransactionDecodedPayload.self, from: Array(escaped.utf8))
        #expect(decoded.productId == "a\"b")
    }

    @Test func handlesNullsArraysAndNesting() throws {
        let json =
            #"{"productId":null,"eligibleWinBackOfferIds":["w1","w2"],"commitmentInfo":{"billingPeriodNumber":2,"totalBillingPeriods":12},"autoRenewStatus":1,"environment":"Sandbox","unknownKey":{"deep":[1,2,{"x":true}]}}"#
        let renewal = try #require(try fast(json, as: JWSRenewalInfoDecodedPayload.self))
        #expect(renewal == (try foundation(json, as: JWSRenewalInfoDecodedPayload.self)))
        #expect(renewal.eligibleWinBackOfferIds == ["w1", "w2"])
        #expect(renewal.productId == nil)
    }

    @Test func longStringsAreScannedAWordAtATimeWithoutMissingAByte() throws {
        for length in 0..<40 {
            let plain = String(repeating: "eyJhbGciOi", count: 4).prefix(length)
            let json = #"{"productId":"\#(plain)","environment":"Sandbox"}"#
            let value = try #require(try fast(json, as: JWSTransactionDecodedPayload.self), "length \(length)")
            #expect(value.productId == String(plain))
            // An escape, a control character or a non-ASCII byte at any offset sends the string to the fallback.
            for special in [#"\""#, "\u{1}", "\u{1F}", "é", #"\\"#] {
                let tweaked = #"{"productId":"\#(plain)\#(special)xxxxxxxxxxxxxxxxx","environment":"Sandbox"}"#
                #expect(try fast(tweaked, as: JWSTransactionDecodedPayload.self) == nil, "\(special.unicodeScalars.first!.value) after \(length)")
            }
        }
    }
}

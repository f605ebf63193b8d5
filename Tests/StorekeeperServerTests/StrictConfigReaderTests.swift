import Configuration
import Testing

@testable import StorekeeperServer

/// `StrictConfigReader` tells a missing key (nil, the default applies) from a value that is there but unusable (the
/// start stops, naming the key) by swift-configuration's description of a missing value, which is not a public type:
/// this pins that reading for every getter, so a swift-configuration release that words it otherwise fails here
/// instead of turning every missing key into a refused start (issue 30, item 15).
@Suite struct StrictConfigReaderTests {
    static func reader(_ values: [AbsoluteConfigKey: ConfigValue]) -> StrictConfigReader {
        StrictConfigReader(ConfigurationTests.reader(values))
    }

    @Test func aMissingKeyIsNilForEveryGetter() throws {
        let empty = Self.reader([:])
        #expect(try empty.string("a.b") == nil)
        #expect(try empty.int("a.b", in: 0...10) == nil)
        #expect(try empty.bool("a.b", default: true) == true)
        #expect(try empty.list("a.b") == nil)
        #expect(try empty.choice("a.b", ["x", "y"], default: "y") == "y")
        #expect(try empty.scoped(to: "a").string("b") == nil)
    }

    @Test func aValueOfTheWrongTypeStopsTheStartNamingTheKey() {
        let wrong = Self.reader(["a.number": "twelve", "a.flag": "perhaps", "a.list": 12, "a.choice": "z"])
        #expect(throws: ConfigurationError.invalid("a.number must be an integer")) { try wrong.int("a.number", in: 0...10) }
        #expect(throws: ConfigurationError.invalid("a.flag must be true or false")) { try wrong.bool("a.flag", default: false) }
        #expect(throws: ConfigurationError.self) { try wrong.list("a.list") }
        #expect(throws: ConfigurationError.invalid("a.choice must be x or y, not z")) { try wrong.choice("a.choice", ["x", "y"], default: "x") }
        #expect(throws: ConfigurationError.invalid("a.number must be an integer")) { try wrong.scoped(to: "a").int("number", in: 0...10) }
    }
}

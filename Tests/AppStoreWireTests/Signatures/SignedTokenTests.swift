import AppStoreWire
import Crypto
import Foundation
import Testing

/// The one token implementation: what it makes, it reads back; what it reads, it reads strictly.
@Suite struct SignedTokenTests {
    struct Claims: Codable, Equatable {
        var sub: String
        var n: Int
    }

    @Test func es256AndHS256RoundTripAndOnlyUnderTheirOwnKey() throws {
        let key = P256.Signing.PrivateKey()
        let es = try SignedToken.sign(header: SignedToken.Header(alg: "ES256", kid: "K1", typ: "JWT"), claims: Claims(sub: "ann", n: 1), with: key)
        let read = try SignedToken(es)
        #expect(read.header == SignedToken.Header(alg: "ES256", kid: "K1", typ: "JWT"))
        #expect(read.isSigned(by: key.publicKey))
        #expect(!read.isSigned(by: P256.Signing.PrivateKey().publicKey))
        #expect(try read.claims(Claims.self) == Claims(sub: "ann", n: 1))
        // An ES256 token is not an HS256 one, whatever the secret.
        #expect(!read.isSigned(by: SymmetricKey(size: .bits256)))

        let secret = SymmetricKey(data: Data("a shared secret of some length".utf8))
        let hs = try SignedToken(try SignedToken.sign(claims: Claims(sub: "bob", n: 2), with: secret))
        #expect(hs.header.alg == "HS256" && hs.isSigned(by: secret))
        #expect(!hs.isSigned(by: SymmetricKey(data: Data("another secret".utf8))))
        #expect(!hs.isSigned(by: key.publicKey))
    }

    @Test func aChangedPayloadOrASecondSpellingDoesNotVerify() throws {
        let key = P256.Signing.PrivateKey()
        let token = try SignedToken.sign(header: SignedToken.Header(alg: "ES256", kid: "K1"), claims: Claims(sub: "ann", n: 1), with: key)
        let parts = token.split(separator: ".").map(String.init)
        let other = Base64URL.encode(Array(#"{"n":1,"sub":"eve"}"#.utf8))
        #expect(try !SignedToken([parts[0], other, parts[2]].joined(separator: ".")).isSigned(by: key.publicKey))
        // Padding, four segments, an empty payload: refused before any key is asked.
        for bad in [token + "=", parts[0] + "=." + parts[1] + "." + parts[2], token + ".x", parts[0] + ".." + parts[2], "a.b"] {
            #expect(throws: SignedToken.Malformed.self, "\(bad)") { try SignedToken(bad) }
        }
        // A critical extension nobody here understands.
        let crit = Base64URL.encode(Array(#"{"alg":"ES256","crit":["exp"],"exp":1}"#.utf8))
        #expect(throws: SignedToken.Malformed.self) { try SignedToken(crit + "." + parts[1] + "." + parts[2]) }
        // Over the size limit.
        #expect(throws: SignedToken.Malformed.self) { try SignedToken(token, maximumLength: 20) }
        // alg none reads (so a caller can name it) and verifies under no key.
        let none = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + parts[1] + "."
        let unsigned = try SignedToken(none)
        #expect(unsigned.header.alg == "none" && !unsigned.isSigned(by: key.publicKey) && !unsigned.isSigned(by: SymmetricKey(size: .bits256)))
    }
}

import AppStoreWire
import Foundation
import Testing

/// Random and mutated inputs against every parser that sees untrusted bytes: none may crash, hang or accept
/// garbage as valid.
///
/// The default run feeds 1,000,000 inputs in total. For a longer run set `STOREKEEPER_FUZZ_SCALE` (a multiplier,
/// e.g. 20) and optionally `STOREKEEPER_FUZZ_SEED`:
/// `STOREKEEPER_FUZZ_SCALE=20 swift test -c release --filter FuzzTests`.
@Suite struct FuzzTests {
    static let scale = Int(ProcessInfo.processInfo.environment["STOREKEEPER_FUZZ_SCALE"] ?? "") ?? 1
    static let seed = UInt64(ProcessInfo.processInfo.environment["STOREKEEPER_FUZZ_SEED"] ?? "") ?? 0x5EED_2026

    /// SplitMix64: deterministic, so a failure reproduces from the seed.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Applies 1–4 random edits (flip, insert, delete, duplicate a run, truncate) to `input`.
    static func mutate(_ input: [UInt8], _ rng: inout Generator, alphabet: [UInt8]? = nil) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let byte = alphabet?.randomElement(using: &rng) ?? UInt8.random(in: 0...255, using: &rng)
            switch Int.random(in: 0..<6, using: &rng) {
            case 0 where !bytes.isEmpty:
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = byte
            case 1:
                bytes.insert(byte, at: Int.random(in: 0...bytes.count, using: &rng))
            case 2 where !bytes.isEmpty:
                bytes.remove(at: Int.random(in: 0..<bytes.count, using: &rng))
            case 3 where bytes.count > 2:
                let start = Int.random(in: 0..<bytes.count - 1, using: &rng)
                let end = Int.random(in: start..<min(bytes.count, start + 64), using: &rng)
                bytes.insert(contentsOf: bytes[start...end], at: Int.random(in: 0...bytes.count, using: &rng))
            case 4 where !bytes.isEmpty:
                bytes.removeLast(Int.random(in: 0..<bytes.count, using: &rng))
            default:
                bytes.append(byte)
            }
        }
        return bytes
    }

    static let base64URLAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=.".utf8)

    // MARK: Tests

    @Test func base64URLDecoderRoundTripsAndSurvivesGarbage() async {
        var rng = Generator(state: Self.seed)
        for index in 0..<(300_000 * Self.scale) {
            // Long synchronous loops would starve the other (async) tests sharing the cooperative pool.
            if index % 5_000 == 0 { await Task.yield() }
            let length = Int.random(in: 0...48, using: &rng)
            let original = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let encoded = Base64URL.encode(original)
            #expect(Base64URL.decode(encoded) == original)
            let mutated = Self.mutate(Array(encoded.utf8), &rng, alphabet: Self.base64URLAlphabet)
            if let decoded = Base64URL.decode(mutated) {
                // Canonical encoding: whatever decodes re-encodes to the same text, minus padding.
                #expect(Base64URL.encode(decoded) == String(decoding: mutated, as: UTF8.self).replacingOccurrences(of: "=", with: ""))
            }
        }
    }

    @Test func verifierSurvivesMutatedJWS() async throws {
        let fixtures = try SigningFixtures()
        let verifier = try fixtures.verifier()
        let original = Array(try fixtures.sign(SigningFixtures.transaction()).utf8)
        let signed = try fixtures.sign(SigningFixtures.transaction())
        let notification = Array(
            try fixtures.sign(
                SigningFixtures.notification(data: [
                    "bundleId": SigningFixtures.bundleId, "environment": "Sandbox", "signedTransactionInfo": signed,
                ])
            ).utf8
        )
        var rng = Generator(state: Self.seed ^ 1)
        for index in 0..<(200_000 * Self.scale) {
            let source = index % 2 == 0 ? original : notification
            let mutated = String(decoding: Self.mutate(source, &rng, alphabet: Self.base64URLAlphabet), as: UTF8.self)
            do {
                if index % 2 == 0 {
                    _ = try await verifier.verifyTransaction(mutated)
                } else {
                    _ = try await verifier.verifyNotification(mutated)
                }
                // Only an edit that changed nothing may verify: there is exactly one spelling of signed data.
                #expect(mutated == String(decoding: source, as: UTF8.self), "a mutated JWS verified: \(mutated)")
            } catch {
                #expect(!error.message.isEmpty)
            }
        }
    }

    /// Whenever the fast JSON decoder accepts an input, Foundation's JSONDecoder must decode the same value.
    func expectAgreement<T: Decodable & Equatable>(_ bytes: [UInt8], as type: T.Type, fastCount: inout Int) {
        guard let fast = try? FastJSONDecoderProbe.decodesFast(bytes, as: T.self) else { return }
        fastCount += 1
        let foundation = try? AppStoreJSON.makeDecoder().decode(T.self, from: Data(bytes))
        #expect(foundation == fast, "fast decoder disagrees with JSONDecoder on \(String(decoding: bytes, as: UTF8.self))")
    }

    @Test func fastJSONDecoderAgreesWithFoundationOnMutatedPayloads() async throws {
        var rng = Generator(state: Self.seed ^ 2)
        var seeds: [[UInt8]] = try [
            SigningFixtures.transaction(), SigningFixtures.renewalInfo(), SigningFixtures.appTransaction(),
            SigningFixtures.notification(data: ["bundleId": "b", "environment": "Sandbox", "status": 1]),
        ].map { Array(try JSONSerialization.data(withJSONObject: $0, options: .sortedKeys)) }
        // Edge cases as seeds too: fractional and negative numbers, exponents, nested objects and arrays.
        seeds.append(
            Array(
                #"{"signedDate":1697679936056.485,"quantity":-1,"price":0,"expiresDate":1.5e12,"eligibleWinBackOfferIds":["a","b"],"commitmentInfo":{"billingPeriodNumber":3}}"#
                    .utf8
            )
        )
        let jsonAlphabet = Array("{}[]\":,0123456789.eE-+truefalsnl \\u".utf8)
        var fastCount = 0
        for index in 0..<(150_000 * Self.scale) {
            if index % 2_000 == 0 { await Task.yield() }
            let source = seeds[index % seeds.count]
            let mutated = index % 7 == 0 ? source : Self.mutate(source, &rng, alphabet: index % 3 == 0 ? nil : jsonAlphabet)
            switch index % 4 {
            case 0: expectAgreement(mutated, as: JWSTransactionDecodedPayload.self, fastCount: &fastCount)
            case 1: expectAgreement(mutated, as: JWSRenewalInfoDecodedPayload.self, fastCount: &fastCount)
            case 2: expectAgreement(mutated, as: AppTransaction.self, fastCount: &fastCount)
            default: expectAgreement(mutated, as: ResponseBodyV2DecodedPayload.self, fastCount: &fastCount)
            }
            // The full path (fast, then Foundation) never crashes whatever the input.
            _ = try? AppStoreJSON.decodePayload(JWSTransactionDecodedPayload.self, from: mutated)
        }
        // The comparison only means something if the fast path actually ran on many inputs.
        #expect(fastCount > 150_000 * Self.scale / 20)
    }

    @Test func receiptParsersSurviveMutatedInput() async throws {
        var rng = Generator(state: Self.seed ^ 3)
        var seeds = [try AppReceiptParserTests.sampleReceiptBytes()]
        if TestVectors.available {
            for name in ["xcode/xcode-app-receipt-empty", "xcode/xcode-app-receipt-with-transaction"] {
                seeds.append(Array(try #require(Data(base64Encoded: try TestVectors.string(name)))))
            }
        }
        let parser = AppReceiptParser()
        var parsed = 0
        for index in 0..<(300_000 * Self.scale) {
            if index % 2_000 == 0 { await Task.yield() }
            let mutated = Self.mutate(seeds[index % seeds.count], &rng)
            if (try? parser.parse(mutated)) != nil { parsed += 1 }
        }
        // Most random edits break the structure; a parser that accepted anything would fail this.
        #expect(parsed < 300_000 * Self.scale / 2)

        let legacy = Array(
            Data(#"{ "purchase-info" = "ewoJInRyYW5zYWN0aW9uLWlkIiA9ICIzMzk5MzM5OSI7Cn0="; "environment" = "Sandbox"; }"#.utf8)
                .base64EncodedString().utf8
        )
        for _ in 0..<(50_000 * Self.scale) {
            let mutated = String(decoding: Self.mutate(legacy, &rng), as: UTF8.self)
            _ = try? TransactionReceipt(base64Encoded: mutated)
        }
    }
}

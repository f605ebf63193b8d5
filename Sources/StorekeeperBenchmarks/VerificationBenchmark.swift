import AppStoreTestSigning
import AppStoreWire
import Crypto
import Foundation

/// Measures JWS verification on an Apple-shaped chain (P-384 root and intermediate, P-256 leaf).
///
/// Reports the raw P-256 ECDSA floor, warm (cached chain) and cold (fresh verifier, full path validation)
/// single-thread costs, and warm throughput on several threads.
public struct VerificationBenchmark: Sendable {
    /// One measured figure.
    public struct Figure: Sendable, Codable {
        public let name: String
        public let iterations: Int
        public let threads: Int
        /// Wall-clock microseconds per operation in the best round (per thread for single-thread figures,
        /// aggregate otherwise). Noise on a shared machine only ever adds time, so the best round is the most
        /// repeatable figure; the median is reported beside it.
        public let microsecondsPerOperation: Double
        /// The median round.
        public let medianMicrosecondsPerOperation: Double
        /// Operations per second in the best round.
        public let operationsPerSecond: Double
    }

    public var iterations: Int
    public var coldIterations: Int
    public var threads: Int
    /// Each figure is measured this many times.
    public var rounds: Int

    public init(iterations: Int = 20_000, coldIterations: Int = 300, threads: Int = 2, rounds: Int = 5) {
        self.iterations = iterations
        self.coldIterations = coldIterations
        self.threads = threads
        self.rounds = max(1, rounds)
    }

    /// A realistic signed transaction and a verifier pinned to its chain's root.
    public static func fixture() throws -> (jws: String, configuration: SignedDataVerifier.Configuration) {
        let chain = try AppStoreSigningChain.generate()
        let now = Date()
        let transaction = JWSTransactionDecodedPayload.benchmarkSample(now: now)
        let jws = try chain.signer().sign(transaction)
        let configuration = SignedDataVerifier.Configuration(
            bundleId: "com.example.storekeeper",
            appAppleId: 1_234_567_890,
            environments: [.sandbox, .production],
            roots: try TrustedRoots.only([chain.root]),
            deployment: .development
        )
        return (jws, configuration)
    }

    public func run() async throws -> [Figure] {
        let (jws, configuration) = try Self.fixture()
        var figures: [Figure] = []

        // The floor: one P-256 ECDSA verification of a SHA-256 digest.
        let key = P256.Signing.PrivateKey()
        let digest = SHA256.hash(data: Data(jws.utf8))
        let signature = try key.signature(for: digest)
        let publicKey = key.publicKey
        figures.append(
            measure("p256-ecdsa-verify (floor)", iterations: iterations, threads: 1) {
                precondition(publicKey.isValidSignature(signature, for: digest))
            }
        )

        // Where the rest goes: the pieces of a warm verification, each on its own.
        let parts = jws.split(separator: ".").map(String.init)
        let payloadBytes = Base64URL.decode(parts[1]) ?? []
        let decoder = AppStoreJSON.makeDecoder()
        let fallback = try decoder.decode(JWSTransactionDecodedPayload.self, from: Data(payloadBytes))
        // The fast decoder must take this payload, and agree with Foundation on it.
        let fast = try FastJSONDecoderProbe.decodesFast(payloadBytes, as: JWSTransactionDecodedPayload.self)
        guard fast == fallback else { throw BenchmarkFailure(description: "fast JSON decoder disagrees with Foundation") }
        figures.append(
            measure("  part: base64url-decode payload", iterations: iterations, threads: 1) {
                precondition(Base64URL.decode(parts[1]) != nil)
            }
        )
        figures.append(
            try measure("  part: JSON-decode payload (Storekeeper)", iterations: iterations, threads: 1) {
                _ = try AppStoreJSON.decodePayload(JWSTransactionDecodedPayload.self, from: payloadBytes)
            }
        )
        figures.append(
            try measure("  part: JSON-decode payload (Foundation JSONDecoder)", iterations: iterations, threads: 1) {
                _ = try decoder.decode(JWSTransactionDecodedPayload.self, from: Data(payloadBytes))
            }
        )
        let signingInput = Data((parts[0] + "." + parts[1]).utf8)
        figures.append(
            measure("  part: SHA-256 of signing input (\(signingInput.count) B)", iterations: iterations, threads: 1) {
                _ = SHA256.hash(data: signingInput)
            }
        )
        figures.append(
            measure("  part: hash protected header (\(parts[0].utf8.count) B)", iterations: iterations, threads: 1) {
                var hasher = Hasher()
                hasher.combine(parts[0])
                _ = hasher.finalize()
            }
        )

        let verifier = try SignedDataVerifier(configuration: configuration)
        _ = try await verifier.verifyTransaction(jws)  // warm the chain cache
        figures.append(
            try await measureAsync("verify+decode transaction, warm cache", iterations: iterations, threads: 1) {
                _ = try await verifier.verifyTransaction(jws)
            }
        )
        figures.append(
            try await measureAsync("verify+decode transaction, cold (new verifier each time)", iterations: coldIterations, threads: 1) {
                let fresh = try SignedDataVerifier(configuration: configuration)
                _ = try await fresh.verifyTransaction(jws)
            }
        )
        if threads > 1 {
            figures.append(
                try await measureAsync("verify+decode transaction, warm cache", iterations: iterations, threads: threads) {
                    _ = try await verifier.verifyTransaction(jws)
                }
            )
        }
        return figures
    }

    private func measure(_ name: String, iterations: Int, threads: Int, _ body: () throws -> Void) rethrows -> Figure {
        let clock = ContinuousClock()
        var rounds: [Duration] = []
        for _ in 0..<self.rounds {
            let start = clock.now
            for _ in 0..<iterations { try body() }
            rounds.append(clock.now - start)
        }
        return figure(name, iterations: iterations, threads: threads, rounds: rounds)
    }

    private func measureAsync(
        _ name: String,
        iterations: Int,
        threads: Int,
        _ body: @escaping @Sendable () async throws -> Void
    ) async throws -> Figure {
        let clock = ContinuousClock()
        let perThread = iterations / threads
        var rounds: [Duration] = []
        for _ in 0..<self.rounds {
            let start = clock.now
            let failures = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<threads {
                    group.addTask {
                        var failures = 0
                        for _ in 0..<perThread {
                            do { try await body() } catch { failures += 1 }
                        }
                        return failures
                    }
                }
                return await group.reduce(0, +)
            }
            rounds.append(clock.now - start)
            // A benchmark that measured failures would report a meaningless figure.
            guard failures == 0 else {
                throw BenchmarkFailure(description: "\(failures) of \(iterations) operations failed in \(name)")
            }
        }
        return figure(name, iterations: perThread * threads, threads: threads, rounds: rounds)
    }

    private func figure(_ name: String, iterations: Int, threads: Int, rounds: [Duration]) -> Figure {
        let perOperation = rounds.map { elapsed in
            (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) / Double(iterations) * 1e6
        }.sorted()
        let best = perOperation[0]
        return Figure(
            name: name,
            iterations: iterations,
            threads: threads,
            microsecondsPerOperation: best,
            medianMicrosecondsPerOperation: perOperation[perOperation.count / 2],
            operationsPerSecond: 1e6 / best
        )
    }
}

/// A benchmark whose operations did not succeed.
public struct BenchmarkFailure: Error, CustomStringConvertible, Sendable {
    public let description: String
}

extension JWSTransactionDecodedPayload {
    /// A renewal of a monthly subscription with every field a real one carries.
    static func benchmarkSample(now: Date) -> JWSTransactionDecodedPayload {
        JWSTransactionDecodedPayload(
            transactionId: "2000000812345678",
            originalTransactionId: "2000000712345678",
            webOrderLineItemId: "2000000098765432",
            bundleId: "com.example.storekeeper",
            productId: "com.example.storekeeper.vip.monthly",
            subscriptionGroupIdentifier: "21345678",
            purchaseDate: now.addingTimeInterval(-60),
            originalPurchaseDate: now.addingTimeInterval(-86_400 * 90),
            expiresDate: now.addingTimeInterval(86_400 * 30),
            quantity: 1,
            type: .autoRenewable,
            appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138",
            inAppOwnershipType: .purchased,
            signedDate: now,
            offerType: nil,
            environment: .production,
            storefront: "USA",
            storefrontId: "143441",
            transactionReason: .renewal,
            price: 9990,
            currency: "USD",
            appTransactionId: "704289572311513419"
        )
    }
}

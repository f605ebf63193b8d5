import AppStoreWire
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Sends Apple's realtime retention requests to the developer's Get Retention Message endpoint — one when a
/// customer is about to cancel, or a performance test's many — and judges the answers as Apple does: within the
/// time limit, exactly one answer, approved messages, a product of the same group, an offer signed with the
/// developer's key. A failed answer shows the default message.
public struct RetentionRequestSender: Sendable {
    public let store: SimulatedAppStore
    public let httpClient: HTTPClient
    /// The developer's keys, to check promotional-offer signatures (nil: offers are never shown).
    public let offers: OfferSignatureChecker?

    /// How long Apple waits for an answer before it shows the default message: the store's
    /// ``SimulatedAppStore/retentionResponseLimit``.
    public init(store: SimulatedAppStore, httpClient: HTTPClient, offers: OfferSignatureChecker?) {
        self.store = store
        self.httpClient = httpClient
        self.offers = offers
    }

    private struct OfferClaims: Decodable { var offerIdentifier: String? }

    /// A customer of `originalTransactionId` with `locale` opens the subscription's page and taps Cancel: what
    /// they are shown.
    public func send(originalTransactionId: String, locale: String) async throws -> RetentionDisplay {
        let request = try await store.realtimeRetentionRequest(originalTransactionId: originalTransactionId, locale: locale)
        let (status, body, milliseconds) = await post(request.body, to: request.url, timeout: await store.retentionResponseLimit)
        return await store.judgeRetentionAnswer(
            request.payload,
            status: status,
            body: body,
            milliseconds: milliseconds,
            offerCheck: offerCheck(bundleId: await store.catalog.bundleId)
        )
    }

    /// The check of a V2 promotional-offer JWS the judge runs: the offer id it verifies for, or nil.
    func offerCheck(bundleId: String) -> (@Sendable (String, String, Set<String>) -> String?)? {
        guard let offers else { return nil }
        return { jws, productId, customerIds in
            guard let claims = try? SignedDataVerifier.decodeUnverifiedPayload(jws, as: OfferClaims.self),
                let offerId = claims.offerIdentifier,
                let verified = try? offers.checkPromotionalOfferV2(
                    jws,
                    bundleId: bundleId,
                    productId: productId,
                    offerIdentifier: offerId,
                    customerTransactionIds: customerIds,
                    now: Date()
                ),
                // Apple requires the transaction claim in retention answers: the subscriber's own.
                verified.transactionId != nil
            else { return nil }
            return offerId
        }
    }

    /// POSTs `body`; the status (nil when no answer came in time), the body and the milliseconds it took.
    func post(_ body: Data, to url: String, timeout: Int64) async -> (Int?, Data?, Double) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        let clock = ContinuousClock()
        let started = clock.now
        func elapsed() -> Double {
            let duration = clock.now - started
            return Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
        }
        do {
            let response = try await httpClient.execute(request, timeout: .milliseconds(timeout))
            let bytes = try await response.body.collect(upTo: 64 * 1024)
            return (Int(response.status.code), Data(bytes.readableBytesView), elapsed())
        } catch {
            return (nil, nil, elapsed())
        }
    }

    /// Runs performance test `id` to its end: its requests, `maxConcurrentRequests` at a time, each judged; the
    /// result (response-time percentiles, success rate, failures by kind) is stored for Get Performance Test
    /// Results.
    public func runPerformanceTest(_ id: String, originalTransactionId: String) async {
        let config = (try? await store.retentionPerformanceTest(id).config) ?? SimulatedAppStore.performanceTestConfig
        let total = Int(config.totalRequests ?? 0)
        let concurrency = max(1, Int(config.maxConcurrentRequests ?? 1))
        let threshold = Double(config.responseTimeThreshold ?? 700)
        let bundleId = await store.catalog.bundleId
        let check = offerCheck(bundleId: bundleId)
        let target = try? await store.retentionPerformanceTest(id).target
        var times: [Double] = []
        var failures: [String: Int32] = [:]
        await withTaskGroup(of: (Double, String?).self) { group in
            var started = 0
            func launch() {
                guard started < total else { return }
                started += 1
                group.addTask {
                    guard
                        let request = try? await store.realtimeRetentionRequest(
                            originalTransactionId: originalTransactionId,
                            locale: "en-US",
                            url: target
                        )
                    else {
                        return (0, "OTHER")
                    }
                    let (status, body, milliseconds) = await post(request.body, to: request.url, timeout: Int64(threshold))
                    guard let status else { return (milliseconds, milliseconds >= threshold ? "TIMED_OUT" : "NO_RESPONSE") }
                    guard status == 200 else { return (milliseconds, "UNSUCCESSFUL_HTTP_RESPONSE_CODE") }
                    guard milliseconds <= threshold else { return (milliseconds, "TIMED_OUT") }
                    let display = await store.judgeRetentionAnswer(
                        request.payload,
                        status: status,
                        body: body,
                        milliseconds: milliseconds,
                        offerCheck: check
                    )
                    return (milliseconds, display.failure == nil ? nil : "INVALID_RESPONSE")
                }
            }
            for _ in 0..<concurrency { launch() }
            for await (milliseconds, failure) in group {
                times.append(milliseconds)
                if let failure { failures[failure, default: 0] += 1 }
                launch()
            }
        }
        let sorted = times.sorted()
        func percentile(_ p: Double) -> Int64 {
            guard !sorted.isEmpty else { return 0 }
            let index = min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))
            return Int64(sorted[index].rounded())
        }
        let failed = failures.values.reduce(0, +)
        let successRate = total == 0 ? 0 : Int32((Double(total - Int(failed)) * 100 / Double(total)).rounded(.down))
        let average = sorted.isEmpty ? 0 : Int64((sorted.reduce(0, +) / Double(sorted.count)).rounded())
        await store.finishRetentionPerformanceTest(
            id,
            result: PerformanceTestResultResponse(
                config: config,
                target: target,
                result: successRate >= (config.successRateThreshold ?? 100) ? .pass : .fail,
                successRate: successRate,
                numPending: 0,
                responseTimes: PerformanceTestResponseTimes(
                    average: average,
                    p50: percentile(0.50),
                    p90: percentile(0.90),
                    p95: percentile(0.95),
                    p99: percentile(0.99)
                ),
                failures: failures
            )
        )
    }
}

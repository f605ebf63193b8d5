import Synchronization

/// Switchable faults on Apple's endpoints: Server API errors and rate limits, verifyReceipt statuses.
public final class AppleEndpointFaults: Sendable {
    /// What the next requests should suffer.
    public struct Settings: Sendable, Hashable, Codable {
        /// Answer this many upcoming Server API requests with 500 / `GeneralInternalRetryable` (5000001).
        public var serverErrorNext: Int
        /// Answer this many upcoming Server API requests with 429 / `RateLimitExceeded` and a `Retry-After`.
        public var rateLimitNext: Int
        /// Seconds (real time: clients wait on their own clocks) until a rate-limited client may retry.
        public var retryAfterSeconds: Int
        /// Statuses the next verifyReceipt calls answer with instead of the real one (e.g. 21005, 21100).
        public var verifyReceiptStatuses: [Int]

        /// Hours past the day's end before App Store Connect serves a day's report (Apple's are late some days).
        public var reportDelayHours: Int
        /// Answer this many upcoming report downloads with 404 "not available yet" whatever the date.
        public var reportNotAvailableNext: Int
        /// Answer this many upcoming report downloads with a body that is not a gzip report.
        public var reportMalformedNext: Int

        public init(
            serverErrorNext: Int = 0,
            rateLimitNext: Int = 0,
            retryAfterSeconds: Int = 60,
            verifyReceiptStatuses: [Int] = [],
            reportDelayHours: Int = 0,
            reportNotAvailableNext: Int = 0,
            reportMalformedNext: Int = 0
        ) {
            self.serverErrorNext = serverErrorNext
            self.rateLimitNext = rateLimitNext
            self.retryAfterSeconds = retryAfterSeconds
            self.verifyReceiptStatuses = verifyReceiptStatuses
            self.reportDelayHours = reportDelayHours
            self.reportNotAvailableNext = reportNotAvailableNext
            self.reportMalformedNext = reportMalformedNext
        }

        // Every field may be left out of the control API's JSON.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                serverErrorNext: try container.decodeIfPresent(Int.self, forKey: .serverErrorNext) ?? 0,
                rateLimitNext: try container.decodeIfPresent(Int.self, forKey: .rateLimitNext) ?? 0,
                retryAfterSeconds: try container.decodeIfPresent(Int.self, forKey: .retryAfterSeconds) ?? 60,
                verifyReceiptStatuses: try container.decodeIfPresent([Int].self, forKey: .verifyReceiptStatuses) ?? [],
                reportDelayHours: min(max(try container.decodeIfPresent(Int.self, forKey: .reportDelayHours) ?? 0, 0), 24 * 30),
                reportNotAvailableNext: try container.decodeIfPresent(Int.self, forKey: .reportNotAvailableNext) ?? 0,
                reportMalformedNext: try container.decodeIfPresent(Int.self, forKey: .reportMalformedNext) ?? 0
            )
        }
    }

    enum ReportFault {
        case notAvailable
        case malformed
    }

    func takeReportFault() -> ReportFault? {
        state.withLock { settings in
            if settings.reportNotAvailableNext > 0 {
                settings.reportNotAvailableNext -= 1
                return .notAvailable
            }
            if settings.reportMalformedNext > 0 {
                settings.reportMalformedNext -= 1
                return .malformed
            }
            return nil
        }
    }

    enum APIFault {
        case serverError
        case rateLimited(retryAfterSeconds: Int)
    }

    private let state = Mutex(Settings())

    public init() {}

    public var settings: Settings {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }

    func takeAPIFault() -> APIFault? {
        state.withLock { settings in
            if settings.rateLimitNext > 0 {
                settings.rateLimitNext -= 1
                return .rateLimited(retryAfterSeconds: settings.retryAfterSeconds)
            }
            if settings.serverErrorNext > 0 {
                settings.serverErrorNext -= 1
                return .serverError
            }
            return nil
        }
    }

    func takeVerifyReceiptStatus() -> Int? {
        state.withLock { $0.verifyReceiptStatuses.isEmpty ? nil : $0.verifyReceiptStatuses.removeFirst() }
    }
}

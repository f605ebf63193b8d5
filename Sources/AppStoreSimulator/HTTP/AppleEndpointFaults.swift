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

        public init(serverErrorNext: Int = 0, rateLimitNext: Int = 0, retryAfterSeconds: Int = 60, verifyReceiptStatuses: [Int] = []) {
            self.serverErrorNext = serverErrorNext
            self.rateLimitNext = rateLimitNext
            self.retryAfterSeconds = retryAfterSeconds
            self.verifyReceiptStatuses = verifyReceiptStatuses
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

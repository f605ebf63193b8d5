import Foundation

/// Whether Apple approved an uploaded message (`messageState`) or image (`imageState`); sandbox approves at once.
public struct RetentionReviewState: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let pending: Self = "PENDING"
    public static let approved: Self = "APPROVED"
    public static let rejected: Self = "REJECTED"

    public static let knownValues: [Self] = [.pending, .approved, .rejected]
}

/// An image's use (`imageSize`, API 1.4): 3840 px wide and 160–2160 px high, or a 1024×1024 bullet icon.
public struct RetentionImageSize: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let fullSize: Self = "FULL_SIZE"
    public static let bulletPoint: Self = "BULLET_POINT"

    public static let knownValues: [Self] = [.fullSize, .bulletPoint]
}

/// Where a message's header sits (`headerPosition`, API 1.4).
public struct RetentionHeaderPosition: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let aboveBody: Self = "ABOVE_BODY"
    public static let aboveImage: Self = "ABOVE_IMAGE"

    public static let knownValues: [Self] = [.aboveBody, .aboveImage]
}

/// The body of Upload Message.
public struct UploadMessageRequestBody: Codable, Sendable, Hashable {
    /// The longest header, body, alt text and bullet text Apple accepts, and the most bullets.
    public static let maximumHeader = 66
    public static let maximumBody = 144
    public static let maximumAltText = 150
    public static let maximumBulletText = 66
    public static let maximumBullets = 5

    public var header: String
    public var body: String
    public var image: UploadMessageImage?
    public var headerPosition: RetentionHeaderPosition?
    public var bulletPoints: [RetentionBulletPoint]?

    public init(
        header: String,
        body: String,
        image: UploadMessageImage? = nil,
        headerPosition: RetentionHeaderPosition? = nil,
        bulletPoints: [RetentionBulletPoint]? = nil
    ) {
        self.header = header
        self.body = body
        self.image = image
        self.headerPosition = headerPosition
        self.bulletPoints = bulletPoints
    }
}

/// A message's image and its alternative text.
public struct UploadMessageImage: Codable, Sendable, Hashable {
    public var imageIdentifier: String
    public var altText: String

    public init(imageIdentifier: String, altText: String) {
        self.imageIdentifier = imageIdentifier
        self.altText = altText
    }
}

/// A bullet point: its text and a bullet-size image.
public struct RetentionBulletPoint: Codable, Sendable, Hashable {
    public var text: String
    public var imageIdentifier: String
    public var altText: String

    public init(text: String, imageIdentifier: String, altText: String) {
        self.text = text
        self.imageIdentifier = imageIdentifier
        self.altText = altText
    }
}

/// Get Message List.
public struct GetMessageListResponse: Codable, Sendable, Hashable {
    public struct Item: Codable, Sendable, Hashable {
        public var messageIdentifier: String?
        public var messageState: RetentionReviewState?

        public init(messageIdentifier: String?, messageState: RetentionReviewState?) {
            self.messageIdentifier = messageIdentifier
            self.messageState = messageState
        }
    }

    public var messageIdentifiers: [Item]?

    public init(messageIdentifiers: [Item]?) { self.messageIdentifiers = messageIdentifiers }
}

/// Get Image List.
public struct GetImageListResponse: Codable, Sendable, Hashable {
    public struct Item: Codable, Sendable, Hashable {
        public var imageIdentifier: String?
        public var imageState: RetentionReviewState?
        public var imageSize: RetentionImageSize?

        public init(imageIdentifier: String?, imageState: RetentionReviewState?, imageSize: RetentionImageSize?) {
            self.imageIdentifier = imageIdentifier
            self.imageState = imageState
            self.imageSize = imageSize
        }
    }

    public var imageIdentifiers: [Item]?

    public init(imageIdentifiers: [Item]?) { self.imageIdentifiers = imageIdentifiers }
}

/// The body of Configure Default Message, and the answer of Get Default Message.
public struct DefaultConfigurationRequest: Codable, Sendable, Hashable {
    public var messageIdentifier: String?

    public init(messageIdentifier: String?) { self.messageIdentifier = messageIdentifier }
}

/// Configure Realtime URL's body and Get Realtime URL's answer (note Apple's capital `URL`).
public struct RealtimeUrlRequest: Codable, Sendable, Hashable {
    public static let maximumLength = 256

    public var realtimeURL: String?

    public init(realtimeURL: String?) { self.realtimeURL = realtimeURL }
}

/// Initiate Performance Test's body: an active sandbox subscription to send the test's requests about.
public struct PerformanceTestRequest: Codable, Sendable, Hashable {
    public var originalTransactionId: String

    public init(originalTransactionId: String) { self.originalTransactionId = originalTransactionId }
}

/// How a performance test is run and judged.
public struct PerformanceTestConfig: Codable, Sendable, Hashable {
    public var maxConcurrentRequests: Int64?
    public var totalRequests: Int64?
    /// Milliseconds.
    public var totalDuration: Int64?
    /// Milliseconds a response may take.
    public var responseTimeThreshold: Int64?
    /// Percent of requests that must succeed.
    public var successRateThreshold: Int32?

    public init(
        maxConcurrentRequests: Int64?,
        totalRequests: Int64?,
        totalDuration: Int64?,
        responseTimeThreshold: Int64?,
        successRateThreshold: Int32?
    ) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.totalRequests = totalRequests
        self.totalDuration = totalDuration
        self.responseTimeThreshold = responseTimeThreshold
        self.successRateThreshold = successRateThreshold
    }
}

/// Initiate Performance Test's answer.
public struct PerformanceTestResponse: Codable, Sendable, Hashable {
    public var config: PerformanceTestConfig?
    public var requestId: String?

    public init(config: PerformanceTestConfig?, requestId: String?) {
        self.config = config
        self.requestId = requestId
    }
}

/// `PENDING` while a performance test runs, then `PASS` or `FAIL`.
public struct PerformanceTestStatus: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let pending: Self = "PENDING"
    public static let pass: Self = "PASS"
    public static let fail: Self = "FAIL"

    public static let knownValues: [Self] = [.pending, .pass, .fail]
}

/// Response times of a performance test, in milliseconds.
public struct PerformanceTestResponseTimes: Codable, Sendable, Hashable {
    public var average: Int64?
    public var p50: Int64?
    public var p90: Int64?
    public var p95: Int64?
    public var p99: Int64?

    public init(average: Int64?, p50: Int64?, p90: Int64?, p95: Int64?, p99: Int64?) {
        self.average = average
        self.p50 = p50
        self.p90 = p90
        self.p95 = p95
        self.p99 = p99
    }
}

/// Get Performance Test Results.
public struct PerformanceTestResultResponse: Codable, Sendable, Hashable {
    public var config: PerformanceTestConfig?
    /// The URL tested.
    public var target: String?
    public var result: PerformanceTestStatus?
    /// Percent.
    public var successRate: Int32?
    public var numPending: Int32?
    public var responseTimes: PerformanceTestResponseTimes?
    /// Failed attempts by kind (`TIMED_OUT`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, `INVALID_RESPONSE`, ...).
    public var failures: [String: Int32]?

    public init(
        config: PerformanceTestConfig?,
        target: String?,
        result: PerformanceTestStatus?,
        successRate: Int32?,
        numPending: Int32?,
        responseTimes: PerformanceTestResponseTimes?,
        failures: [String: Int32]?
    ) {
        self.config = config
        self.target = target
        self.result = result
        self.successRate = successRate
        self.numPending = numPending
        self.responseTimes = responseTimes
        self.failures = failures
    }
}

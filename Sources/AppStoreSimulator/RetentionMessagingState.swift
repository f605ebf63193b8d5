import AppStoreWire
import Foundation

/// What the simulated App Store keeps for the Retention Messaging API: uploaded images and messages with their
/// review state, default messages per product and locale, the realtime URL, performance tests, and every realtime
/// request with what the customer was shown.
struct RetentionMessagingState: Sendable {
    struct Image: Sendable {
        var size: RetentionImageSize
        var state: RetentionReviewState
    }

    struct Message: Sendable {
        var body: UploadMessageRequestBody
        var state: RetentionReviewState
    }

    var images: [String: Image] = [:]
    var messages: [String: Message] = [:]
    /// Default message ids by `productId|locale`.
    var defaults: [String: String] = [:]
    var realtimeURL: String?
    /// The URL last asked for in production before a performance test passed: the one the test runs against.
    var candidateURL: String?
    var performanceTests: [String: PerformanceTestResultResponse] = [:]
    var performanceTestPassed = false
    /// How long Apple waits for an answer, in milliseconds (700, Apple's figure; tests raise it so that a loaded
    /// machine does not decide their outcome — speed is measured by `storekeeper bench-retention`).
    var responseLimit: Int64 = 700
    var shown: [RetentionDisplay] = []

    static let maximumImages = 2_000
    static let maximumMessages = 2_000
}

/// An error of the Retention Messaging API: Apple's HTTP status, `errorCode` and message.
public struct RetentionAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    public let status: Int
    public let code: Int32
    public let message: String

    public var description: String { "\(status) \(code): \(message)" }
}

/// What a customer about to cancel was shown after one realtime request, and why.
public struct RetentionDisplay: Sendable, Hashable {
    public enum Shown: Sendable, Hashable {
        /// The developer's message.
        case message(id: String)
        /// A switch-plan message and the product it suggests.
        case alternateProduct(messageId: String, productId: String, billingPlan: BillingPlanType?)
        /// A promotional-offer message and the offer, whose signature checked out.
        case promotionalOffer(messageId: String, offerId: String)
        /// The product and locale's default message (or nothing, when none is configured): the answer failed.
        case defaultMessage(id: String?)
    }

    public let requestIdentifier: String
    public let originalTransactionId: String
    public let locale: String
    public let shown: Shown
    /// Why the developer's answer was not used; nil when it was.
    public let failure: String?
    /// Milliseconds the developer's endpoint took.
    public let milliseconds: Double
}

import AppStoreWire
import Foundation

/// Apple's record of sending one notification: every attempt, and when the next retry is due.
struct DeliveryRecord: Sendable {
    var attempts: [SendAttemptItem] = []
    /// `nil` once delivered, dropped, or out of retries.
    var nextAttempt: Date?

    /// V2 retries after the previous attempt: +1 h, +12 h, +24 h, +48 h, +72 h (reference §3).
    static let retrySchedule: [TimeInterval] = [3_600, 12 * 3_600, 24 * 3_600, 48 * 3_600, 72 * 3_600]

    var delivered: Bool { attempts.contains { $0.sendAttemptResult == .success } }
}

/// A notification whose send attempt is due.
public struct DueDelivery: Sendable, Hashable {
    public let notificationUUID: String
    public let signedPayload: String
}

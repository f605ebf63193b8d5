import Foundation

/// One attempt of the App Store to send a notification to your server.
public struct SendAttemptItem: Codable, Hashable, Sendable {
    /// When the attempt was made.
    public var attemptDate: Date?
    /// Its result.
    public var sendAttemptResult: SendAttemptResult?

    public init(
        attemptDate: Date? = nil,
        sendAttemptResult: SendAttemptResult? = nil
    ) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }
}

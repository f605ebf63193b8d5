/// The answer of Request a Test Notification.
public struct SendTestNotificationResponse: Codable, Hashable, Sendable {
    /// The token to ask for the test notification's status with.
    public var testNotificationToken: String?

    public init(
        testNotificationToken: String? = nil
    ) {
        self.testNotificationToken = testNotificationToken
    }
}

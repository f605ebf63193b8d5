/// A page of notification history (Get Notification History).
public struct NotificationHistoryResponse: Codable, Hashable, Sendable {
    /// Token for the next page.
    public var paginationToken: String?
    /// Whether more pages follow.
    public var hasMore: Bool?
    /// The notifications of this page.
    public var notificationHistory: [NotificationHistoryResponseItem]?

    public init(
        paginationToken: String? = nil,
        hasMore: Bool? = nil,
        notificationHistory: [NotificationHistoryResponseItem]? = nil
    ) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}

import Foundation

/// The body of Get Notification History.
public struct NotificationHistoryRequest: Codable, Hashable, Sendable {
    /// Start of the range (within the past 180 days).
    public var startDate: Date
    /// End of the range (a future date means now).
    public var endDate: Date
    /// Only notifications of this type (not together with ``transactionId``).
    public var notificationType: NotificationTypeV2?
    /// Only notifications of this subtype (requires ``notificationType``).
    public var notificationSubtype: Subtype?
    /// Only notifications about this transaction (any transaction id of the customer).
    public var transactionId: String?
    /// Only notifications that did not reach your server (including ones still being retried).
    public var onlyFailures: Bool?
    /// Deprecated by Apple in favour of ``transactionId``.
    public var originalTransactionId: String?

    enum CodingKeys: String, CodingKey {
        case startDate, endDate, notificationType, notificationSubtype, transactionId, onlyFailures
        case originalTransactionId
    }

    public init(
        startDate: Date,
        endDate: Date,
        notificationType: NotificationTypeV2? = nil,
        notificationSubtype: Subtype? = nil,
        transactionId: String? = nil,
        onlyFailures: Bool? = nil,
        originalTransactionId: String? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
        self.originalTransactionId = originalTransactionId
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        startDate = ServerAPIEncoding.date(milliseconds: try container.decode(Int64.self, forKey: .startDate))
        endDate = ServerAPIEncoding.date(milliseconds: try container.decode(Int64.self, forKey: .endDate))
        notificationType = try container.decodeIfPresent(NotificationTypeV2.self, forKey: .notificationType)
        notificationSubtype = try container.decodeIfPresent(Subtype.self, forKey: .notificationSubtype)
        transactionId = try container.decodeIfPresent(String.self, forKey: .transactionId)
        onlyFailures = try container.decodeIfPresent(Bool.self, forKey: .onlyFailures)
        originalTransactionId = try container.decodeIfPresent(String.self, forKey: .originalTransactionId)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        // Whole milliseconds whatever the encoder's date strategy: Apple wants integers.
        try container.encode(ServerAPIEncoding.milliseconds(startDate), forKey: .startDate)
        try container.encode(ServerAPIEncoding.milliseconds(endDate), forKey: .endDate)
        try container.encodeIfPresent(notificationType, forKey: .notificationType)
        try container.encodeIfPresent(notificationSubtype, forKey: .notificationSubtype)
        try container.encodeIfPresent(transactionId, forKey: .transactionId)
        try container.encodeIfPresent(onlyFailures, forKey: .onlyFailures)
        try container.encodeIfPresent(originalTransactionId, forKey: .originalTransactionId)
    }
}

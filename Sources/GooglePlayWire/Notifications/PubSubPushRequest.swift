import Foundation

/// What a Cloud Pub/Sub push subscription POSTs: one message, wrapped. Pub/Sub writes `messageId` and
/// `publishTime` twice (camelCase and snake_case); either is read.
public struct PubSubPushRequest: Codable, Sendable, Hashable {
    public var message: Message
    /// `projects/<project>/subscriptions/<name>`.
    public var subscription: String?
    /// Only with a dead-letter policy.
    public var deliveryAttempt: Int32?

    public init(message: Message, subscription: String?, deliveryAttempt: Int32? = nil) {
        self.message = message
        self.subscription = subscription
        self.deliveryAttempt = deliveryAttempt
    }

    public struct Message: Codable, Sendable, Hashable {
        public var attributes: [String: String]?
        /// Standard base64 of the payload (for Play: the UTF-8 JSON ``DeveloperNotification``).
        public var data: String?
        public var messageId: String?
        public var publishTime: Date?
        public var orderingKey: String?

        public init(attributes: [String: String]? = nil, data: String?, messageId: String?, publishTime: Date?, orderingKey: String? = nil) {
            self.attributes = attributes
            self.data = data
            self.messageId = messageId
            self.publishTime = publishTime
            self.orderingKey = orderingKey
        }

        enum CodingKeys: String, CodingKey {
            case attributes, data, messageId, publishTime, orderingKey
            case messageIdSnake = "message_id"
            case publishTimeSnake = "publish_time"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            attributes = try container.decodeIfPresent([String: String].self, forKey: .attributes)
            data = try container.decodeIfPresent(String.self, forKey: .data)
            messageId =
                try container.decodeIfPresent(String.self, forKey: .messageId)
                ?? container.decodeIfPresent(String.self, forKey: .messageIdSnake)
            publishTime =
                try container.decodeIfPresent(Date.self, forKey: .publishTime)
                ?? container.decodeIfPresent(Date.self, forKey: .publishTimeSnake)
            orderingKey = try container.decodeIfPresent(String.self, forKey: .orderingKey)
        }

        /// Written as Pub/Sub writes it: both spellings.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(attributes, forKey: .attributes)
            try container.encodeIfPresent(data, forKey: .data)
            try container.encodeIfPresent(messageId, forKey: .messageId)
            try container.encodeIfPresent(messageId, forKey: .messageIdSnake)
            try container.encodeIfPresent(publishTime, forKey: .publishTime)
            try container.encodeIfPresent(publishTime, forKey: .publishTimeSnake)
            try container.encodeIfPresent(orderingKey, forKey: .orderingKey)
        }

        /// The payload's bytes, or nil when `data` is absent or not base64.
        public var payload: [UInt8]? { data.flatMap { Data(base64Encoded: $0) }.map(Array.init) }
    }

    /// The Play notification the message carries.
    public func developerNotification() throws -> DeveloperNotification {
        guard let bytes = message.payload else { throw PlayWireError.malformed("the push message's data is missing or not base64") }
        guard bytes.count <= DeveloperNotification.maximumSize else {
            throw PlayWireError.malformed("the notification is larger than \(DeveloperNotification.maximumSize) bytes")
        }
        do {
            return try PlayJSON.decode(DeveloperNotification.self, from: bytes)
        } catch {
            throw PlayWireError.malformed("the push message's data is not a developer notification: \(error)")
        }
    }
}

import Foundation

/// What a store must be told once a purchase is delivered, and by when. Google Play refunds and revokes a purchase
/// nobody acknowledged within three days; a consumable is consumed instead, which also lets the customer buy it
/// again. The App Store needs nothing (its transactions carry none).
public struct StoreAcknowledgement: Sendable, Hashable {
    public enum Action: String, Sendable, Hashable, Codable {
        case acknowledge
        case consume
    }

    public var action: Action
    /// The store's deadline.
    public var deadline: Date

    public init(action: Action, deadline: Date) {
        self.action = action
        self.deadline = deadline
    }
}

/// A user as Storekeeper keys them: the app's own user id, or `guest:<device id>` for a guest.
public struct UserID: Sendable, Hashable, Codable, CustomStringConvertible, Comparable {
    public static let guestPrefix = "guest:"

    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// The app's user id (the JWT subject); `nil` when it is empty, too long or would pass for a guest.
    public static func account(_ id: String) -> UserID? {
        guard !id.isEmpty, id.utf8.count <= 200, !id.hasPrefix(guestPrefix) else { return nil }
        return UserID(rawValue: id)
    }

    /// The guest keyed by a device id (App Review buys without signing in, seeds 000 and 002).
    public static func guest(deviceId: String) -> UserID? {
        guard deviceId.utf8.count >= 8, deviceId.utf8.count <= 128,
            deviceId.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        return UserID(rawValue: guestPrefix + deviceId)
    }

    public var isGuest: Bool { rawValue.hasPrefix(Self.guestPrefix) }
    public var description: String { rawValue }
    public static func < (lhs: UserID, rhs: UserID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

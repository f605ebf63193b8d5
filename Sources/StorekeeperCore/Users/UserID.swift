/// A user as Storekeeper keys them: the app's own user id, or `guest:<id>` for a guest.
///
/// Identities compare byte for byte (their UTF-8), as the database compares them: Swift's `String ==` treats
/// canonically equivalent strings as equal (`jose\u{301}` and `jos\u{E9}`), which would let one user read or
/// claim what another owns.
public struct UserID: Sendable, Hashable, Codable, CustomStringConvertible, Comparable {
    public static let guestPrefix = "guest:"
    /// The longest user id accepted, in UTF-8 bytes.
    public static let maximumBytes = 240

    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// The app's user id (the JWT subject); `nil` when it is empty, too long, holds a control character or would
    /// pass for a guest.
    public static func account(_ id: String) -> UserID? {
        guard !id.isEmpty, id.utf8.count <= 200, !id.hasPrefix(guestPrefix), !id.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
        else { return nil }
        return UserID(rawValue: id)
    }

    /// The guest with this server-issued (or, for guests from before credentials, client-chosen) id.
    public static func guest(id: String) -> UserID? {
        guard id.utf8.count >= 8, id.utf8.count <= 128, id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        return UserID(rawValue: guestPrefix + id)
    }

    /// Any user id an operator or a backend names: an account id or `guest:<id>`.
    public static func any(_ text: String) -> UserID? {
        text.hasPrefix(guestPrefix) ? guest(id: String(text.dropFirst(guestPrefix.count))) : account(text)
    }

    /// The outbox's stream for events about no known user — a dead-lettered Apple notification whose transaction
    /// nobody holds. Its id is empty, which ``account(_:)`` and ``guest(id:)`` refuse, so no real user shares it.
    public static let nobody = UserID(rawValue: "")

    public var isNobody: Bool { rawValue.isEmpty }

    public var isGuest: Bool { rawValue.hasPrefix(Self.guestPrefix) }
    /// The guest's id without the prefix; nil for accounts.
    public var guestId: String? { isGuest ? String(rawValue.dropFirst(Self.guestPrefix.count)) : nil }
    public var description: String { rawValue }

    public static func == (lhs: UserID, rhs: UserID) -> Bool { lhs.rawValue.utf8.elementsEqual(rhs.rawValue.utf8) }

    public func hash(into hasher: inout Hasher) {
        for byte in rawValue.utf8 { hasher.combine(byte) }
        hasher.combine(rawValue.utf8.count)
    }

    public static func < (lhs: UserID, rhs: UserID) -> Bool { lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8) }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

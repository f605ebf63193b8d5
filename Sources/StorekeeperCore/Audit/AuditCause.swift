/// Why a change was made, as one of a few kinds of cause and the id that names it: `transaction:<id>`,
/// `notification:<id>`, `admin:<key name>`, ... Built only through the constructors below, so every cause of one
/// kind is spelled the same way.
public struct AuditCause: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Apple's transaction was delivered (or refused, or moved, because of it).
    public static func transaction(_ id: String) -> AuditCause { AuditCause(rawValue: "transaction:\(id)") }
    /// One of Apple's messages (a notification, a status check: its inbox id).
    public static func notification(_ id: String) -> AuditCause { AuditCause(rawValue: "notification:\(id)") }
    /// A client's legacy receipt proved a subscription's state.
    public static func receipt(original: String) -> AuditCause { AuditCause(rawValue: "receipt:\(original)") }
    /// An operator, by admin key name.
    public static func admin(_ name: String) -> AuditCause { AuditCause(rawValue: "admin:\(name)") }
    /// The user's own order.
    public static func order(_ id: String) -> AuditCause { AuditCause(rawValue: "order:\(id)") }
    /// A guest merged into an account.
    public static func merge(guest: UserID) -> AuditCause { AuditCause(rawValue: "merge:\(guest.rawValue)") }
    /// A signed offer of a campaign.
    public static func campaign(_ id: String) -> AuditCause { AuditCause(rawValue: "campaign:\(id)") }
    /// Storekeeper's answer to Apple's refund question.
    public static func consumption(_ id: String) -> AuditCause { AuditCause(rawValue: "consumption:\(id)") }
    /// A team member's seat (its id), changed by the purchaser or the member through the API.
    public static func teamSeat(_ id: String) -> AuditCause { AuditCause(rawValue: "seat:\(id)") }
    /// A legacy guest proved itself with an Apple-signed transaction.
    public static let guestClaim = AuditCause(rawValue: "guest:claim")
    /// A delivery round (periods replaced by a newer transaction of their subscription).
    public static let delivery = AuditCause(rawValue: "delivery")
    /// A wallet entry's own unique key (spends, adjustments, clawbacks): the cause it is stored under.
    public static func wallet(_ key: WalletKey) -> AuditCause { AuditCause(rawValue: key.rawValue) }
}

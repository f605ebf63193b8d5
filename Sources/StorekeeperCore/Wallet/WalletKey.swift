import Foundation

/// The unique key of one wallet entry (`wallet_entries.cause`): posting twice under one key changes nothing, which
/// makes every wallet change idempotent.
///
/// Keys are built from escaped parts: `spend:<user>:<key>` with `:` and `%` percent-encoded in each part, so no two
/// (user, key) pairs can spell the same key. A part without those characters is written as it is, so keys stored
/// before escaping still match their repeats.
public struct WalletKey: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    static func escape(_ part: String) -> String {
        guard part.utf8.contains(where: { $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "%") }) else { return part }
        var escaped = ""
        for scalar in part.unicodeScalars {
            switch scalar {
            case "%": escaped += "%25"
            case ":": escaped += "%3A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// The coins a consumable transaction credited.
    public static func transaction(_ id: String) -> WalletKey { WalletKey(rawValue: "transaction:\(id)") }

    /// A client's spend under its idempotency key.
    public static func spend(user: UserID, key: String) -> WalletKey {
        WalletKey(rawValue: "spend:\(escape(user.rawValue)):\(escape(key))")
    }

    /// An operator's adjustment under its idempotency key.
    public static func admin(_ admin: String, user: UserID, key: String) -> WalletKey {
        WalletKey(rawValue: "admin:\(escape(admin)):\(escape(user.rawValue)):\(escape(key))")
    }

    /// One side (`out` or `in`) of moving a guest's balance into an account.
    public static func merge(guest: UserID, into account: UserID, at millis: Int64, side: String) -> WalletKey {
        WalletKey(rawValue: "merge:\(escape(guest.rawValue)):\(escape(account.rawValue)):\(millis):\(side)")
    }

    /// The coins a refund took back (one key per generation: refunded, reversed, refunded again).
    public static func refund(_ transactionId: String, generation: Int64) -> WalletKey {
        WalletKey(rawValue: "refund:\(transactionId):\(generation)")
    }

    /// The coins a refund reversal gave back.
    public static func refundReversed(_ transactionId: String, generation: Int64) -> WalletKey {
        WalletKey(rawValue: "refund_reversed:\(transactionId):\(generation)")
    }
}

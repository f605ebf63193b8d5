import Foundation

/// Who invites a multiseat group's members (`invitationManagement`).
public struct InvitationManagement: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Apple invites members (Family-like); each member gets an `ASSIGNED` transaction of their own.
    public static let apple: Self = "APPLE"
    /// The developer invites members and claims seats for them through the seat endpoints.
    public static let developer: Self = "DEVELOPER"

    public static let knownValues: [Self] = [.apple, .developer]
}

/// Whether the customer bought the product, has it through Family Sharing, or was assigned it by an organization or
/// group (API 1.22).
public struct InAppOwnershipType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let purchased: Self = "PURCHASED"
    public static let familyShared: Self = "FAMILY_SHARED"
    /// An organization or group (Apple Business or School Manager, a multiseat group) assigned the purchase to the
    /// customer: theirs to use, not their sale (API 1.22).
    public static let assigned: Self = "ASSIGNED"

    public static let knownValues: [Self] = [.purchased, .familyShared, .assigned]
}

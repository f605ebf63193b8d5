/// Whether the customer bought the product or has it through Family Sharing.
public struct InAppOwnershipType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let purchased: Self = "PURCHASED"
    public static let familyShared: Self = "FAMILY_SHARED"

    public static let knownValues: [Self] = [.purchased, .familyShared]
}

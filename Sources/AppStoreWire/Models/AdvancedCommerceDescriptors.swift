/// The customer-facing name and description of an Advanced Commerce product or item.
public struct AdvancedCommerceDescriptors: Codable, Sendable, Hashable {
    /// A description the developer provided.
    public var description: String?
    /// A name suitable for display to customers.
    public var displayName: String?

    public init(description: String? = nil, displayName: String? = nil) {
        self.description = description
        self.displayName = displayName
    }
}

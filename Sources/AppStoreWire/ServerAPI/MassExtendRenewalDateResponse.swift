/// The answer of Extend Renewal Dates for All Active Subscribers.
public struct MassExtendRenewalDateResponse: Codable, Hashable, Sendable {
    /// The identifier of the (asynchronous) request, as sent.
    public var requestIdentifier: String?

    public init(
        requestIdentifier: String? = nil
    ) {
        self.requestIdentifier = requestIdentifier
    }
}

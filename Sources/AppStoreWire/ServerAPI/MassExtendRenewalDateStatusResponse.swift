import Foundation

/// The progress of a mass renewal-date extension.
public struct MassExtendRenewalDateStatusResponse: Codable, Hashable, Sendable {
    /// The identifier of the request.
    public var requestIdentifier: String?
    /// Whether Apple finished processing it.
    public var complete: Bool?
    /// When it completed.
    public var completeDate: Date?
    /// Subscriptions extended.
    public var succeededCount: Int64?
    /// Subscriptions that could not be extended.
    public var failedCount: Int64?

    public init(
        requestIdentifier: String? = nil,
        complete: Bool? = nil,
        completeDate: Date? = nil,
        succeededCount: Int64? = nil,
        failedCount: Int64? = nil
    ) {
        self.requestIdentifier = requestIdentifier
        self.complete = complete
        self.completeDate = completeDate
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}

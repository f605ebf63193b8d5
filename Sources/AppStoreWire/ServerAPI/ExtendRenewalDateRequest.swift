/// The body of Extend a Subscription Renewal Date.
public struct ExtendRenewalDateRequest: Codable, Hashable, Sendable {
    /// Days to extend by: 1–90.
    public var extendByDays: Int32
    /// Why the subscription is extended.
    public var extendReasonCode: ExtendReasonCode
    /// Your unique identifier of this request (≤128 characters); makes retries idempotent.
    public var requestIdentifier: String

    public init(
        extendByDays: Int32,
        extendReasonCode: ExtendReasonCode,
        requestIdentifier: String
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
    }
}

/// Switchable faults in notification delivery, for testing a server's resilience.
public struct DeliveryFaults: Sendable, Hashable, Codable {
    /// Send every notification twice.
    public var duplicate: Bool
    /// Send each batch of due notifications in reverse order.
    public var outOfOrder: Bool
    /// Drop this many upcoming notifications without sending them and without retrying: only notification
    /// history can recover them.
    public var dropNext: Int
    /// Fail this many upcoming send attempts as if the target did not answer (they are retried on schedule).
    public var failNext: Int

    public init(duplicate: Bool = false, outOfOrder: Bool = false, dropNext: Int = 0, failNext: Int = 0) {
        self.duplicate = duplicate
        self.outOfOrder = outOfOrder
        self.dropNext = dropNext
        self.failNext = failNext
    }
}

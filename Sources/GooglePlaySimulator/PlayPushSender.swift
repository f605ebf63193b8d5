import Foundation
import GooglePlayWire

/// Pub/Sub's push side for the simulator: posts each due message to the configured endpoint with its OIDC token and
/// reports the answer back (a non-2xx or no answer schedules a redelivery under the same `messageId`).
public struct PlayPushSender: Sendable {
    public let store: SimulatedPlayStore
    public let transport: any PlayHTTPTransport

    public init(store: SimulatedPlayStore, transport: any PlayHTTPTransport) {
        self.store = store
        self.transport = transport
    }

    /// Delivers what is due now; returns how many were acknowledged.
    @discardableResult
    public func deliverDue() async throws -> Int {
        var acknowledged = 0
        for delivery in try await store.duePushes() {
            let status: Int?
            do {
                status = try await transport.send(
                    PlayHTTPRequest(
                        method: "POST",
                        url: delivery.endpoint,
                        headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(delivery.bearer)")],
                        body: delivery.body
                    )
                ).status
            } catch {
                status = nil
            }
            if let status, [102, 200, 201, 202, 204].contains(status) { acknowledged += 1 }
            await store.pushAnswered(messageId: delivery.messageId, status: status)
        }
        return acknowledged
    }
}

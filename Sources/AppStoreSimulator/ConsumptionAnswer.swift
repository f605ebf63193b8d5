import Foundation

/// One Send Consumption Information request the simulator's App Store Server API accepted, kept as received so
/// a developer can see what their server told Apple (`GET /control/consumption`).
public struct ConsumptionAnswer: Sendable, Hashable {
    /// Which Send Consumption Information endpoint was called.
    public enum Endpoint: String, Sendable, Hashable, Codable {
        /// `PUT /inApps/v1/transactions/consumption/{transactionId}` (`ConsumptionRequestV1`).
        case v1
        /// `PUT /inApps/v2/transactions/consumption/{transactionId}` (`ConsumptionRequest`).
        case v2
    }

    public let transactionId: String
    public let endpoint: Endpoint
    /// The request body, byte for byte.
    public let body: Data
    /// When it arrived, on the simulator's clock.
    public let receivedAt: Date
}

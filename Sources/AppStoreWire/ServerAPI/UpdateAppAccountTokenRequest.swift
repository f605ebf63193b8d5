import Foundation

/// The body of Set App Account Token.
public struct UpdateAppAccountTokenRequest: Codable, Hashable, Sendable {
    /// The UUID to associate with the customer's purchase.
    public var appAccountToken: UUID

    enum CodingKeys: String, CodingKey {
        case appAccountToken
    }

    public init(appAccountToken: UUID) {
        self.appAccountToken = appAccountToken
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        appAccountToken = try container.decode(UUID.self, forKey: .appAccountToken)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        // Lower case, as Apple writes appAccountToken in signed transactions.
        try container.encode(appAccountToken.uuidString.lowercased(), forKey: .appAccountToken)
    }
}

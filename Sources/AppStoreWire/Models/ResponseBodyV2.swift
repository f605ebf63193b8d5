/// The HTTP body of an App Store Server Notification V2: `{"signedPayload": "<JWS>"}`.
public struct ResponseBodyV2: Codable, Sendable, Hashable {
    /// The compact JWS whose payload is a ``ResponseBodyV2DecodedPayload``.
    public var signedPayload: String?

    public init(signedPayload: String? = nil) {
        self.signedPayload = signedPayload
    }
}

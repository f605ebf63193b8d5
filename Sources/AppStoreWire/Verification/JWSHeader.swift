/// The protected header of an App Store JWS: the algorithm and the certificate chain that signed it.
public struct JWSHeader: Codable, Sendable, Hashable {
    /// The signature algorithm; App Store data is always `ES256`.
    public var alg: String
    /// Base64 (standard alphabet) DER certificates: leaf, intermediate, root.
    public var x5c: [String]?
    public var kid: String?
    public var typ: String?

    public init(alg: String, x5c: [String]?, kid: String? = nil, typ: String? = nil) {
        self.alg = alg
        self.x5c = x5c
        self.kid = kid
        self.typ = typ
    }
}

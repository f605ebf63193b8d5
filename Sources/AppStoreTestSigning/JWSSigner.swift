import AppStoreWire
import Crypto
import Foundation

/// Produces compact ES256 JWS in the App Store's shape (header with `x5c`, raw R‖S signature).
public struct JWSSigner: Sendable {
    public let privateKey: P256.Signing.PrivateKey
    public let header: JWSHeader
    private let encodedHeader: String

    public init(privateKey: P256.Signing.PrivateKey, header: JWSHeader) {
        self.privateKey = privateKey
        self.header = header
        // JWSHeader is plain strings; encoding cannot fail.
        self.encodedHeader = (try? SignedToken.encode(header: header)) ?? ""
    }

    /// Signs a payload encoded with the App Store JSON conventions (dates in epoch milliseconds).
    public func sign(_ payload: some Encodable) throws -> String {
        try sign(payloadBytes: Array(AppStoreJSON.makeEncoder().encode(payload)))
    }

    /// Signs raw payload bytes as they are.
    public func sign(payloadBytes: [UInt8]) throws -> String {
        try SignedToken.sign(encodedHeader: encodedHeader, claims: payloadBytes, with: privateKey)
    }
}

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
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // JWSHeader is plain strings; encoding cannot fail.
        self.encodedHeader = Base64URL.encode((try? encoder.encode(header)) ?? Data())
    }

    /// Signs a payload encoded with the App Store JSON conventions (dates in epoch milliseconds).
    public func sign(_ payload: some Encodable) throws -> String {
        try sign(payloadBytes: Array(AppStoreJSON.makeEncoder().encode(payload)))
    }

    /// Signs raw payload bytes as they are.
    public func sign(payloadBytes: [UInt8]) throws -> String {
        let signingInput = encodedHeader + "." + Base64URL.encode(payloadBytes)
        let signature = try privateKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}

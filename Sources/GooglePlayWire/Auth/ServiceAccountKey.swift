import Foundation
import _CryptoExtras

/// A Google Cloud service account's JSON key, as IAM downloads it. Only what the grant needs is read; the private
/// key never leaves the process.
public struct ServiceAccountKey: Decodable, Sendable {
    public var type: String?
    public var projectId: String?
    public var privateKeyId: String?
    public var clientEmail: String
    /// Where the grant is posted (the simulator's, in tests and the demo).
    public var tokenURI: String
    public let privateKey: _RSA.Signing.PrivateKey

    enum CodingKeys: String, CodingKey {
        case type
        case projectId = "project_id"
        case privateKeyId = "private_key_id"
        case privateKey = "private_key"
        case clientEmail = "client_email"
        case tokenURI = "token_uri"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decodeIfPresent(String.self, forKey: .type)
        projectId = try container.decodeIfPresent(String.self, forKey: .projectId)
        privateKeyId = try container.decodeIfPresent(String.self, forKey: .privateKeyId)
        clientEmail = try container.decode(String.self, forKey: .clientEmail)
        tokenURI = try container.decode(String.self, forKey: .tokenURI)
        let pem = try container.decode(String.self, forKey: .privateKey)
        do {
            privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .privateKey, in: container, debugDescription: "private_key is not a PEM RSA key")
        }
        guard privateKey.keySizeInBits >= 2048 else {
            throw DecodingError.dataCorruptedError(forKey: .privateKey, in: container, debugDescription: "private_key is shorter than 2048 bits")
        }
    }

    public init(clientEmail: String, privateKeyId: String?, privateKey: _RSA.Signing.PrivateKey, tokenURI: String, projectId: String? = nil) {
        type = "service_account"
        self.clientEmail = clientEmail
        self.privateKeyId = privateKeyId
        self.privateKey = privateKey
        self.tokenURI = tokenURI
        self.projectId = projectId
    }

    /// Reads a key file's bytes.
    public static func parse(_ json: some Collection<UInt8>) throws -> ServiceAccountKey {
        do {
            return try JSONDecoder().decode(ServiceAccountKey.self, from: Data(json))
        } catch {
            throw PlayWireError.malformed("not a service account key: \(error)")
        }
    }

    /// The key file Google would give for this account (the simulator issues its accounts this way).
    public func json() -> [UInt8] {
        let object: [String: String] = [
            "type": "service_account", "project_id": projectId ?? "", "private_key_id": privateKeyId ?? "",
            "private_key": privateKey.pemRepresentation, "client_email": clientEmail, "token_uri": tokenURI,
        ]
        return Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data())
    }
}

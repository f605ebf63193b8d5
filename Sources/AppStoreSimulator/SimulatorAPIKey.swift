import Crypto
import Foundation

/// The In-App Purchase key the simulator's App Store Server API accepts, kept in the state directory as a `.p8`
/// so a Storekeeper under test can sign its requests with it.
public struct SimulatorAPIKey: Sendable {
    public static let fileName = "SubscriptionKey_SIMULATOR1.p8"
    public let keyId: String
    public let issuerId: String
    public let privateKey: P256.Signing.PrivateKey

    /// Loads the key from `directory`, or creates it there.
    public static func loadOrCreate(directory: URL) throws -> SimulatorAPIKey {
        let url = directory.appendingPathComponent(fileName)
        let key: P256.Signing.PrivateKey
        if FileManager.default.fileExists(atPath: url.path) {
            key = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOf: url, encoding: .utf8))
        } else {
            key = P256.Signing.PrivateKey()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try (key.pemRepresentation + "\n").write(to: url, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        }
        // Fixed identifiers: only the key material is secret, and it never leaves the state directory.
        return SimulatorAPIKey(keyId: "SIMULATOR1", issuerId: "57246542-96fe-1a63-e053-0824d011072a", privateKey: key)
    }
}

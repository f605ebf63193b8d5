import AppStoreWire
import Crypto

/// A signing identity for Server API tests: a fresh P-256 key and a token generator built from its PEM.
struct TestSigningIdentity {
    static let keyId = "TESTKEY123"
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let bundleId = "com.example.storekeeper"

    let privateKey = P256.Signing.PrivateKey()
    var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    func tokenGenerator(lifetime: Int = 300) throws -> AppStoreAPITokenGenerator {
        try AppStoreAPITokenGenerator(
            privateKeyPEM: privateKey.pemRepresentation,
            keyId: Self.keyId,
            issuerId: Self.issuerId,
            bundleId: Self.bundleId,
            tokenLifetimeSeconds: lifetime
        )
    }
}

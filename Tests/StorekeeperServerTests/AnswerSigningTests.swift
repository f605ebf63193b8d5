import AppStoreWire
import Crypto
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Signed answers (`Storekeeper-Nonce` → `Storekeeper-Signature`), over real sockets: the signature covers the
/// nonce, the request, the status and the exact body, verifies with the configured key's public half, and is absent
/// when the app did not ask or the server has no key.
@Suite("Signed answers to apps")
struct AnswerSigningTests {
    static let key = P256.Signing.PrivateKey()

    struct Claims: Decodable {
        var cred: String?
        var sub: String?
        var iat: Int64
        var nonce: String
        var request: String
        var sha256: String
        var status: Int
    }

    /// The claims of `jws` when its ES256 signature verifies with `key`; `nil` otherwise.
    static func verified(_ jws: String, key: P256.Signing.PublicKey) throws -> Claims? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let raw = Base64URL.decode(String(parts[2])),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: raw),
            key.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8)),
            let header = Base64URL.decode(String(parts[0])), let payload = Base64URL.decode(String(parts[1]))
        else { return nil }
        let fields = try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any]
        #expect(fields?["alg"] as? String == "ES256")
        #expect(fields?["typ"] as? String == "storekeeper-answer")
        return try JSONDecoder().decode(Claims.self, from: Data(payload))
    }

    @Test("a nonce gets a signature over nonce, request, status and body", arguments: TestDatabase.available)
    func signed(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: { $0.auth.answerSigningKeyPEM = Self.key.pemRepresentation }) { server in
            // One token for every request below (a new one is minted at each call, with its own time).
            let token = ServerHarness.token("signed")
            let user = [("Authorization", "Bearer \(token)")]
            let nonce = Base64URL.encode(Array(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }))
            let me = try await server.call(.GET, "/v1/me?at=1900000000000", headers: user + [("Storekeeper-Nonce", nonce)])
            #expect(me.status == 200)
            let jws = try #require(me.headers.first(name: "Storekeeper-Signature"))
            let claims = try #require(try Self.verified(jws, key: Self.key.publicKey), "verifies with the configured key")
            #expect(claims.nonce == nonce)
            #expect(claims.request == "GET /v1/me?at=1900000000000")
            #expect(claims.status == 200)
            #expect(claims.sha256 == Base64URL.encode(Array(SHA256.hash(data: Data(me.text.utf8)))))
            #expect(abs(Double(claims.iat) - Date().timeIntervalSince1970) < 120)
            // Who asked: the user and the credential they presented, so an answer to another account's credentials
            // is told apart by the app.
            #expect(claims.sub == "signed")
            #expect(claims.cred == Base64URL.encode(Array(SHA256.hash(data: Data(token.utf8)))))
            let other = try await server.call(
                .GET,
                "/v1/me?at=1900000000000",
                headers: ServerHarness.userHeaders("other") + [("Storekeeper-Nonce", nonce)]
            )
            let otherSignature = try #require(other.headers.first(name: "Storekeeper-Signature"))
            let otherClaims = try #require(try Self.verified(otherSignature, key: Self.key.publicKey))
            #expect(otherClaims.sub == "other" && otherClaims.cred != claims.cred)
            let guest = try await server.api().createGuest().created.body.json
            let asGuest = try await server.call(.GET, "/v1/me", headers: [("X-Storekeeper-Guest", guest.token), ("Storekeeper-Nonce", nonce)])
            let guestSignature = try #require(asGuest.headers.first(name: "Storekeeper-Signature"))
            let guestClaims = try #require(try Self.verified(guestSignature, key: Self.key.publicKey))
            #expect(guestClaims.sub == guest.userId && guestClaims.cred == Base64URL.encode(Array(SHA256.hash(data: Data(guest.token.utf8)))))
            // Another key does not verify it: the app's pin means something.
            #expect(try Self.verified(jws, key: P256.Signing.PrivateKey().publicKey) == nil)

            // A purchase-group answer is signed too; an admin answer never is.
            let order = try await server.call(
                .POST,
                "/v1/orders",
                json: ["productId": "com.example.storekeeper.coins.60"],
                headers: user + [("Storekeeper-Nonce", nonce)]
            )
            #expect(order.status == 201)
            #expect(try Self.verified(try #require(order.headers.first(name: "Storekeeper-Signature")), key: Self.key.publicKey)?.status == 201)
            let admin = try await server.call(.GET, "/v1/admin/events", headers: ServerHarness.adminHeaders + [("Storekeeper-Nonce", nonce)])
            #expect(admin.status == 200)
            #expect(admin.headers.first(name: "Storekeeper-Signature") == nil)

            // No nonce, no signature; an error is never signed; a malformed nonce is a named 400.
            #expect(try await server.call(.GET, "/v1/me", headers: user).headers.first(name: "Storekeeper-Signature") == nil)
            let refused = try await server.call(.GET, "/v1/me?at=12x", headers: user + [("Storekeeper-Nonce", nonce)])
            #expect(refused.status == 400)
            #expect(refused.headers.first(name: "Storekeeper-Signature") == nil)
            for bad in ["short", String(repeating: "a", count: 129), "has space in it and is long enough", "abcdefghijklmnopqrstuv+/"] {
                let reply = try await server.call(.GET, "/v1/me", headers: user + [("Storekeeper-Nonce", bad)])
                #expect(reply.status == 400, "\(bad)")
                #expect(reply.code == "invalid_nonce", "\(bad)")
            }
        }
    }

    @Test("without a key nothing is signed", arguments: [TestDatabase.sqlite])
    func unsigned(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let reply = try await server.call(
                .GET,
                "/v1/me",
                headers: ServerHarness.userHeaders("plain") + [("Storekeeper-Nonce", "abcdefghijklmnopqrstuvwxyz")]
            )
            #expect(reply.status == 200)
            #expect(reply.headers.first(name: "Storekeeper-Signature") == nil)
        }
    }

    @Test("a key that is not a P-256 private key stops the start with one line")
    func badKey() throws {
        #expect(throws: ConfigurationError.self) { try AnswerSigner(privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----") }
    }
}

import Configuration
import Crypto
import Foundation
import StorekeeperCore
import StorekeeperServer
import Testing

/// Reading the server's configuration, and the user tokens it accepts.
@Suite struct ConfigurationTests {
    static func reader(_ values: [AbsoluteConfigKey: ConfigValue]) -> ConfigReader {
        ConfigReader(provider: InMemoryProvider(values: values))
    }

    // MARK: Tests

    @Test func readsEveryScopedKey() throws {
        let configuration = try ServerConfiguration(
            reader: Self.reader([
                "http.port": 9090, "db.kind": "postgres", "db.postgres.url": .init(.string("postgres://u:p@h/db"), isSecret: true),
                "apps": .init(.stringArray(["ios", "mac"]), isSecret: false),
                "apps.ios.appStore.bundleId": "com.example.ios", "apps.ios.appStore.appAppleId": 42,
                "apps.ios.appStore.sharedSecret": .init(.string("top-secret-shared"), isSecret: true),
                // The keys as they were before each store had a group: still read, each named as deprecated.
                "apps.mac.bundleId": "com.example.mac", "apps.mac.deployment": "development", "apps.mac.allowSandbox": false,
                "apps.mac.appStore.sharedSecret": .init(.string("mac-shared"), isSecret: true),
                "apps.mac.sharedSecret": .init(.string("overridden-by-the-group"), isSecret: true),
                "auth.jwt.hs256Secret": .init(.string(String(repeating: "s", count: 32)), isSecret: true),
                "auth.adminKeys": .init(.stringArray(["ops:admin-key-0123456789"]), isSecret: true),
                "policy.transfer": "transfer",
            ])
        )
        #expect(configuration.port == 9090)
        #expect(configuration.database == .postgres(url: "postgres://u:p@h/db"))
        #expect(configuration.apps.map(\.bundleId) == ["com.example.ios", "com.example.mac"])
        #expect(configuration.apps[0].appAppleId == 42)
        #expect(configuration.apps[1].deployment == .development)
        #expect(configuration.apps[1].allowSandbox == false)
        #expect(configuration.apps[0].deprecatedKeys.isEmpty)
        #expect(configuration.apps[1].deprecatedKeys == ["bundleId", "allowSandbox"])
        #expect(configuration.apps[1].sharedSecret == "mac-shared", "the group wins over the old key")
        #expect(configuration.auth.adminKeys == ["ops": "admin-key-0123456789"])
        #expect(configuration.transferPolicy == .transfer)
        #expect(!"\(configuration.apps[0])".contains("top-secret-shared"), "secrets never reach a description")
        #expect(!"\(configuration.auth)".contains("admin-key-0123456789"))
    }

    @Test func refusesIncompleteOrUnsafeConfigurations() {
        #expect(throws: ConfigurationError.self) { try ServerConfiguration(reader: Self.reader([:])) }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(reader: Self.reader(["apps.main.appStore.bundleId": "com.example"]))  // production needs appAppleId
        }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(
                reader: Self.reader(["apps.main.appStore.bundleId": "com.example", "apps.main.appStore.appAppleId": 1, "db.kind": "postgres"])
            )
        }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(
                reader: Self.reader([
                    "apps.main.appStore.bundleId": "com.example", "apps.main.appStore.appAppleId": 1,
                    "auth.jwt.hs256Secret": .init(.string("short"), isSecret: true),
                ])
            )
        }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(
                reader: Self.reader(["apps.main.appStore.bundleId": "com.example", "apps.main.appStore.appAppleId": 1, "policy.transfer": "maybe"])
            )
        }
    }

    @Test func userTokens() throws {
        let secret = String(repeating: "k", count: 40)
        let verifier = try UserTokenVerifier(
            configuration: AuthConfiguration(jwtHS256Secret: secret, jwtIssuer: "backend", jwtAudience: "storekeeper")
        )
        let good = UserTokenVerifier.hs256Token(subject: "u1", secret: secret, issuer: "backend", audience: "storekeeper")
        #expect(try verifier.verify(good) == "u1")
        let expired = UserTokenVerifier.hs256Token(
            subject: "u1",
            secret: secret,
            issuer: "backend",
            audience: "storekeeper",
            lifetime: 10,
            now: Date().addingTimeInterval(-3600)
        )
        #expect(throws: UserTokenVerifier.Failure.self) { try verifier.verify(expired) }
        let wrongAudience = UserTokenVerifier.hs256Token(subject: "u1", secret: secret, issuer: "backend", audience: "other")
        #expect(throws: UserTokenVerifier.Failure.self) { try verifier.verify(wrongAudience) }
        let wrongKey = UserTokenVerifier.hs256Token(
            subject: "u1",
            secret: String(repeating: "x", count: 40),
            issuer: "backend",
            audience: "storekeeper"
        )
        #expect(throws: UserTokenVerifier.Failure.self) { try verifier.verify(wrongKey) }
        let parts = good.split(separator: ".")
        let none = #"{"alg":"none"}"#
        let unsigned = Base64URLForTests.encode(Array(none.utf8)) + "." + parts[1] + "."
        #expect(throws: UserTokenVerifier.Failure.self) { try verifier.verify(unsigned) }

        // ES256 with a configured public key; an HS256 token is then refused.
        let key = P256.Signing.PrivateKey()
        let es = try UserTokenVerifier(configuration: AuthConfiguration(jwtES256PublicKeyPEM: key.publicKey.pemRepresentation))
        let header = Base64URLForTests.encode(Array(#"{"alg":"ES256"}"#.utf8))
        let payload = Base64URLForTests.encode(Array(#"{"sub":"u2","exp":\#(Int(Date().timeIntervalSince1970) + 60)}"#.utf8))
        let signature = try key.signature(for: Data("\(header).\(payload)".utf8)).rawRepresentation
        #expect(try es.verify("\(header).\(payload).\(Base64URLForTests.encode(Array(signature)))") == "u2")
        #expect(throws: UserTokenVerifier.Failure.self) { try es.verify(good) }
    }
}

enum Base64URLForTests {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

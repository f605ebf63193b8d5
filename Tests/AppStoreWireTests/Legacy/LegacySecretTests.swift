import Foundation
import Testing

@testable import AppStoreWire

/// Shared secrets and receipts stay out of descriptions, mirrors and re-encoded V1 bodies.
@Suite("Legacy secrets stay secret")
struct LegacySecretTests {
    /// Every way a value commonly reaches a log: interpolation, `debugPrint`, `dump`.
    private func renderings(_ value: some Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), dumped]
    }

    private func expectHidden(
        _ secret: String,
        in value: some Any,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for text in renderings(value) {
            #expect(!text.contains(secret), "\(text)", sourceLocation: sourceLocation)
        }
    }

    @Test func verifyReceiptRequestHidesPasswordAndReceipt() {
        let request = VerifyReceiptRequest(
            receiptData: "BASE64RECEIPT==",
            password: "hexsecret42",
            excludeOldTransactions: true
        )
        expectHidden("hexsecret42", in: request)
        expectHidden("BASE64RECEIPT", in: request)
        // Also when nested in something else that gets dumped.
        expectHidden("hexsecret42", in: [request])
        let mirror = Mirror(reflecting: request)
        #expect(mirror.children.map(\.label) == ["receiptData", "password", "excludeOldTransactions"])
        #expect(mirror.descendant("password") as? String == "<redacted>")
        #expect(Mirror(reflecting: VerifyReceiptRequest(receiptData: "a")).descendant("password") as? String == "nil")
    }

    @Test func configurationHidesTheSharedSecret() {
        let configuration = ReceiptVerificationConfiguration(
            bundleId: "com.example.storekeeper",
            sharedSecret: "topsecret42"
        )
        expectHidden("topsecret42", in: configuration)
        expectHidden("topsecret42", in: Optional(configuration))
        #expect(renderings(configuration).allSatisfy { $0.contains("com.example.storekeeper") })
        #expect(Mirror(reflecting: configuration).descendant("sharedSecret") as? String == "<redacted>")
        #expect(Mirror(reflecting: configuration).descendant("bundleId") as? String == "com.example.storekeeper")
    }

    // MARK: V1 notifications

    private func notification() throws -> ResponseBodyV1 {
        try JSONDecoder().decode(ResponseBodyV1.self, from: Data(LegacySamples.notificationV1.utf8))
    }

    @Test func notificationHidesTheEchoedSecret() throws {
        let body = try notification()
        expectHidden("s3cr3t", in: body)
        #expect(Mirror(reflecting: body).descendant("password") as? String == "<redacted>")
        #expect(Mirror(reflecting: body).descendant("bid") as? String == "com.example.storekeeper")
    }

    @Test func notificationIsNeverReEncodedWithTheSecret() throws {
        let body = try notification()
        let encoded = try JSONEncoder().encode(body)
        #expect(!String(decoding: encoded, as: UTF8.self).contains("s3cr3t"))
        let object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(object["password"] == nil)
        #expect(object["bid"] as? String == "com.example.storekeeper")
        #expect(object["expiration_intent"] as? Int == 1)

        // Everything but the secret survives a round trip.
        var expected = body
        expected.password = nil
        #expect(try JSONDecoder().decode(ResponseBodyV1.self, from: encoded) == expected)
    }

    @Test func notificationIsAuthenticOnlyWithTheExactSecret() throws {
        let body = try notification()
        #expect(body.isAuthentic(sharedSecret: "s3cr3t-shared-secret"))
        #expect(!body.isAuthentic(sharedSecret: "s3cr3t-shared-secreT"))
        #expect(!body.isAuthentic(sharedSecret: "s3cr3t-shared-secre"))
        #expect(!body.isAuthentic(sharedSecret: "s3cr3t-shared-secret "))
        #expect(!body.isAuthentic(sharedSecret: ""))
    }

    @Test func notificationWithoutOrWithAnEmptyPasswordIsNotAuthentic() {
        #expect(!ResponseBodyV1(password: nil).isAuthentic(sharedSecret: "s3cr3t"))
        #expect(!ResponseBodyV1(password: "").isAuthentic(sharedSecret: "s3cr3t"))
        // An unset secret must not let a body without one through.
        #expect(!ResponseBodyV1(password: "").isAuthentic(sharedSecret: ""))
    }
}

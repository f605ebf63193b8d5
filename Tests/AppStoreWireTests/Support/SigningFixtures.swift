import AppStoreTestSigning
import AppStoreWire
import Crypto
import Foundation

/// Builds signed App Store data for tests from a chain generated in code.
struct SigningFixtures {
    let chain: AppStoreSigningChain

    init(_ options: AppStoreSigningChain.Options = .init()) throws {
        chain = try AppStoreSigningChain.generate(options)
    }

    static let bundleId = "com.example.storekeeper"
    static let appAppleId: Int64 = 1_234_567_890
    /// 2026-01-01T00:00:00Z in epoch milliseconds.
    static let signedDate: Int64 = 1_767_225_600_000

    static func transaction(
        environment: String = "Sandbox",
        bundleId: String = bundleId,
        signedDate: Int64 = signedDate
    ) -> [String: Any] {
        [
            "transactionId": "2000000123456789", "originalTransactionId": "2000000123456789",
            "webOrderLineItemId": "2000000012345678", "bundleId": bundleId, "productId": "com.example.monthly",
            "subscriptionGroupIdentifier": "21000001", "purchaseDate": signedDate - 1000,
            "originalPurchaseDate": signedDate - 1000, "expiresDate": signedDate + 2_592_000_000, "quantity": 1,
            "type": "Auto-Renewable Subscription", "appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138",
            "inAppOwnershipType": "PURCHASED", "signedDate": signedDate, "environment": environment,
            "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441", "price": 9990,
            "currency": "USD",
        ]
    }

    static func renewalInfo(environment: String = "Sandbox") -> [String: Any] {
        [
            "originalTransactionId": "2000000123456789", "autoRenewProductId": "com.example.monthly",
            "productId": "com.example.monthly", "autoRenewStatus": 1, "signedDate": signedDate,
            "environment": environment, "renewalDate": signedDate + 2_592_000_000,
        ]
    }

    static func notification(
        data: [String: Any],
        type: String = "SUBSCRIBED",
        subtype: String? = "INITIAL_BUY"
    ) -> [String: Any] {
        var payload: [String: Any] = [
            "notificationType": type, "notificationUUID": "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6",
            "version": "2.0", "signedDate": signedDate, "data": data,
        ]
        if let subtype { payload["subtype"] = subtype }
        return payload
    }

    static func appTransaction(environment: String = "Production") -> [String: Any] {
        [
            "receiptType": environment, "appAppleId": appAppleId, "bundleId": bundleId, "applicationVersion": "1.2",
            "versionExternalIdentifier": 0, "receiptCreationDate": signedDate, "originalPurchaseDate": signedDate,
            "originalApplicationVersion": "1.0", "originalPlatform": "iOS",
        ]
    }

    /// Signs `payload` with the chain's leaf key, with the chain's `x5c` unless `header` replaces it.
    func sign(
        _ payload: [String: Any],
        header: [String: Any]? = nil,
        key: P256.Signing.PrivateKey? = nil
    ) throws
        -> String
    {
        let header = try header ?? ["alg": "ES256", "x5c": chain.x5c()]
        let encodedHeader = Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: .sortedKeys))
        let encodedPayload = Base64URL.encode(try JSONSerialization.data(withJSONObject: payload, options: .sortedKeys))
        let input = encodedHeader + "." + encodedPayload
        let signature = try (key ?? chain.leafKey).signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    func verifier(
        environments: Set<AppStoreEnvironment> = [.sandbox, .production],
        validationTime: SignedDataVerifier.ValidationTime = .signedDate,
        bundleId: String? = bundleId,
        maximumInputSize: Int = 256 * 1024
    ) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            configuration: .init(
                bundleId: bundleId,
                appAppleId: Self.appAppleId,
                environments: environments,
                roots: try TrustedRoots.only([chain.root]),
                deployment: .development,
                validationTime: validationTime,
                maximumInputSize: maximumInputSize
            )
        )
    }
}

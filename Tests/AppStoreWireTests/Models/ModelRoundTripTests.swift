import AppStoreWire
import Foundation
import Testing

/// decode → encode → decode must be lossless, and encoding must keep every key Apple sent.
@Suite struct ModelRoundTripTests {
    /// All key paths of a JSON value (`a.b`, `a.items[].c`), to compare what was sent with what is re-encoded.
    private static func keyPaths(_ value: Any, prefix: String = "") -> Set<String> {
        if let object = value as? [String: Any] {
            return object.reduce(into: Set<String>()) { paths, entry in
                let path = prefix.isEmpty ? entry.key : "\(prefix).\(entry.key)"
                paths.insert(path)
                paths.formUnion(keyPaths(entry.value, prefix: path))
            }
        }
        if let array = value as? [Any] {
            return array.reduce(into: Set<String>()) { $0.formUnion(keyPaths($1, prefix: prefix + "[]")) }
        }
        return []
    }

    private static func roundTrip<T: Codable & Equatable>(_ type: T.Type, json: Data) throws {
        let decoder = AppStoreJSON.makeDecoder()
        let first = try decoder.decode(type, from: json)
        let encoded = try AppStoreJSON.makeEncoder().encode(first)
        let second = try decoder.decode(type, from: encoded)
        #expect(first == second)
        let sentKeys = keyPaths(try JSONSerialization.jsonObject(with: json))
        let encodedKeys = keyPaths(try JSONSerialization.jsonObject(with: encoded))
        #expect(sentKeys == encodedKeys, "keys dropped: \(sentKeys.subtracting(encodedKeys).sorted())")
    }

    @Test(
        .enabled(if: AppleModelVectors.isAvailable, "needs ../shared/reference/apple-test-vectors"),
        arguments: [
            "signedNotification", "signedConsumptionRequestNotification", "signedSummaryNotification",
            "signedExternalPurchaseTokenNotification", "signedExternalPurchaseTokenSandboxNotification",
            "signedRescindConsentNotification",
        ]
    )
    func notificationFixture(_ name: String) throws {
        try Self.roundTrip(ResponseBodyV2DecodedPayload.self, json: AppleModelVectors.data(name))
    }

    @Test(
        .enabled(if: AppleModelVectors.isAvailable, "needs ../shared/reference/apple-test-vectors"),
        arguments: ["signedTransaction", "signedTransactionWithRevocation"]
    )
    func transactionFixture(_ name: String) throws {
        try Self.roundTrip(JWSTransactionDecodedPayload.self, json: AppleModelVectors.data(name))
    }

    @Test(.enabled(if: AppleModelVectors.isAvailable, "needs ../shared/reference/apple-test-vectors"))
    func renewalInfoFixture() throws {
        try Self.roundTrip(JWSRenewalInfoDecodedPayload.self, json: AppleModelVectors.data("signedRenewalInfo"))
    }

    @Test(.enabled(if: AppleModelVectors.isAvailable, "needs ../shared/reference/apple-test-vectors"))
    func appTransactionFixture() throws {
        try Self.roundTrip(AppTransaction.self, json: AppleModelVectors.data("appTransaction"))
        try Self.roundTrip(AppData.self, json: AppleModelVectors.data("appData"))
    }

    @Test func constructedValuesRoundTrip() throws {
        let transaction = JWSTransactionDecodedPayload(
            transactionId: "2000000123",
            originalTransactionId: "2000000001",
            bundleId: "com.example.app",
            productId: "pro.monthly",
            purchaseDate: Date(timeIntervalSince1970: 1_700_000_000.123),
            quantity: 1,
            type: .autoRenewable,
            appAccountToken: "AbCdEf00-0000-4000-8000-000000000000",
            revocationType: .familyRevoke,
            offerType: .winBack,
            offerDiscountType: .oneTime,
            environment: .sandbox,
            transactionReason: .renewal,
            price: 4990,
            currency: "EUR",
            previousOriginalTransactionId: "1999",
            billingPlanType: .billedUpfront,
            commitmentInfo: CommitmentInfo(billingPeriodNumber: 1, totalBillingPeriods: 12)
        )
        let renewal = JWSRenewalInfoDecodedPayload(
            autoRenewStatus: .off,
            expirationIntent: .billingError,
            priceIncreaseStatus: 1,
            environment: .production,
            advancedCommerceInfo: AdvancedCommerceRenewalInfo(
                items: [
                    AdvancedCommerceRenewalItem(
                        sku: "a",
                        offer: AdvancedCommerceOffer(period: .p3D, periodCount: 2, price: 0, reason: .winBack)
                    )
                ],
                period: .p1Y
            )
        )
        let notification = ResponseBodyV2DecodedPayload(
            notificationType: .test,
            notificationUUID: UUID().uuidString,
            version: "2.0",
            signedDate: Date(timeIntervalSince1970: 1_700_000_000),
            data: NotificationData(bundleId: "com.example.app", environment: .xcode, status: .billingGracePeriod)
        )
        let app = AppTransaction(receiptType: .xcode, appAppleId: 0, originalPlatform: .visionOS)
        let encoder = AppStoreJSON.makeEncoder()
        let decoder = AppStoreJSON.makeDecoder()
        #expect(try decoder.decode(JWSTransactionDecodedPayload.self, from: encoder.encode(transaction)) == transaction)
        #expect(try decoder.decode(JWSRenewalInfoDecodedPayload.self, from: encoder.encode(renewal)) == renewal)
        #expect(try decoder.decode(ResponseBodyV2DecodedPayload.self, from: encoder.encode(notification)) == notification)
        #expect(try decoder.decode(AppTransaction.self, from: encoder.encode(app)) == app)
        let body = ResponseBodyV2(signedPayload: "a.b.c")
        #expect(try decoder.decode(ResponseBodyV2.self, from: encoder.encode(body)) == body)
        #expect(String(decoding: try encoder.encode(body), as: UTF8.self) == #"{"signedPayload":"a.b.c"}"#)
    }

    @Test func absentFieldsAreOmittedWhenEncoding() throws {
        let encoded = try AppStoreJSON.makeEncoder().encode(JWSTransactionDecodedPayload(transactionId: "1"))
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"transactionId":"1"}"#)
        let empty = try AppStoreJSON.makeDecoder().decode(JWSTransactionDecodedPayload.self, from: Data("{}".utf8))
        #expect(empty == JWSTransactionDecodedPayload())
    }

    @Test func fractionalMillisecondDatesDecode() throws {
        // StoreKit Testing in Xcode writes dates with a fraction of a millisecond.
        let json = Data(
            #"{"signedDate": 1697679936049.7297, "purchaseDate": 1697679936000.5, "environment": "Xcode"}"#.utf8
        )
        let tx = try AppStoreJSON.makeDecoder().decode(JWSTransactionDecodedPayload.self, from: json)
        let signed = try #require(tx.signedDate)
        #expect(abs(signed.timeIntervalSince1970 - 1_697_679_936.049_729_7) < 1e-6)
        let purchased = try #require(tx.purchaseDate)
        #expect(abs(purchased.timeIntervalSince1970 - 1_697_679_936.000_5) < 1e-6)
        #expect(tx.verificationDate == tx.signedDate)
        #expect(tx.environment == .xcode)

        let renewal = try AppStoreJSON.makeDecoder().decode(
            JWSRenewalInfoDecodedPayload.self,
            from: Data(#"{"renewalDate": 1697679936049.7297}"#.utf8)
        )
        #expect(abs((renewal.renewalDate?.timeIntervalSince1970 ?? 0) - 1_697_679_936.049_729_7) < 1e-6)
        let app = try AppStoreJSON.makeDecoder().decode(
            AppTransaction.self,
            from: Data(#"{"receiptCreationDate": 1697679936049.7297}"#.utf8)
        )
        #expect(abs((app.verificationDate?.timeIntervalSince1970 ?? 0) - 1_697_679_936.049_729_7) < 1e-6)
    }

    @Test func missingNotificationTypeIsRejected() {
        #expect(throws: DecodingError.self) {
            try AppStoreJSON.makeDecoder().decode(
                ResponseBodyV2DecodedPayload.self,
                from: Data(#"{"notificationUUID": "x", "version": "2.0"}"#.utf8)
            )
        }
    }
}

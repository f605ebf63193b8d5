import AppStoreWire
import Foundation
import Testing

/// Decodes Apple's V2 notification fixtures (one per body kind) and checks every field and the claimed identity.
@Suite(.enabled(if: AppleModelVectors.isAvailable, "needs ../shared/reference/apple-test-vectors"))
struct NotificationFixtureTests {
    private let signedDate = AppleModelVectors.date(ms: 1_698_148_900_000)

    private func decode(_ name: String) throws -> ResponseBodyV2DecodedPayload {
        try AppleModelVectors.decode(ResponseBodyV2DecodedPayload.self, name)
    }

    @Test func signedNotification() throws {
        let payload = try decode("signedNotification")
        #expect(payload.notificationType == .subscribed)
        #expect(payload.subtype == .initialBuy)
        #expect(payload.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(payload.version == "2.0")
        #expect(payload.signedDate == signedDate)
        #expect(payload.summary == nil)
        #expect(payload.externalPurchaseToken == nil)
        #expect(payload.appData == nil)
        #expect(
            payload.data
                == NotificationData(
                    appAppleId: 41234,
                    bundleId: "com.example",
                    bundleVersion: "1.2.3",
                    environment: .localTesting,
                    signedTransactionInfo: "signed_transaction_info_value",
                    signedRenewalInfo: "signed_renewal_info_value",
                    status: .active
                )
        )
        #expect(payload.data?.consumptionRequestReason == nil)

        #expect(payload.verificationDate == signedDate)
        #expect(
            payload.claimedIdentity
                == PayloadIdentity(bundleId: "com.example", environment: .localTesting, appAppleId: 41234)
        )
    }

    @Test func consumptionRequestNotification() throws {
        let payload = try decode("signedConsumptionRequestNotification")
        #expect(payload.notificationType == .consumptionRequest)
        #expect(payload.subtype == nil)
        #expect(payload.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(payload.version == "2.0")
        #expect(payload.signedDate == signedDate)
        let data = try #require(payload.data)
        #expect(data.environment == .localTesting)
        #expect(data.appAppleId == 41234)
        #expect(data.bundleId == "com.example")
        #expect(data.bundleVersion == "1.2.3")
        #expect(data.signedTransactionInfo == "signed_transaction_info_value")
        #expect(data.signedRenewalInfo == "signed_renewal_info_value")
        #expect(data.status == .active)
        #expect(data.consumptionRequestReason == .unintendedPurchase)
        #expect(
            payload.claimedIdentity
                == PayloadIdentity(bundleId: "com.example", environment: .localTesting, appAppleId: 41234)
        )
    }

    @Test func summaryNotification() throws {
        let payload = try decode("signedSummaryNotification")
        #expect(payload.notificationType == .renewalExtension)
        #expect(payload.subtype == .summary)
        #expect(payload.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(payload.version == "2.0")
        #expect(payload.signedDate == signedDate)
        #expect(payload.data == nil)
        #expect(
            payload.summary
                == NotificationSummary(
                    requestIdentifier: "efb27071-45a4-4aca-9854-2a1e9146f265",
                    environment: .localTesting,
                    appAppleId: 41234,
                    bundleId: "com.example",
                    productId: "com.example.product",
                    storefrontCountryCodes: ["CAN", "USA", "MEX"],
                    failedCount: 2,
                    succeededCount: 5
                )
        )
        #expect(payload.verificationDate == signedDate)
        #expect(
            payload.claimedIdentity
                == PayloadIdentity(bundleId: "com.example", environment: .localTesting, appAppleId: 41234)
        )
    }

    @Test func externalPurchaseTokenNotification() throws {
        let payload = try decode("signedExternalPurchaseTokenNotification")
        #expect(payload.notificationType == .externalPurchaseToken)
        #expect(payload.subtype == .unreported)
        #expect(payload.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(payload.version == "2.0")
        #expect(payload.signedDate == signedDate)
        #expect(payload.data == nil)
        let token = try #require(payload.externalPurchaseToken)
        #expect(token.externalPurchaseId == "b2158121-7af9-49d4-9561-1f588205523e")
        #expect(token.tokenCreationDate == AppleModelVectors.date(ms: 1_698_148_950_000))
        #expect(token.appAppleId == 55555)
        #expect(token.bundleId == "com.example")
        #expect(token.impliedEnvironment == .production)
        #expect(
            payload.claimedIdentity
                == PayloadIdentity(bundleId: "com.example", environment: .production, appAppleId: 55555)
        )
    }

    @Test func externalPurchaseTokenSandboxNotification() throws {
        let payload = try decode("signedExternalPurchaseTokenSandboxNotification")
        #expect(payload.notificationType == .externalPurchaseToken)
        #expect(payload.subtype == .unreported)
        let token = try #require(payload.externalPurchaseToken)
        #expect(token.externalPurchaseId == "SANDBOX_b2158121-7af9-49d4-9561-1f588205523e")
        #expect(token.tokenCreationDate == AppleModelVectors.date(ms: 1_698_148_950_000))
        #expect(token.appAppleId == 55555)
        #expect(token.bundleId == "com.example")
        #expect(token.impliedEnvironment == .sandbox)
        #expect(
            payload.claimedIdentity
                == PayloadIdentity(bundleId: "com.example", environment: .sandbox, appAppleId: 55555)
        )
    }

    @Test func rescindConsentNotification() throws {
        let payload = try decode("signedRescindConsentNotification")
        #expect(payload.notificationType == .rescindConsent)
        #expect(payload.subtype == nil)
        #expect(payload.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(payload.version == "2.0")
        #expect(payload.signedDate == signedDate)
        #expect(payload.data == nil)
        #expect(
            payload.appData
                == AppData(
                    appAppleId: 41234,
                    bundleId: "com.example",
                    environment: .localTesting,
                    signedAppTransactionInfo: "signed_app_transaction_info_value"
                )
        )
        #expect(payload.verificationDate == signedDate)
        #expect(
            payload.claimedIdentity
                == PayloadIdentity(bundleId: "com.example", environment: .localTesting, appAppleId: 41234)
        )
    }

    @Test func standaloneAppData() throws {
        let appData = try AppleModelVectors.decode(AppData.self, "appData")
        #expect(appData.appAppleId == 987_654_321)
        #expect(appData.bundleId == "com.example")
        #expect(appData.environment == .sandbox)
        #expect(appData.signedAppTransactionInfo == "signed-app-transaction-info")
    }
}

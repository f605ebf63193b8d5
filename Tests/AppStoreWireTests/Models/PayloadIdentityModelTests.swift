import AppStoreWire
import Foundation
import Testing

/// `claimedIdentity` and `verificationDate` for every payload kind, without fixtures.
@Suite struct PayloadIdentityModelTests {
    private let date = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func transactionClaimsBundleAndEnvironmentOnly() {
        let tx = JWSTransactionDecodedPayload(bundleId: "com.example", signedDate: date, environment: .sandbox)
        #expect(tx.claimedIdentity == PayloadIdentity(bundleId: "com.example", environment: .sandbox))
        #expect(tx.claimedIdentity.appAppleId == nil)
        #expect(tx.verificationDate == date)
        #expect(JWSTransactionDecodedPayload().verificationDate == nil)
        #expect(JWSTransactionDecodedPayload().claimedIdentity == PayloadIdentity())
    }

    @Test func renewalInfoClaimsEnvironmentOnly() {
        let renewal = JWSRenewalInfoDecodedPayload(signedDate: date, environment: .production)
        #expect(renewal.claimedIdentity == PayloadIdentity(environment: .production))
        #expect(renewal.verificationDate == date)
    }

    @Test func appTransactionClaimsReceiptTypeAndUsesReceiptCreationDate() {
        let app = AppTransaction(
            receiptType: .production,
            appAppleId: 1234,
            bundleId: "com.example",
            receiptCreationDate: date,
            originalPurchaseDate: date.addingTimeInterval(-100)
        )
        #expect(app.claimedIdentity == PayloadIdentity(bundleId: "com.example", environment: .production, appAppleId: 1234))
        #expect(app.verificationDate == date)
    }

    @Test func notificationIdentityComesFromWhicheverBodyIsPresent() {
        func notification(
            data: NotificationData? = nil,
            summary: NotificationSummary? = nil,
            token: ExternalPurchaseToken? = nil,
            appData: AppData? = nil
        ) -> ResponseBodyV2DecodedPayload {
            ResponseBodyV2DecodedPayload(
                notificationType: .test,
                signedDate: date,
                data: data,
                summary: summary,
                externalPurchaseToken: token,
                appData: appData
            )
        }
        let fromData = notification(data: NotificationData(appAppleId: 1, bundleId: "a", environment: .sandbox))
        #expect(fromData.claimedIdentity == PayloadIdentity(bundleId: "a", environment: .sandbox, appAppleId: 1))
        #expect(fromData.verificationDate == date)

        let sandboxData = notification(data: NotificationData(bundleId: "a", environment: .sandbox))
        #expect(sandboxData.claimedIdentity == PayloadIdentity(bundleId: "a", environment: .sandbox))

        let fromSummary = notification(
            summary: NotificationSummary(environment: .production, appAppleId: 2, bundleId: "b")
        )
        #expect(fromSummary.claimedIdentity == PayloadIdentity(bundleId: "b", environment: .production, appAppleId: 2))

        let fromAppData = notification(appData: AppData(appAppleId: 3, bundleId: "c", environment: .xcode))
        #expect(fromAppData.claimedIdentity == PayloadIdentity(bundleId: "c", environment: .xcode, appAppleId: 3))

        #expect(notification().claimedIdentity == PayloadIdentity())
        #expect(ResponseBodyV2DecodedPayload(notificationType: .test).verificationDate == nil)
    }

    @Test(arguments: [
        ("SANDBOX_b2158121-7af9-49d4-9561-1f588205523e", AppStoreEnvironment.sandbox),
        ("SANDBOX", .sandbox),
        ("b2158121-7af9-49d4-9561-1f588205523e", .production),
        ("sandbox_lowercase", .production),
        ("X_SANDBOX", .production),
    ])
    func externalPurchaseTokenEnvironmentFollowsSandboxPrefix(id: String, expected: AppStoreEnvironment) {
        let token = ExternalPurchaseToken(externalPurchaseId: id, appAppleId: 55555, bundleId: "com.example")
        #expect(token.impliedEnvironment == expected)
        let payload = ResponseBodyV2DecodedPayload(notificationType: .externalPurchaseToken, externalPurchaseToken: token)
        #expect(payload.claimedIdentity == PayloadIdentity(bundleId: "com.example", environment: expected, appAppleId: 55555))
    }

    @Test func externalPurchaseTokenWithoutIdIsProduction() {
        #expect(ExternalPurchaseToken().impliedEnvironment == .production)
    }

    @Test func appAccountTokenKeepsAppleSpellingAndParsesAnyCase() throws {
        let lower = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let tx = JWSTransactionDecodedPayload(appAccountToken: lower)
        let upper = JWSTransactionDecodedPayload(appAccountToken: lower.uppercased())
        #expect(tx.appAccountTokenUUID != nil)
        #expect(tx.appAccountTokenUUID == upper.appAccountTokenUUID)
        #expect(JWSTransactionDecodedPayload(appAccountToken: "not-a-uuid").appAccountTokenUUID == nil)
        #expect(JWSTransactionDecodedPayload().appAccountTokenUUID == nil)
        #expect(JWSRenewalInfoDecodedPayload(appAccountToken: lower.uppercased()).appAccountTokenUUID == tx.appAccountTokenUUID)
        let encoded = String(decoding: try AppStoreJSON.makeEncoder().encode(tx), as: UTF8.self)
        #expect(encoded == #"{"appAccountToken":"\#(lower)"}"#)
    }
}

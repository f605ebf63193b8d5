import Foundation
import Testing

@testable import AppStoreWire

@Suite("Legacy verifyReceipt and V1 notification models")
struct LegacyModelTests {
    private func decodeResponse(_ json: String) throws -> VerifyReceiptResponse {
        try JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(json.utf8))
    }

    @Test func decodesEveryReceiptField() throws {
        let response = try decodeResponse(LegacySamples.verifyReceiptResponse)
        #expect(response.status == .valid)
        #expect(response.disposition == .valid)
        #expect(response.environment == .sandbox)
        #expect(response.isRetryable == false)
        #expect(response.latestReceipt == "MIIUVAYJKoZIhvcNAQcCoIIURTCCFEECAQEx")

        let receipt = try #require(response.receipt)
        #expect(receipt.receiptType == "ProductionSandbox")
        #expect(receipt.adamId == 0)
        #expect(receipt.appItemId == 1_234_567_890)  // quoted in the body, a number here
        #expect(receipt.bundleId == "com.example.storekeeper")
        #expect(receipt.applicationVersion == "1.0")
        #expect(receipt.downloadId == 0)
        #expect(receipt.versionExternalIdentifier == 0)
        #expect(receipt.receiptCreationDate == "2023-10-24 11:20:00 Etc/GMT")
        #expect(receipt.receiptCreationDateMs == 1_698_146_400_000)
        #expect(receipt.receiptCreationDatePst == "2023-10-24 04:20:00 America/Los_Angeles")
        #expect(receipt.receiptCreationDateValue == Date(timeIntervalSince1970: 1_698_146_400))
        #expect(receipt.requestDateMs == 1_698_148_800_000)
        #expect(receipt.requestDatePst == "2023-10-24 05:00:00 America/Los_Angeles")
        #expect(receipt.originalPurchaseDate == "2013-08-01 07:00:00 Etc/GMT")
        #expect(receipt.originalPurchaseDateMs == 1_375_340_400_000)
        #expect(receipt.originalApplicationVersion == "1.0")
        #expect(receipt.preorderDateMs == 1_372_662_000_000)
        #expect(receipt.expirationDateMs == 1_893_456_000_000)
        #expect(receipt.expirationDatePst == "2029-12-31 16:00:00 America/Los_Angeles")

        let inApp = try #require(receipt.inApp?.first)
        #expect(receipt.inApp?.count == 1)
        #expect(inApp.productId == "com.example.coins100")
        #expect(inApp.quantityValue == 1)
        #expect(inApp.transactionId == "1000000000000001")
        #expect(inApp.purchaseDateMs == 1_697_796_000_000)
        #expect(inApp.isTrialPeriodValue == false)
        #expect(inApp.expiresDateMs == nil)
        #expect(inApp.isCancelled == false)
        #expect(inApp.inAppOwnershipTypeValue == .purchased)
    }

    @Test func decodesEveryTransactionField() throws {
        let response = try decodeResponse(LegacySamples.verifyReceiptResponse)
        let lri = try #require(response.latestReceiptInfo?.first)
        #expect(lri.quantity == "1")
        #expect(lri.quantityValue == 1)
        #expect(lri.productId == "com.example.monthly")
        #expect(lri.transactionId == "2000000000000002")
        #expect(lri.originalTransactionId == "2000000000000001")
        #expect(lri.purchaseDate == "2023-10-01 10:00:00 Etc/GMT")
        #expect(lri.rawPurchaseDateMs == "1696154400000")
        #expect(lri.purchaseDateMs == 1_696_154_400_000)
        #expect(lri.purchaseDatePst == "2023-10-01 03:00:00 America/Los_Angeles")
        #expect(lri.purchaseDateValue == Date(timeIntervalSince1970: 1_696_154_400))
        #expect(lri.originalPurchaseDateMs == 1_693_562_400_000)
        #expect(lri.originalPurchaseDatePst == "2023-09-01 03:00:00 America/Los_Angeles")
        #expect(lri.expiresDate == "2023-11-01 10:00:00 Etc/GMT")
        #expect(lri.expiresDateMs == 1_698_832_800_000)
        #expect(lri.expiresDateValue == Date(timeIntervalSince1970: 1_698_832_800))
        #expect(lri.cancellationDateMs == 1_696_500_000_000)
        #expect(lri.cancellationDatePst == "2023-10-05 03:00:00 America/Los_Angeles")
        #expect(lri.cancellationReasonValue == 1)
        #expect(lri.isCancelled)
        #expect(lri.webOrderLineItemId == "2000000044444444")
        #expect(lri.webOrderLineItemIdValue == 2_000_000_044_444_444)
        #expect(lri.isTrialPeriodValue == true)
        #expect(lri.isInIntroOfferPeriodValue == false)
        #expect(lri.isUpgradedValue == true)
        #expect(lri.promotionalOfferId == "promo_winback")
        #expect(lri.offerCodeRefName == "SPRING_CODES")
        #expect(lri.subscriptionGroupIdentifier == "20571234")
        #expect(lri.inAppOwnershipTypeValue == .familyShared)
        #expect(lri.appAccountTokenValue == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
    }

    @Test func decodesEveryPendingRenewalField() throws {
        let response = try decodeResponse(LegacySamples.verifyReceiptResponse)
        let info = try #require(response.pendingRenewalInfo?.first)
        #expect(info.autoRenewProductId == "com.example.yearly")
        #expect(info.autoRenewStatusValue == true)
        #expect(info.expirationIntentValue == 2)
        #expect(info.gracePeriodExpiresDate == "2023-11-17 10:00:00 Etc/GMT")
        #expect(info.gracePeriodExpiresDateMs == 1_700_215_200_000)
        #expect(info.gracePeriodExpiresDatePst == "2023-11-17 02:00:00 America/Los_Angeles")
        #expect(info.gracePeriodExpiresDateValue == Date(timeIntervalSince1970: 1_700_215_200))
        #expect(info.isInBillingRetryPeriodValue == true)
        #expect(info.offerCodeRefName == "SPRING_CODES")
        #expect(info.originalTransactionId == "2000000000000001")
        #expect(info.priceConsentStatusValue == 0)
        #expect(info.priceIncreaseStatusValue == 1)
        #expect(info.productId == "com.example.monthly")
        #expect(info.promotionalOfferId == "promo_winback")
    }

    @Test func acceptsNumbersWhereStringsAreDocumentedAndTheReverse() throws {
        let json = #"""
            {"status": "21002", "receipt": {"adam_id": "987", "download_id": 55.0,
             "in_app": [{"quantity": 2, "transaction_id": 1000000000000009, "is_trial_period": true,
                         "purchase_date_ms": 1697796000000}]}}
            """#
        let response = try decodeResponse(json)
        #expect(response.status == .malformedReceiptData)
        #expect(response.receipt?.adamId == 987)
        #expect(response.receipt?.downloadId == 55)
        let tx = try #require(response.receipt?.inApp?.first)
        #expect(tx.quantity == "2")
        #expect(tx.quantityValue == 2)
        #expect(tx.transactionId == "1000000000000009")
        #expect(tx.isTrialPeriod == "true")
        #expect(tx.purchaseDateMs == 1_697_796_000_000)
    }

    @Test func decodesTheBundleIdOfAnIOS6StyleReceipt() throws {
        let response = try decodeResponse(
            #"{"status": 21006, "receipt": {"bid": "com.example.storekeeper", "bvrs": "1.0", "product_id": "p"}}"#
        )
        #expect(response.receipt?.bid == "com.example.storekeeper")
        #expect(response.receipt?.bundleId == nil)
        let reencoded = try JSONDecoder().decode(VerifyReceiptResponse.self, from: JSONEncoder().encode(response))
        #expect(reencoded.receipt?.bid == "com.example.storekeeper")
    }

    @Test(
        arguments: [
            (#"{"status": 21150, "is-retryable": true}"#, true),
            (#"{"status": 21150, "is_retryable": true}"#, true),
            (#"{"status": 21150, "is-retryable": 1}"#, true),
            (#"{"status": 21150, "is_retryable": "false"}"#, false),
            (#"{"status": 21150}"#, nil),
        ] as [(String, Bool?)]
    )
    func readsBothSpellingsOfIsRetryable(json: String, expected: Bool?) throws {
        #expect(try decodeResponse(json).isRetryable == expected)
    }

    @Test func errorResponseWithExceptionAndNoReceipt() throws {
        let response = try decodeResponse(
            #"{"status": 21199, "is-retryable": false, "exception": "com.apple.jingle.Boom"}"#
        )
        #expect(response.status.rawValue == 21199)
        #expect(response.receipt == nil)
        #expect(response.exception == "com.apple.jingle.Boom")
        #expect(response.disposition == .invalid)
    }

    @Test func responseWithoutStatusIsRejected() {
        #expect(throws: DecodingError.self) { try decodeResponse(#"{"environment": "Sandbox"}"#) }
    }

    @Test func responseRoundTripsWithTheHyphenatedKey() throws {
        let response = try decodeResponse(LegacySamples.verifyReceiptResponse)
        let encoded = try JSONEncoder().encode(response)
        let object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(object["is-retryable"] as? Bool == false)
        #expect((object["receipt"] as? [String: Any])?["receipt_creation_date_ms"] as? String == "1698146400000")
        #expect(try JSONDecoder().decode(VerifyReceiptResponse.self, from: encoded) == response)
    }

    @Test func requestUsesHyphenatedKeysAndHidesSecrets() throws {
        let request = VerifyReceiptRequest(receiptData: "BASE64==", password: "hexsecret", excludeOldTransactions: true)
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(request)) as? [String: Any]
        )
        #expect(object["receipt-data"] as? String == "BASE64==")
        #expect(object["password"] as? String == "hexsecret")
        #expect(object["exclude-old-transactions"] as? Bool == true)
        #expect(object.count == 3)
        #expect(!"\(request)".contains("hexsecret"))
        #expect(!"\(request)".contains("BASE64"))

        let minimal =
            try JSONSerialization.jsonObject(
                with: JSONEncoder().encode(VerifyReceiptRequest(receiptData: "abc"))
            ) as? [String: Any]
        #expect(minimal?.keys.sorted() == ["receipt-data"])
    }

    @Test func decodesV1Notification() throws {
        let body = try JSONDecoder().decode(ResponseBodyV1.self, from: Data(LegacySamples.notificationV1.utf8))
        #expect(body.notificationType == .didChangeRenewalStatus)
        #expect(body.environment == "PROD")
        #expect(body.appStoreEnvironment == .production)
        #expect(body.password == "s3cr3t-shared-secret")
        #expect(body.bid == "com.example.storekeeper")
        #expect(body.bvrs == "42")
        #expect(body.autoRenewStatus == "false")
        #expect(body.autoRenewStatusValue == false)
        #expect(body.autoRenewStatusChangeDate == "2023-10-24 11:20:00 Etc/GMT")
        #expect(body.autoRenewStatusChangeDateMs == 1_698_146_400_000)
        #expect(body.autoRenewStatusChangeDatePst == "2023-10-24 04:20:00 America/Los_Angeles")
        #expect(body.autoRenewStatusChangeDateValue == Date(timeIntervalSince1970: 1_698_146_400))
        #expect(body.autoRenewProductId == "com.example.monthly")
        #expect(body.autoRenewAdamId == "1499999999")
        #expect(body.expirationIntent == 1)
        #expect(body.originalTransactionId == "2000000000000001")
        #expect(body.deprecation == "Mon, 5 Jun 2023 00:00:00 GMT")

        let unified = try #require(body.unifiedReceipt)
        #expect(unified.environment == .production)
        #expect(unified.status == 0)
        #expect(unified.latestReceipt == "MIIUVAYJKoZIhvcNAQcCoIIURTCCFEECAQEx")
        #expect(unified.latestReceiptInfo?.first?.expiresDateMs == 1_698_832_800_000)
        #expect(unified.pendingRenewalInfo?.first?.autoRenewStatusValue == false)

        // The shared secret must not leak through interpolation into logs.
        #expect(!"\(body)".contains("s3cr3t"))
        #expect(!String(reflecting: body).contains("s3cr3t"))
    }

    @Test func keepsUnknownNotificationTypes() throws {
        let body = try JSONDecoder().decode(
            ResponseBodyV1.self,
            from: Data(
                #"{"notification_type": "BRAND_NEW_EVENT", "environment": "Sandbox", "expiration_intent": "3"}"#.utf8
            )
        )
        #expect(body.notificationType?.rawValue == "BRAND_NEW_EVENT")
        #expect(body.notificationType?.isKnown == false)
        #expect(body.appStoreEnvironment == .sandbox)
        #expect(body.expirationIntent == 3)
        #expect(NotificationTypeV1.knownValues.count == 13)
        #expect(NotificationTypeV1.didRecover.isKnown)
    }
}

import AppStoreWire
import Foundation
import Testing

/// Decodes Apple's transaction, renewal-info and app-transaction fixtures and checks every field.
@Suite(.enabled(if: AppleModelVectors.isAvailable, "needs ../shared/reference/apple-test-vectors"))
struct SignedPayloadFixtureTests {
    private func date(_ ms: Int64) -> Date { AppleModelVectors.date(ms: ms) }

    @Test func signedTransaction() throws {
        let tx = try AppleModelVectors.decode(JWSTransactionDecodedPayload.self, "signedTransaction")
        #expect(tx.transactionId == "23456")
        #expect(tx.originalTransactionId == "12345")
        #expect(tx.webOrderLineItemId == "34343")
        #expect(tx.bundleId == "com.example")
        #expect(tx.productId == "com.example.product")
        #expect(tx.subscriptionGroupIdentifier == "55555")
        #expect(tx.purchaseDate == date(1_698_148_900_000))
        #expect(tx.originalPurchaseDate == date(1_698_148_800_000))
        #expect(tx.expiresDate == date(1_698_149_000_000))
        #expect(tx.quantity == 1)
        #expect(tx.type == .autoRenewable)
        #expect(tx.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(tx.appAccountTokenUUID == UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138"))
        #expect(tx.inAppOwnershipType == .purchased)
        #expect(tx.signedDate == date(1_698_148_900_000))
        #expect(tx.revocationReason == .refundedDueToIssue)
        #expect(tx.revocationDate == date(1_698_148_950_000))
        #expect(tx.isUpgraded == true)
        #expect(tx.offerType == .introductory)
        #expect(tx.offerIdentifier == "abc.123")
        #expect(tx.environment == .localTesting)
        #expect(tx.transactionReason == .purchase)
        #expect(tx.storefront == "USA")
        #expect(tx.storefrontId == "143441")
        #expect(tx.price == 10990)
        #expect(tx.currency == "USD")
        #expect(tx.offerDiscountType == .payAsYouGo)
        #expect(tx.appTransactionId == "71134")
        #expect(tx.offerPeriod == "P1Y")
        #expect(tx.billingPlanType == .monthly)
        #expect(tx.revocationType == nil)
        #expect(tx.revocationPercentage == nil)
        #expect(tx.previousOriginalTransactionId == nil)

        let commitment = try #require(tx.commitmentInfo)
        #expect(commitment.billingPeriodNumber == 3)
        #expect(commitment.totalBillingPeriods == 12)
        #expect(commitment.commitmentExpiresDate == date(1_698_150_000_000))
        #expect(commitment.commitmentPrice == 119_880)

        let info = try #require(tx.advancedCommerceInfo)
        #expect(info.descriptors == AdvancedCommerceDescriptors(description: "Premium Plan", displayName: "Premium"))
        #expect(info.estimatedTax == 1500)
        #expect(info.period == .p1M)
        #expect(info.requestReferenceId == "ref-12345")
        #expect(info.taxCode == "TAX_CODE_1")
        #expect(info.taxExclusivePrice == 8490)
        #expect(info.taxRate == "0.15")
        let items = try #require(info.items)
        #expect(items.count == 1)
        let item = try #require(items.first)
        #expect(item.sku == "com.example.sku.premium")
        #expect(item.description == "Premium feature")
        #expect(item.displayName == "Premium Feature")
        #expect(item.price == 9990)
        #expect(item.offer == nil)
        #expect(item.revocationDate == date(1_698_149_200_000))
        #expect(
            item.refunds == [
                AdvancedCommerceRefund(
                    refundAmount: 5000,
                    refundDate: date(1_698_149_100_000),
                    refundReason: .fulfillmentIssue,
                    refundType: .prorated
                )
            ]
        )

        #expect(tx.verificationDate == date(1_698_148_900_000))
        #expect(tx.claimedIdentity == PayloadIdentity(bundleId: "com.example", environment: .localTesting))
    }

    @Test func signedTransactionWithRevocation() throws {
        let tx = try AppleModelVectors.decode(JWSTransactionDecodedPayload.self, "signedTransactionWithRevocation")
        #expect(tx.transactionId == "23456")
        #expect(tx.originalTransactionId == "12345")
        #expect(tx.revocationReason == .refundedDueToIssue)
        #expect(tx.revocationDate == date(1_698_148_950_000))
        #expect(tx.revocationType == .refundProrated)
        #expect(tx.revocationPercentage == 50_000)
        #expect(tx.type == .autoRenewable)
        #expect(tx.price == 10990)
        #expect(tx.advancedCommerceInfo == nil)
        #expect(tx.commitmentInfo == nil)
        #expect(tx.billingPlanType == nil)
    }

    @Test func signedRenewalInfo() throws {
        let renewal = try AppleModelVectors.decode(JWSRenewalInfoDecodedPayload.self, "signedRenewalInfo")
        #expect(renewal.expirationIntent == .customerCancelled)
        #expect(renewal.originalTransactionId == "12345")
        #expect(renewal.autoRenewProductId == "com.example.product.2")
        #expect(renewal.productId == "com.example.product")
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.priceIncreaseStatus == .customerHasNotResponded)
        #expect(renewal.gracePeriodExpiresDate == date(1_698_148_900_000))
        #expect(renewal.offerType == .promotional)
        #expect(renewal.offerIdentifier == "abc.123")
        #expect(renewal.signedDate == date(1_698_148_800_000))
        #expect(renewal.environment == .localTesting)
        #expect(renewal.recentSubscriptionStartDate == date(1_698_148_800_000))
        #expect(renewal.renewalDate == date(1_698_148_850_000))
        #expect(renewal.renewalPrice == 9990)
        #expect(renewal.currency == "USD")
        #expect(renewal.offerDiscountType == .payAsYouGo)
        #expect(renewal.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(renewal.appTransactionId == "71134")
        #expect(renewal.offerPeriod == "P1Y")
        #expect(renewal.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(renewal.appAccountTokenUUID == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(renewal.renewalBillingPlanType == .monthly)

        #expect(
            renewal.commitmentInfo
                == RenewalCommitmentInfo(
                    commitmentAutoRenewProductId: "com.example.product.commitment",
                    commitmentAutoRenewStatus: .on,
                    commitmentRenewalBillingPlanType: .monthly,
                    commitmentRenewalDate: date(1_698_149_500_000),
                    commitmentRenewalPrice: 9990
                )
        )

        let info = try #require(renewal.advancedCommerceInfo)
        #expect(info.consistencyToken == "token-abc-123")
        #expect(info.descriptors?.description == "Premium Plan")
        #expect(info.descriptors?.displayName == "Premium")
        #expect(info.period == .p1M)
        #expect(info.requestReferenceId == "ref-12345")
        #expect(info.taxCode == "TAX_CODE_1")
        let item = try #require(info.items?.first)
        #expect(info.items?.count == 1)
        #expect(item.sku == "com.example.sku.premium")
        #expect(item.description == "Premium feature")
        #expect(item.displayName == "Premium Feature")
        #expect(item.price == 9990)
        #expect(
            item.priceIncreaseInfo
                == AdvancedCommercePriceIncreaseInfo(
                    dependentSKUs: ["com.example.sku.1", "com.example.sku.2"],
                    price: 12990,
                    status: .pending
                )
        )

        #expect(renewal.verificationDate == date(1_698_148_800_000))
        #expect(renewal.claimedIdentity == PayloadIdentity(environment: .localTesting))
    }

    @Test func appTransaction() throws {
        let app = try AppleModelVectors.decode(AppTransaction.self, "appTransaction")
        #expect(app.receiptType == .localTesting)
        #expect(app.appAppleId == 531_412)
        #expect(app.bundleId == "com.example")
        #expect(app.applicationVersion == "1.2.3")
        #expect(app.versionExternalIdentifier == 512)
        #expect(app.receiptCreationDate == date(1_698_148_900_000))
        #expect(app.originalPurchaseDate == date(1_698_148_800_000))
        #expect(app.originalApplicationVersion == "1.1.2")
        #expect(app.deviceVerification == "device_verification_value")
        #expect(app.deviceVerificationNonce == "48ccfa42-7431-4f22-9908-7e88983e105a")
        #expect(app.deviceVerificationNonceUUID == UUID(uuidString: "48CCFA42-7431-4F22-9908-7E88983E105A"))
        #expect(app.preorderDate == date(1_698_148_700_000))
        #expect(app.appTransactionId == "71134")
        #expect(app.originalPlatform == .iOS)

        #expect(app.verificationDate == date(1_698_148_900_000))
        #expect(
            app.claimedIdentity
                == PayloadIdentity(bundleId: "com.example", environment: .localTesting, appAppleId: 531_412)
        )
    }
}

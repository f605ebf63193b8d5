import AppStoreWire
import Foundation
import Testing

/// Values Apple adds later must decode, re-encode unchanged and report `isKnown == false`.
@Suite struct OpenEnumModelTests {
    private func reencoded<T: Codable>(_ value: T) throws -> [String: Any] {
        let data = try AppStoreJSON.makeEncoder().encode(value)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func unknownNotificationTypeAndSubtype() throws {
        let json = Data(
            #"""
            {"notificationType": "SOMETHING_NEW_2030", "subtype": "SOMETHING_ELSE", "notificationUUID": "u",
             "version": "2.0", "signedDate": 1698148900000,
             "data": {"environment": "Staging2030", "status": 9, "consumptionRequestReason": "NEW_REASON"}}
            """#.utf8
        )
        let payload = try AppStoreJSON.makeDecoder().decode(ResponseBodyV2DecodedPayload.self, from: json)
        #expect(payload.notificationType.rawValue == "SOMETHING_NEW_2030")
        #expect(payload.notificationType.isKnown == false)
        #expect(payload.subtype?.rawValue == "SOMETHING_ELSE")
        #expect(payload.subtype?.isKnown == false)
        #expect(payload.data?.environment?.isKnown == false)
        #expect(payload.data?.status?.rawValue == 9)
        #expect(payload.data?.status?.isKnown == false)
        #expect(payload.data?.consumptionRequestReason?.rawValue == "NEW_REASON")
        #expect(payload.data?.consumptionRequestReason?.isKnown == false)

        let object = try reencoded(payload)
        #expect(object["notificationType"] as? String == "SOMETHING_NEW_2030")
        #expect(object["subtype"] as? String == "SOMETHING_ELSE")
        let data = try #require(object["data"] as? [String: Any])
        #expect(data["environment"] as? String == "Staging2030")
        #expect(data["status"] as? Int == 9)
        #expect(data["consumptionRequestReason"] as? String == "NEW_REASON")
        #expect(
            try AppStoreJSON.makeDecoder().decode(
                ResponseBodyV2DecodedPayload.self,
                from: AppStoreJSON.makeEncoder().encode(payload)
            ) == payload
        )
    }

    @Test func unknownTransactionEnums() throws {
        let json = Data(
            #"""
            {"offerType": 99, "type": "Hologram", "inAppOwnershipType": "BORROWED", "revocationReason": 7,
             "revocationType": "REFUND_PARTIAL_2030", "offerDiscountType": "PAY_LATER",
             "transactionReason": "GIFT", "billingPlanType": "WEEKLY"}
            """#.utf8
        )
        let tx = try AppStoreJSON.makeDecoder().decode(JWSTransactionDecodedPayload.self, from: json)
        #expect(tx.offerType == OfferType(rawValue: 99))
        #expect(tx.offerType?.isKnown == false)
        #expect(tx.type?.isKnown == false)
        #expect(tx.inAppOwnershipType?.isKnown == false)
        #expect(tx.revocationReason?.rawValue == 7)
        #expect(tx.revocationReason?.isKnown == false)
        #expect(tx.revocationType?.isKnown == false)
        #expect(tx.offerDiscountType?.isKnown == false)
        #expect(tx.transactionReason?.isKnown == false)
        #expect(tx.billingPlanType?.isKnown == false)

        let object = try reencoded(tx)
        #expect(object["offerType"] as? Int == 99)
        #expect(object["type"] as? String == "Hologram")
        #expect(object["inAppOwnershipType"] as? String == "BORROWED")
        #expect(object["revocationReason"] as? Int == 7)
        #expect(object["revocationType"] as? String == "REFUND_PARTIAL_2030")
        #expect(object["offerDiscountType"] as? String == "PAY_LATER")
        #expect(object["transactionReason"] as? String == "GIFT")
        #expect(object["billingPlanType"] as? String == "WEEKLY")
    }

    @Test func unknownRenewalAndAppTransactionEnums() throws {
        let renewal = try AppStoreJSON.makeDecoder().decode(
            JWSRenewalInfoDecodedPayload.self,
            from: Data(
                #"""
                {"autoRenewStatus": 2, "expirationIntent": 42, "priceIncreaseStatus": 3,
                 "commitmentInfo": {"commitmentAutoRenewStatus": 5, "commitmentRenewalBillingPlanType": "DAILY"},
                 "advancedCommerceInfo": {"period": "P2Y", "items": [{"SKU": "s",
                   "priceIncreaseInfo": {"status": "DEFERRED"},
                   "offer": {"period": "P5D", "periodCount": 1, "price": 0, "reason": "LOYALTY"}}]}}
                """#.utf8
            )
        )
        #expect(renewal.autoRenewStatus?.isKnown == false)
        #expect(renewal.expirationIntent?.rawValue == 42)
        #expect(renewal.expirationIntent?.isKnown == false)
        #expect(renewal.priceIncreaseStatus?.isKnown == false)
        #expect(renewal.commitmentInfo?.commitmentAutoRenewStatus?.isKnown == false)
        #expect(renewal.commitmentInfo?.commitmentRenewalBillingPlanType?.rawValue == "DAILY")
        #expect(renewal.advancedCommerceInfo?.period?.isKnown == false)
        let item = try #require(renewal.advancedCommerceInfo?.items?.first)
        #expect(item.sku == "s")
        #expect(item.priceIncreaseInfo?.status?.rawValue == "DEFERRED")
        #expect(item.offer?.period?.rawValue == "P5D")
        #expect(item.offer?.reason?.isKnown == false)
        let object = try reencoded(renewal)
        #expect(object["expirationIntent"] as? Int == 42)
        #expect((object["commitmentInfo"] as? [String: Any])?["commitmentRenewalBillingPlanType"] as? String == "DAILY")

        let app = try AppStoreJSON.makeDecoder().decode(
            AppTransaction.self,
            from: Data(#"{"originalPlatform": "watchOS", "receiptType": "Staging"}"#.utf8)
        )
        #expect(app.originalPlatform?.rawValue == "watchOS")
        #expect(app.originalPlatform?.isKnown == false)
        #expect(app.receiptType?.isKnown == false)
        #expect(try reencoded(app)["originalPlatform"] as? String == "watchOS")
    }

    @Test func knownValuesMatchApple() {
        #expect(OfferType.knownValues.map(\.rawValue) == [1, 2, 3, 4, 5])
        #expect(OfferType.retention.rawValue == 5)
        #expect(InAppOwnershipType.knownValues.map(\.rawValue) == ["PURCHASED", "FAMILY_SHARED", "ASSIGNED"])
        #expect(InvitationManagement.knownValues.map(\.rawValue) == ["APPLE", "DEVELOPER"])
        #expect(NotificationTypeV2.unclaimSeats.isKnown && Subtype.seats.isKnown && AdditionalTransactionReason.seatAddition.isKnown)
        #expect(OfferType.winBack.rawValue == 4)
        #expect(OfferDiscountType.knownValues.map(\.rawValue) == ["FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT", "ONE_TIME"])
        #expect(RevocationReason.knownValues.map(\.rawValue) == [0, 1])
        #expect(RevocationType.knownValues.map(\.rawValue) == ["REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE", "ASSIGNMENT_REVOKE"])
        #expect(TransactionReason.knownValues.map(\.rawValue) == ["PURCHASE", "RENEWAL"])
        #expect(AutoRenewStatus.knownValues.map(\.rawValue) == [0, 1])
        #expect(ExpirationIntent.knownValues.map(\.rawValue) == [1, 2, 3, 4, 5])
        #expect(PriceIncreaseStatus.knownValues.map(\.rawValue) == [0, 1])
        #expect(
            ConsumptionRequestReason.knownValues.map(\.rawValue)
                == ["UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER"]
        )
        #expect(PurchasePlatform.knownValues.map(\.rawValue) == ["iOS", "macOS", "tvOS", "visionOS"])
        #expect(BillingPlanType.knownValues.map(\.rawValue) == ["BILLED_UPFRONT", "MONTHLY"])
        #expect(OfferType.introductory.isKnown && PurchasePlatform.visionOS.isKnown && BillingPlanType.monthly.isKnown)
        #expect(OfferType(rawValue: 99).description == "99")
    }
}

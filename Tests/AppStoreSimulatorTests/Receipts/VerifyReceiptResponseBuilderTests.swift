import AppStoreSimulator
import AppStoreWire
import Foundation
import Testing

@Suite struct VerifyReceiptResponseBuilderTests {
    typealias F = ReceiptFixtures

    /// The receipt the device sent: issued before the last renewals and the refund happened.
    func sentReceipt() throws -> AppReceipt {
        let early = F.transactions().filter { ["1000", "1001", "3000", "3001"].contains($0.transactionId) }
            .map { transaction -> JWSTransactionDecodedPayload in
                var copy = transaction
                copy.revocationDate = nil
                copy.revocationReason = nil
                return copy
            }
        let signed = try F.builder(identity: try F.identity(), creationDate: F.now.addingTimeInterval(-150 * F.day))
            .build(transactions: early)
        return try AppReceiptParser().parse(signed.der)
    }

    func response(excludeOld: Bool = false) throws -> VerifyReceiptResponse {
        let builder = VerifyReceiptResponseBuilder(
            environment: .sandbox,
            requestDate: F.now.addingTimeInterval(0.25),
            excludeOldTransactions: excludeOld
        )
        return try builder.response(
            receipt: try sentReceipt(),
            transactions: F.transactions(),
            renewalInfos: F.renewalInfos(),
            latestReceiptBuilder: F.builder(identity: try F.identity())
        )
    }

    @Test func jsonRoundTripsWithAppleStringTypes() throws {
        let response = try response()
        let json = try JSONEncoder().encode(response)
        let decoded = try JSONDecoder().decode(VerifyReceiptResponse.self, from: json)
        #expect(decoded == response)
        #expect(decoded.status == .valid)
        #expect(decoded.disposition == .valid)
        #expect(decoded.environment == .sandbox)

        // On the wire: numbers, Booleans and dates are strings, as Apple sends them; status is a number.
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect((object["status"] as? NSNumber)?.intValue == 0)
        #expect(object["environment"] as? String == "Sandbox")
        let receipt = try #require(object["receipt"] as? [String: Any])
        #expect(receipt["receipt_type"] as? String == "ProductionSandbox")
        #expect(receipt["bundle_id"] as? String == F.bundleId)
        #expect(receipt["application_version"] as? String == "42")
        #expect(receipt["receipt_creation_date_ms"] as? String == "1754265600000")
        #expect(receipt["request_date_ms"] as? String == "1767225600250")
        #expect(receipt["request_date"] as? String == "2026-01-01 00:00:00 Etc/GMT")
        #expect(receipt["request_date_pst"] as? String == "2025-12-31 16:00:00 America/Los_Angeles")
        let lri = try #require(object["latest_receipt_info"] as? [[String: Any]])
        let entries = lri + (try #require(receipt["in_app"] as? [[String: Any]]))
        for entry in entries {
            for (key, value) in entry {
                #expect(value is String, "\(key) is \(type(of: value)), not a string")
            }
            for key in [
                "quantity", "transaction_id", "purchase_date", "purchase_date_ms", "purchase_date_pst",
                "is_trial_period",
            ] {
                #expect(entry[key] != nil, "\(key) missing")
            }
        }
        let renewals = try #require(object["pending_renewal_info"] as? [[String: Any]])
        #expect(renewals.count == 2)
        for renewal in renewals {
            for (key, value) in renewal { #expect(value is String, "\(key) is not a string") }
        }
        #expect(object["latest_receipt"] is String)
    }

    @Test func appleSampleDateTriplet() throws {
        // Apple's documented example: 2013-08-01 07:00:00 Etc/GMT.
        let date = Date(timeIntervalSince1970: 1_375_340_400.123)
        let entry = VerifyReceiptResponseBuilder.legacyTransaction(
            JWSTransactionDecodedPayload(transactionId: "1", purchaseDate: date, type: .consumable),
            inLatestReceiptInfo: true
        )
        #expect(entry.purchaseDate == "2013-08-01 07:00:00 Etc/GMT")
        #expect(entry.rawPurchaseDateMs == "1375340400123")
        #expect(entry.purchaseDatePst == "2013-08-01 00:00:00 America/Los_Angeles")
        #expect(entry.purchaseDateValue == date)
        #expect(entry.quantity == "1")
        #expect(entry.isTrialPeriod == "false")
        #expect(entry.isInIntroOfferPeriod == nil)  // not a subscription
    }

    @Test func receiptObjectAndInAppComeFromTheSentReceipt() throws {
        let response = try response()
        let receipt = try #require(response.receipt)
        #expect(receipt.bundleId == F.bundleId)
        #expect(receipt.originalApplicationVersion == "1.0")
        #expect(receipt.receiptCreationDateValue == F.now.addingTimeInterval(-150 * F.day))
        #expect(receipt.requestDateValue == F.now.addingTimeInterval(0.25))
        #expect(receipt.adamId == 0 && receipt.appItemId == 0 && receipt.versionExternalIdentifier == 0)
        let inApp = try #require(receipt.inApp)
        #expect(Set(inApp.compactMap(\.transactionId)) == ["1000", "1001", "3000", "3001"])
        let byId = Dictionary(uniqueKeysWithValues: inApp.map { ($0.transactionId ?? "", $0) })
        let inputs = Dictionary(uniqueKeysWithValues: F.transactions().map { ($0.transactionId ?? "", $0) })
        for (id, entry) in byId {
            let input = try #require(inputs[id])
            #expect(entry.productId == input.productId)
            #expect(entry.originalTransactionId == input.originalTransactionId)
            #expect(entry.quantityValue == input.quantity.map(Int.init))
            #expect(entry.purchaseDateValue == input.purchaseDate)
            #expect(entry.originalPurchaseDateValue == input.originalPurchaseDate)
            #expect(entry.expiresDateValue == input.expiresDate)
            #expect(entry.webOrderLineItemId == input.webOrderLineItemId)
            #expect(entry.inAppOwnershipTypeValue == input.inAppOwnershipType)
            #expect(entry.subscriptionGroupIdentifier == nil)  // latest_receipt_info only
        }
        #expect(byId["1000"]?.isTrialPeriodValue == true)
        #expect(byId["1000"]?.isInIntroOfferPeriodValue == false)
        #expect(byId["1001"]?.isInIntroOfferPeriodValue == true)
        // Refunded after the receipt was issued: the current transaction tells.
        #expect(byId["3001"]?.isCancelled == true)
        #expect(byId["3001"]?.cancellationReasonValue == 1)
        #expect(byId["3001"]?.cancellationDateValue == F.now.addingTimeInterval(-195 * F.day))
    }

    @Test func latestReceiptInfoIsNewestFirstAndComplete() async throws {
        let response = try response()
        let lri = try #require(response.latestReceiptInfo)
        #expect(lri.count == F.transactions().count)
        let dates = lri.compactMap(\.purchaseDateMs)
        #expect(dates == dates.sorted(by: >))
        let promo = try #require(lri.first { $0.transactionId == "1002" })
        #expect(promo.promotionalOfferId == "winback.half")
        #expect(promo.isInIntroOfferPeriodValue == false)
        #expect(promo.subscriptionGroupIdentifier == "21000001")
        #expect(promo.appAccountTokenValue == UUID(uuidString: "8d4ab9b6-2f0e-4a73-9a2a-5e0c0b1f2d3c"))
        #expect(lri.first { $0.transactionId == "2000" }?.isUpgradedValue == true)
        #expect(lri.first { $0.transactionId == "2001" }?.isUpgraded == nil)
        #expect(lri.first { $0.transactionId == "3002" }?.offerCodeRefName == "SPRING")
        #expect(lri.first { $0.transactionId == "3002" }?.inAppOwnershipTypeValue == .familyShared)

        // latest_receipt is a real receipt of the current transactions, signed by the identity.
        let latest = try #require(response.latestReceipt)
        let identity = try F.identity()
        let verified = try await AppReceiptSignatureVerifier(trustedRoots: [identity.root], bundleId: F.bundleId)
            .verify(base64Encoded: latest)
        #expect(Set(verified.inAppPurchases.compactMap(\.transactionId)) == Set(lri.compactMap(\.transactionId)))
    }

    @Test func excludeOldTransactionsKeepsTheLatestRenewalPerSubscription() throws {
        let lri = try #require(try response(excludeOld: true).latestReceiptInfo)
        // Newest of each original transaction; one-time purchases are their own originals.
        #expect(lri.compactMap(\.transactionId) == ["1003", "2001", "3002", "3001", "3000"])
        #expect(Set(lri.compactMap(\.originalTransactionId)).count == lri.count)
        let all = try #require(try response().latestReceiptInfo)
        for entry in lri {
            let newest = all.filter { $0.originalTransactionId == entry.originalTransactionId }
                .compactMap(\.purchaseDateMs).max()
            #expect(entry.purchaseDateMs == newest)
        }
    }

    @Test func pendingRenewalInfoFromRenewalInfos() throws {
        let renewals = try #require(try response().pendingRenewalInfo)
        let monthly = try #require(renewals.first { $0.originalTransactionId == "1000" })
        #expect(monthly.productId == F.monthly)
        #expect(monthly.autoRenewProductId == F.yearly)
        #expect(monthly.autoRenewStatus == "1")
        #expect(monthly.isInBillingRetryPeriod == "1")
        #expect(monthly.gracePeriodExpiresDateValue == F.now + 3 * F.day)
        #expect(monthly.gracePeriodExpiresDatePst == "2026-01-03 16:00:00 America/Los_Angeles")
        #expect(monthly.priceIncreaseStatus == "0")
        #expect(monthly.priceConsentStatus == "0")
        #expect(monthly.promotionalOfferId == "winback.half")
        #expect(monthly.expirationIntent == nil)
        let yearly = try #require(renewals.first { $0.originalTransactionId == "2000" })
        #expect(yearly.autoRenewStatusValue == false)
        #expect(yearly.expirationIntentValue == 1)
        #expect(yearly.isInBillingRetryPeriodValue == false)
        #expect(yearly.offerCodeRefName == "LOYAL")
        #expect(yearly.promotionalOfferId == nil)
    }

    @Test func noSubscriptionFieldsWithoutSubscriptions() throws {
        let oneTime = F.transactions().filter { $0.type != .autoRenewable && $0.type != .nonRenewing }
        let receipt = try AppReceiptParser().parse(
            try F.builder(identity: try F.identity()).build(transactions: oneTime).der
        )
        let response = VerifyReceiptResponseBuilder(environment: .production, requestDate: F.now).response(
            receipt: receipt,
            transactions: oneTime,
            renewalInfos: [],
            latestReceipt: "unused"
        )
        #expect(response.status == .valid)
        #expect(response.environment == .production)
        #expect(response.receipt?.inApp?.count == 2)
        #expect(response.latestReceipt == nil)
        #expect(response.latestReceiptInfo == nil)
        #expect(response.pendingRenewalInfo == nil)
    }

    @Test func inAppEntryFromAReceiptAlone() throws {
        let receipt = try sentReceipt()
        // No transactions known: entries are made from the receipt itself.
        let legacy = VerifyReceiptResponseBuilder(environment: .sandbox, requestDate: F.now)
            .legacyReceipt(receipt, transactions: [])
        let entries = Dictionary(uniqueKeysWithValues: (legacy.inApp ?? []).map { ($0.transactionId ?? "", $0) })
        let trial = try #require(entries["1000"])
        #expect(trial.isTrialPeriod == "true")
        #expect(trial.isInIntroOfferPeriod == "false")
        #expect(trial.webOrderLineItemId == "501000")
        #expect(trial.expiresDateValue == F.now.addingTimeInterval(-193 * F.day))
        let coins = try #require(entries["3000"])
        #expect(coins.quantity == "3")
        #expect(coins.isInIntroOfferPeriod == nil)
        #expect(coins.expiresDate == nil)
    }
}

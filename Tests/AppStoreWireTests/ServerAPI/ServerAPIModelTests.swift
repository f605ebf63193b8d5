import Foundation
import Testing

@testable import AppStoreWire

@Suite("Server API request bodies, enums and errors")
struct ServerAPIModelTests {
    private func json(_ value: some Encodable) throws -> [String: Any] {
        let data = try AppStoreJSON.makeEncoder().encode(value)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func consumptionRequestV2() throws {
        let object = try json(
            ConsumptionRequest(
                customerConsented: true,
                sampleContentProvided: false,
                deliveryStatus: .undeliveredServerOutage,
                consumptionPercentage: 25_000,
                refundPreference: .grantProrated
            )
        )
        #expect(object["customerConsented"] as? Bool == true)
        #expect(object["sampleContentProvided"] as? Bool == false)
        #expect(object["deliveryStatus"] as? String == "UNDELIVERED_SERVER_OUTAGE")
        #expect(object["consumptionPercentage"] as? Int == 25_000)
        #expect(object["refundPreference"] as? String == "GRANT_PRORATED")

        let minimal = try json(
            ConsumptionRequest(customerConsented: true, sampleContentProvided: true, deliveryStatus: .delivered)
        )
        #expect(minimal.keys.sorted() == ["customerConsented", "deliveryStatus", "sampleContentProvided"])
    }

    @Test func consumptionRequestV1SendsEveryField() throws {
        let token = UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")!
        let request = ConsumptionRequestV1(
            customerConsented: true,
            consumptionStatus: .partiallyConsumed,
            platform: .apple,
            sampleContentProvided: false,
            deliveryStatus: .didNotDeliverDueToInGameCurrencyChange,
            appAccountToken: token,
            accountTenure: .thirtyDaysToNinetyDays,
            playTime: .oneToSixHours,
            lifetimeDollarsRefunded: .zeroDollars,
            lifetimeDollarsPurchased: .twoThousandDollarsOrGreater,
            userStatus: .limitedAccess,
            refundPreference: .preferDecline
        )
        let object = try json(request)
        #expect(object["customerConsented"] as? Bool == true)
        #expect(object["consumptionStatus"] as? Int == 2)
        #expect(object["platform"] as? Int == 1)
        #expect(object["sampleContentProvided"] as? Bool == false)
        #expect(object["deliveryStatus"] as? Int == 4)
        #expect(object["appAccountToken"] as? String == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(object["accountTenure"] as? Int == 4)
        #expect(object["playTime"] as? Int == 3)
        #expect(object["lifetimeDollarsRefunded"] as? Int == 1)
        #expect(object["lifetimeDollarsPurchased"] as? Int == 7)
        #expect(object["userStatus"] as? Int == 4)
        #expect(object["refundPreference"] as? Int == 2)
        #expect(
            try AppStoreJSON.makeDecoder().decode(
                ConsumptionRequestV1.self,
                from: AppStoreJSON.makeEncoder().encode(request)
            ) == request
        )

        // Undeclared values are 0 and a missing token is the empty string: all fields are required.
        let undeclared = try json(
            ConsumptionRequestV1(
                customerConsented: true,
                sampleContentProvided: true,
                deliveryStatus: .deliveredAndWorkingProperly
            )
        )
        #expect(undeclared.count == 12)
        #expect(undeclared["appAccountToken"] as? String == "")
        #expect(undeclared["refundPreference"] as? Int == 0)
        #expect(undeclared["accountTenure"] as? Int == 0)
    }

    @Test func extendRequests() throws {
        let one = try json(
            ExtendRenewalDateRequest(
                extendByDays: 45,
                extendReasonCode: .serviceIssueOrOutage,
                requestIdentifier: "req-1"
            )
        )
        #expect(one["extendByDays"] as? Int == 45)
        #expect(one["extendReasonCode"] as? Int == 3)
        #expect(one["requestIdentifier"] as? String == "req-1")

        let mass = try json(
            MassExtendRenewalDateRequest(
                requestIdentifier: "758883e8-151b-47b7-abd0-60c4d804c2f5",
                extendByDays: 7,
                extendReasonCode: .customerSatisfaction,
                productId: "com.example.monthly",
                storefrontCountryCodes: ["USA", "FRA"]
            )
        )
        #expect(mass["requestIdentifier"] as? String == "758883e8-151b-47b7-abd0-60c4d804c2f5")
        #expect(mass["extendByDays"] as? Int == 7)
        #expect(mass["extendReasonCode"] as? Int == 1)
        #expect(mass["productId"] as? String == "com.example.monthly")
        #expect(mass["storefrontCountryCodes"] as? [String] == ["USA", "FRA"])
    }

    @Test func notificationHistoryRequestUsesWholeMilliseconds() throws {
        let request = NotificationHistoryRequest(
            startDate: Date(timeIntervalSince1970: 1_698_148_900.123_9),
            endDate: Date(timeIntervalSince1970: 1_698_248_900),
            notificationType: .subscribed,
            notificationSubtype: .initialBuy,
            transactionId: "999",
            onlyFailures: true
        )
        let data = try AppStoreJSON.makeEncoder().encode(request)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""startDate":1698148900123,"#))
        #expect(text.contains(#""endDate":1698248900000"#))
        let object = try json(request)
        #expect(object["notificationType"] as? String == "SUBSCRIBED")
        #expect(object["notificationSubtype"] as? String == "INITIAL_BUY")
        #expect(object["transactionId"] as? String == "999")
        #expect(object["onlyFailures"] as? Bool == true)
        #expect(object["originalTransactionId"] == nil)
        let decoded = try AppStoreJSON.makeDecoder().decode(NotificationHistoryRequest.self, from: data)
        #expect(decoded.startDate == Date(timeIntervalSince1970: 1_698_148_900.123))
        #expect(decoded.notificationSubtype == .initialBuy)
    }

    @Test func appAccountTokenRequestIsLowerCase() throws {
        let object = try json(
            UpdateAppAccountTokenRequest(appAccountToken: UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")!)
        )
        #expect(object["appAccountToken"] as? String == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
    }

    @Test func transactionHistoryQueryRepeatsFiltersInOrder() {
        let request = TransactionHistoryRequest(
            revision: "rev+/=",
            startDate: Date(timeIntervalSince1970: 1_698_148_900),
            endDate: Date(timeIntervalSince1970: 1_698_148_950.5),
            productIds: ["a", "b"],
            productTypes: [.autoRenewable, .consumable],
            subscriptionGroupIdentifiers: ["g1", "g2"],
            inAppOwnershipType: .familyShared,
            sort: .descending,
            revoked: false
        )
        let items = request.queryItems.map { "\($0.name)=\($0.value ?? "")" }
        #expect(
            items == [
                "revision=rev+/=", "startDate=1698148900000", "endDate=1698148950500", "productId=a", "productId=b",
                "productType=AUTO_RENEWABLE", "productType=CONSUMABLE", "sort=DESCENDING",
                "subscriptionGroupIdentifier=g1", "subscriptionGroupIdentifier=g2", "inAppOwnershipType=FAMILY_SHARED",
                "revoked=false",
            ]
        )
        #expect(TransactionHistoryRequest().queryItems.isEmpty)
        // Opaque tokens keep their `+`, `/` and `=` through percent-encoding.
        #expect(ServerAPIEncoding.query(request.queryItems).hasPrefix("revision=rev%2B%2F%3D&"))
    }

    @Test func errorCodeTableIsCompleteAndRetryableOnesAreMarked() {
        // 65 of the App Store Server API (4 of them late 2026), 26 of the Retention Messaging API.
        #expect(APIErrorCode.knownValues.count == 91)
        #expect(APIErrorCode.forbiddenNoPassingTest.rawValue == 4_030_026)
        #expect(Set(APIErrorCode.knownValues).count == APIErrorCode.knownValues.count)
        let retryable = APIErrorCode.knownValues.filter(\.isRetryable).map(\.rawValue).sorted()
        #expect(retryable == [4_040_002, 4_040_004, 4_040_006, 4_290_000, 5_000_001])
        #expect(APIErrorCode.transactionIdNotFound.rawValue == 4_040_010)
        #expect(APIErrorCode.invalidAppAccountTokenUUID.rawValue == 4_000_183)
        #expect(!APIErrorCode(rawValue: 4_049_999).isRetryable)
    }

    @Test func errorRetryability() {
        func error(_ status: Int, _ code: Int32?) -> AppStoreServerAPIError {
            AppStoreServerAPIError(
                kind: .httpStatus,
                httpStatus: status,
                errorCode: code.map(APIErrorCode.init(rawValue:))
            )
        }
        #expect(error(500, 5_000_001).isRetryable)
        #expect(!error(500, 5_000_000).isRetryable)
        #expect(error(503, nil).isRetryable)
        #expect(error(502, 5_999_999).isRetryable)  // unknown code on a 5xx: an outage
        #expect(error(429, 4_290_000).isRetryable)
        #expect(error(429, nil).isRetryable)
        #expect(error(404, 4_040_006).isRetryable)
        #expect(!error(404, 4_040_010).isRetryable)
        #expect(!error(401, nil).isRetryable)
        #expect(!error(400, 4_000_006).isRetryable)
        #expect(AppStoreServerAPIError(kind: .transport).isRetryable)
        #expect(!AppStoreServerAPIError(kind: .malformedResponse).isRetryable)
    }

    @Test func retryAfterIsEpochMilliseconds() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(
            AppStoreServerAPIClient.retryAfterDate("1700000005000", now: now)
                == Date(timeIntervalSince1970: 1_700_000_005)
        )
        // Small numbers are RFC 9110 delay-seconds.
        #expect(AppStoreServerAPIClient.retryAfterDate("30", now: now) == now.addingTimeInterval(30))
        #expect(AppStoreServerAPIClient.retryAfterDate("soon", now: now) == nil)
    }

    @Test func backoffGrowsAndIsCapped() {
        let policy = AppStoreServerAPIRetryPolicy(
            maxAttempts: 10,
            initialDelay: .milliseconds(100),
            maxDelay: .milliseconds(350),
            jitter: false
        )
        #expect(policy.backoffDelay(retry: 1) == .milliseconds(100))
        #expect(policy.backoffDelay(retry: 2) == .milliseconds(200))
        #expect(policy.backoffDelay(retry: 3) == .milliseconds(350))
        #expect(policy.backoffDelay(retry: 9) == .milliseconds(350))
        let jittered = AppStoreServerAPIRetryPolicy(initialDelay: .seconds(1), maxDelay: .seconds(10))
        for retry in 1...5 {
            let delay = jittered.backoffDelay(retry: retry)
            #expect(delay <= .seconds(10) && delay >= .milliseconds(500))
        }
        #expect(AppStoreServerAPIRetryPolicy(maxAttempts: 0).maxAttempts == 1)
    }

    @Test func baseURLs() {
        #expect(AppStoreServerAPIBaseURL.production.url.absoluteString == "https://api.storekit.apple.com")
        #expect(AppStoreServerAPIBaseURL.sandbox.url.absoluteString == "https://api.storekit-sandbox.apple.com")
        #expect(AppStoreServerAPIBaseURL(environment: .production) == .production)
        #expect(AppStoreServerAPIBaseURL(environment: .sandbox) == .sandbox)
        #expect(AppStoreServerAPIBaseURL(environment: .xcode) == nil)
        #expect(AppStoreServerAPIBaseURL(environment: .localTesting) == nil)
    }

    @Test func openEnumsKeepUnknownValues() throws {
        let item = try AppStoreJSON.makeDecoder().decode(
            SendAttemptItem.self,
            from: Data(#"{"attemptDate": 1698148900000, "sendAttemptResult": "NEW_FAILURE"}"#.utf8)
        )
        #expect(item.sendAttemptResult?.rawValue == "NEW_FAILURE")
        #expect(item.sendAttemptResult?.isKnown == false)
        let lookup = try AppStoreJSON.makeDecoder().decode(
            OrderLookupResponse.self,
            from: Data(#"{"status": 7, "signedTransactions": [], "extra": true}"#.utf8)
        )
        #expect(lookup.status?.rawValue == 7)
        #expect(SendAttemptResult.knownValues.count == 11)
        #expect(ExtendReasonCode.knownValues.map(\.rawValue) == [0, 1, 2, 3])
        #expect(DeliveryStatus.knownValues.count == 5)
        #expect(RefundPreference.knownValues.map(\.rawValue) == ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"])
        #expect(DeliveryStatusV1.knownValues.map(\.rawValue) == [0, 1, 2, 3, 4, 5])
        #expect(RefundPreferenceV1.knownValues.map(\.rawValue) == [0, 1, 2, 3])
        #expect(AccountTenure.knownValues.count == 8)
        #expect(PlayTime.knownValues.count == 8)
        #expect(LifetimeDollarsPurchased.knownValues.count == 8)
        #expect(LifetimeDollarsRefunded.knownValues.count == 8)
        #expect(UserStatus.knownValues.map(\.rawValue) == [0, 1, 2, 3, 4])
        #expect(ConsumptionStatus.knownValues.map(\.rawValue) == [0, 1, 2, 3])
        #expect(Platform.knownValues.map(\.rawValue) == [0, 1, 2])
    }
}

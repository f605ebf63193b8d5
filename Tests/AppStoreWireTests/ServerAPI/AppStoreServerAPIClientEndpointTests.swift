import Foundation
import Testing

@testable import AppStoreWire

/// Each endpoint's method, path, query and body, checked on the wire against a local server.
@Suite("AppStoreServerAPIClient endpoints over a local socket")
struct AppStoreServerAPIClientEndpointTests {
    private func exchange<T: Sendable>(
        _ response: LocalHTTPServer.Response,
        _ call: (AppStoreServerAPIClient) async throws -> T
    ) async throws -> (T, LocalHTTPServer.Request) {
        let identity = TestSigningIdentity()
        let before = Date()
        let (result, requests) = try await withLocalServer(handler: { _ in response }) { server, httpClient in
            let client = try makeAPIClient(server: server, httpClient: httpClient, identity: identity)
            return (try await call(client), server.requests)
        }
        let after = Date()
        #expect(requests.count == 1)
        let request = try #require(requests.first)
        expectAuthorized(request, identity: identity, issuedWithin: before...after)
        return (result, request)
    }

    private func expectAuthorized(
        _ request: LocalHTTPServer.Request,
        identity: TestSigningIdentity,
        issuedWithin window: ClosedRange<Date>
    ) {
        #expect(request.header("Accept") == "application/json")
        guard let token = JWTInspector.bearer(request.header("Authorization")), let jwt = JWTInspector(token) else {
            Issue.record("no bearer JWT on \(request.method) \(request.uri)")
            return
        }
        #expect(jwt.verifies(with: identity.publicKey))
        #expect(jwt.header["kid"] as? String == TestSigningIdentity.keyId)
        #expect(jwt.claims["bid"] as? String == TestSigningIdentity.bundleId)
        #expect(jwt.claims["aud"] as? String == "appstoreconnect-v1")
        if let iat = jwt.intClaim("iat"), let exp = jwt.intClaim("exp") {
            #expect(exp - iat <= 3600)
            // iat is whole seconds, taken while the call ran (a loaded machine may stretch the call itself).
            #expect(Double(iat) >= window.lowerBound.timeIntervalSince1970.rounded(.down) - 1)
            #expect(Double(iat) <= window.upperBound.timeIntervalSince1970 + 1)
        } else {
            Issue.record("iat/exp missing")
        }
    }

    @Test func getTransactionInfo() async throws {
        let (response, request) = try await exchange(.json(#"{"signedTransactionInfo": "jws.tx.info"}"#)) {
            try await $0.getTransactionInfo(transactionId: "2000000123")
        }
        #expect(request.method == "GET")
        #expect(request.uri == "/inApps/v1/transactions/2000000123")
        #expect(request.body.isEmpty)
        #expect(response.signedTransactionInfo == "jws.tx.info")
    }

    @Test func getTransactionHistoryV2WithEveryFilter() async throws {
        let body =
            #"{"revision": "r2", "hasMore": false, "bundleId": "com.example", "appAppleId": 1234, "environment": "Sandbox", "signedTransactions": ["a", "b"]}"#
        let (response, request) = try await exchange(.json(body)) {
            try await $0.getTransactionHistory(
                transactionId: "1000",
                request: TransactionHistoryRequest(
                    revision: "r1+/=",
                    startDate: Date(timeIntervalSince1970: 1_698_148_900),
                    endDate: Date(timeIntervalSince1970: 1_698_148_999),
                    productIds: ["com.example.a", "com.example.b"],
                    productTypes: [.autoRenewable, .nonConsumable],
                    subscriptionGroupIdentifiers: ["g1"],
                    inAppOwnershipType: .purchased,
                    sort: .descending,
                    revoked: true
                )
            )
        }
        #expect(request.method == "GET")
        #expect(request.path == "/inApps/v2/history/1000")
        #expect(request.queryValues("revision") == ["r1+/="])
        #expect(request.queryValues("startDate") == ["1698148900000"])
        #expect(request.queryValues("endDate") == ["1698148999000"])
        #expect(request.queryValues("productId") == ["com.example.a", "com.example.b"])
        #expect(request.queryValues("productType") == ["AUTO_RENEWABLE", "NON_CONSUMABLE"])
        #expect(request.queryValues("subscriptionGroupIdentifier") == ["g1"])
        #expect(request.queryValues("inAppOwnershipType") == ["PURCHASED"])
        #expect(request.queryValues("sort") == ["DESCENDING"])
        #expect(request.queryValues("revoked") == ["true"])
        #expect(response.signedTransactions == ["a", "b"])
        #expect(response.environment == .sandbox)
        #expect(response.appAppleId == 1234)
    }

    @Test func getTransactionHistoryV1() async throws {
        let (response, request) = try await exchange(
            .json(#"{"revision": "r", "hasMore": false, "signedTransactions": []}"#)
        ) {
            try await $0.getTransactionHistoryV1(transactionId: "1000", request: .init(sort: .ascending))
        }
        #expect(request.method == "GET")
        #expect(request.uri == "/inApps/v1/history/1000?sort=ASCENDING")
        #expect(response.hasMore == false)
    }

    @Test func getAllSubscriptionStatusesWithStatusFilter() async throws {
        let (response, request) = try await exchange(
            .json(
                #"{"environment": "Production", "data": [{"subscriptionGroupIdentifier": "g", "lastTransactions": [{"status": 3}]}]}"#
            )
        ) {
            try await $0.getAllSubscriptionStatuses(transactionId: "77", status: [.active, .billingRetry])
        }
        #expect(request.method == "GET")
        #expect(request.path == "/inApps/v1/subscriptions/77")
        #expect(request.queryValues("status") == ["1", "3"])
        #expect(response.data?.first?.lastTransactions?.first?.status == .billingRetry)

        let (_, unfiltered) = try await exchange(.json("{}")) {
            try await $0.getAllSubscriptionStatuses(transactionId: "77")
        }
        #expect(unfiltered.uri == "/inApps/v1/subscriptions/77")
    }

    @Test func sendConsumptionInformationV2() async throws {
        let (_, request) = try await exchange(.empty(202)) {
            try await $0.sendConsumptionInformation(
                transactionId: "55",
                request: ConsumptionRequest(
                    customerConsented: true,
                    sampleContentProvided: true,
                    deliveryStatus: .delivered,
                    consumptionPercentage: 50_000,
                    refundPreference: .decline
                )
            )
        }
        #expect(request.method == "PUT")
        #expect(request.uri == "/inApps/v2/transactions/consumption/55")
        #expect(request.header("Content-Type") == "application/json")
        let body = try #require(request.bodyJSON())
        #expect(body["customerConsented"] as? Bool == true)
        #expect(body["sampleContentProvided"] as? Bool == true)
        #expect(body["deliveryStatus"] as? String == "DELIVERED")
        #expect(body["consumptionPercentage"] as? Int == 50_000)
        #expect(body["refundPreference"] as? String == "DECLINE")
    }

    @Test func sendConsumptionInformationV1() async throws {
        let (_, request) = try await exchange(.empty(202)) {
            try await $0.sendConsumptionInformationV1(
                transactionId: "56",
                request: ConsumptionRequestV1(
                    customerConsented: true,
                    consumptionStatus: .fullyConsumed,
                    platform: .apple,
                    sampleContentProvided: false,
                    deliveryStatus: .deliveredAndWorkingProperly,
                    playTime: .overSixteenDays,
                    userStatus: .active,
                    refundPreference: .preferGrant
                )
            )
        }
        #expect(request.method == "PUT")
        #expect(request.uri == "/inApps/v1/transactions/consumption/56")
        let body = try #require(request.bodyJSON())
        #expect(body.count == 12)
        #expect(body["consumptionStatus"] as? Int == 3)
        #expect(body["playTime"] as? Int == 7)
        #expect(body["appAccountToken"] as? String == "")
        #expect(body["refundPreference"] as? Int == 1)
    }

    @Test func lookUpOrderId() async throws {
        let (response, request) = try await exchange(.json(#"{"status": 0, "signedTransactions": ["t1"]}"#)) {
            try await $0.lookUpOrderId(orderId: "MK5TTTVWJH")
        }
        #expect(request.method == "GET")
        #expect(request.uri == "/inApps/v1/lookup/MK5TTTVWJH")
        #expect(response.status == .valid)
        #expect(response.signedTransactions == ["t1"])
    }

    @Test func getRefundHistoryV2AndV1() async throws {
        let (page, request) = try await exchange(
            .json(#"{"signedTransactions": ["r1"], "revision": "next", "hasMore": true}"#)
        ) {
            try await $0.getRefundHistory(transactionId: "88", revision: "prev")
        }
        #expect(request.method == "GET")
        #expect(request.uri == "/inApps/v2/refund/lookup/88?revision=prev")
        #expect(page.revision == "next")

        let (first, firstRequest) = try await exchange(.json(#"{"signedTransactions": [], "hasMore": false}"#)) {
            try await $0.getRefundHistory(transactionId: "88")
        }
        #expect(firstRequest.uri == "/inApps/v2/refund/lookup/88")
        #expect(first.hasMore == false)

        let (v1, v1Request) = try await exchange(.json(#"{"signedTransactions": ["a", "b"]}"#)) {
            try await $0.getRefundHistoryV1(originalTransactionId: "89")
        }
        #expect(v1Request.method == "GET")
        #expect(v1Request.uri == "/inApps/v1/refund/lookup/89")
        #expect(v1.signedTransactions == ["a", "b"])
    }

    @Test func extendSubscriptionRenewalDate() async throws {
        let (response, request) = try await exchange(
            .json(
                #"{"originalTransactionId": "2312412", "webOrderLineItemId": "9993", "success": true, "effectiveDate": 1698148900000}"#
            )
        ) {
            try await $0.extendSubscriptionRenewalDate(
                originalTransactionId: "2312412",
                request: ExtendRenewalDateRequest(
                    extendByDays: 30,
                    extendReasonCode: .customerSatisfaction,
                    requestIdentifier: "ext-1"
                )
            )
        }
        #expect(request.method == "PUT")
        #expect(request.uri == "/inApps/v1/subscriptions/extend/2312412")
        let body = try #require(request.bodyJSON())
        #expect(body["extendByDays"] as? Int == 30)
        #expect(body["extendReasonCode"] as? Int == 1)
        #expect(body["requestIdentifier"] as? String == "ext-1")
        #expect(response.success == true)
        #expect(response.effectiveDate == Date(timeIntervalSince1970: 1_698_148_900))
    }

    @Test func massExtendAndItsStatus() async throws {
        let (response, request) = try await exchange(
            .json(#"{"requestIdentifier": "758883e8-151b-47b7-abd0-60c4d804c2f5"}"#)
        ) {
            try await $0.extendRenewalDateForAllActiveSubscribers(
                request: MassExtendRenewalDateRequest(
                    requestIdentifier: "758883e8-151b-47b7-abd0-60c4d804c2f5",
                    extendByDays: 3,
                    extendReasonCode: .serviceIssueOrOutage,
                    productId: "com.example.monthly",
                    storefrontCountryCodes: ["USA"]
                )
            )
        }
        #expect(request.method == "POST")
        #expect(request.uri == "/inApps/v1/subscriptions/extend/mass")
        let body = try #require(request.bodyJSON())
        #expect(body["productId"] as? String == "com.example.monthly")
        #expect(body["storefrontCountryCodes"] as? [String] == ["USA"])
        #expect(body["extendReasonCode"] as? Int == 3)
        #expect(response.requestIdentifier == "758883e8-151b-47b7-abd0-60c4d804c2f5")

        let (status, statusRequest) = try await exchange(
            .json(#"{"requestIdentifier": "758883e8", "complete": false, "succeededCount": 3, "failedCount": 0}"#)
        ) {
            try await $0.getStatusOfSubscriptionRenewalDateExtensions(
                productId: "com.example.monthly",
                requestIdentifier: "758883e8-151b-47b7-abd0-60c4d804c2f5"
            )
        }
        #expect(statusRequest.method == "GET")
        #expect(
            statusRequest.uri
                == "/inApps/v1/subscriptions/extend/mass/com.example.monthly/758883e8-151b-47b7-abd0-60c4d804c2f5"
        )
        #expect(status.complete == false)
        #expect(status.succeededCount == 3)
    }

    @Test func testNotificationAndItsStatus() async throws {
        let (response, request) = try await exchange(.json(#"{"testNotificationToken": "ce3af791-365e-4c60"}"#)) {
            try await $0.requestTestNotification()
        }
        #expect(request.method == "POST")
        #expect(request.uri == "/inApps/v1/notifications/test")
        #expect(request.body.isEmpty)
        #expect(response.testNotificationToken == "ce3af791-365e-4c60")

        let (status, statusRequest) = try await exchange(
            .json(
                #"{"signedPayload": "p", "sendAttempts": [{"attemptDate": 1698148900000, "sendAttemptResult": "TIMED_OUT"}], "firstSendAttemptResult": "TIMED_OUT"}"#
            )
        ) {
            try await $0.getTestNotificationStatus(testNotificationToken: "ce3af791-365e-4c60")
        }
        #expect(statusRequest.method == "GET")
        #expect(statusRequest.uri == "/inApps/v1/notifications/test/ce3af791-365e-4c60")
        #expect(status.sendAttempts?.first?.sendAttemptResult == .timedOut)
        #expect(status.firstSendAttemptResult == .timedOut)
    }

    @Test func notificationHistoryPage() async throws {
        let history = NotificationHistoryRequest(
            startDate: Date(timeIntervalSince1970: 1_698_000_000),
            endDate: Date(timeIntervalSince1970: 1_698_100_000),
            notificationType: .didRenew,
            onlyFailures: false
        )
        let (page, request) = try await exchange(
            .json(#"{"paginationToken": "tok2", "hasMore": true, "notificationHistory": [{"signedPayload": "n1"}]}"#)
        ) {
            try await $0.getNotificationHistory(paginationToken: "tok1", request: history)
        }
        #expect(request.method == "POST")
        #expect(request.path == "/inApps/v1/notifications/history")
        #expect(request.queryValues("paginationToken") == ["tok1"])
        let body = try #require(request.bodyJSON())
        #expect((body["startDate"] as? NSNumber)?.int64Value == 1_698_000_000_000)
        #expect((body["endDate"] as? NSNumber)?.int64Value == 1_698_100_000_000)
        #expect(body["notificationType"] as? String == "DID_RENEW")
        #expect(body["onlyFailures"] as? Bool == false)
        #expect(page.notificationHistory?.first?.signedPayload == "n1")
        #expect(page.paginationToken == "tok2")

        let (_, first) = try await exchange(.json(#"{"hasMore": false}"#)) {
            try await $0.getNotificationHistory(request: history)
        }
        #expect(first.uri == "/inApps/v1/notifications/history")
    }

    @Test func setAppAccountToken() async throws {
        let (_, request) = try await exchange(.empty(200)) {
            try await $0.setAppAccountToken(
                originalTransactionId: "4242",
                appAccountToken: UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")!
            )
        }
        #expect(request.method == "PUT")
        #expect(request.uri == "/inApps/v1/transactions/4242/appAccountToken")
        #expect(request.bodyJSON()?["appAccountToken"] as? String == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
    }

    @Test func getAppTransactionInfo() async throws {
        let (response, request) = try await exchange(.json(#"{"signedAppTransactionInfo": "jws.app"}"#)) {
            try await $0.getAppTransactionInfo(transactionId: "3030")
        }
        #expect(request.method == "GET")
        #expect(request.uri == "/inApps/v1/transactions/appTransactions/3030")
        #expect(response.signedAppTransactionInfo == "jws.app")
    }

    @Test func finishTransaction() async throws {
        let (_, request) = try await exchange(.empty(200)) {
            try await $0.finishTransaction(transactionId: "5050")
        }
        #expect(request.method == "POST")
        #expect(request.uri == "/inApps/v1/transactions/5050/finish")
        #expect(request.body.isEmpty)
    }

    @Test func pathSegmentsAreEscaped() async throws {
        let (_, request) = try await exchange(.json("{}")) {
            try await $0.lookUpOrderId(orderId: "a/b?c d")
        }
        #expect(request.uri == "/inApps/v1/lookup/a%2Fb%3Fc%20d")
    }

    @Test func baseURLWithAPathPrefix() async throws {
        let identity = TestSigningIdentity()
        let uri = try await withLocalServer(handler: { _ in .json("{}") }) { server, httpClient in
            let client = AppStoreServerAPIClient(
                httpClient: httpClient,
                tokenGenerator: try identity.tokenGenerator(),
                baseURL: AppStoreServerAPIBaseURL(url: server.baseURL.appendingPathComponent("simulator/"))
            )
            _ = try await client.getTransactionInfo(transactionId: "1")
            return server.requests.first?.uri
        }
        #expect(uri == "/simulator/inApps/v1/transactions/1")
    }
}

import Foundation
import Testing

@testable import AppStoreWire

/// Decodes the App Store Server API response and error bodies from Apple's own test vectors.
@Suite("Apple's Server API fixtures", .enabled(if: TestVectors.available, "apple-test-vectors not found"))
struct ServerAPIFixtureTests {
    private func decode<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try AppStoreJSON.makeDecoder().decode(type, from: TestVectors.data("models/\(name)"))
    }

    private func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(ms) / 1000) }

    @Test func transactionInfoResponse() throws {
        let response = try decode(TransactionInfoResponse.self, "transactionInfoResponse.json")
        #expect(response.signedTransactionInfo == "signed_transaction_info_value")
    }

    @Test func appTransactionInfoResponse() throws {
        let response = try decode(AppTransactionInfoResponse.self, "appTransactionInfoResponse.json")
        #expect(response.signedAppTransactionInfo == "signed_app_transaction_info_value")
    }

    @Test func transactionHistoryResponse() throws {
        let response = try decode(HistoryResponse.self, "transactionHistoryResponse.json")
        #expect(response.revision == "revision_output")
        #expect(response.hasMore == true)
        #expect(response.bundleId == "com.example")
        #expect(response.appAppleId == 323_232)
        #expect(response.environment == .localTesting)
        #expect(response.signedTransactions == ["signed_transaction_value", "signed_transaction_value2"])
    }

    @Test func transactionHistoryWithUnknownEnvironmentKeepsIt() throws {
        let response = try decode(HistoryResponse.self, "transactionHistoryResponseWithMalformedEnvironment.json")
        #expect(response.environment?.rawValue == "LocalTestingxxx")
        #expect(response.environment?.isKnown == false)
        #expect(response.appAppleId == 323_232)
    }

    @Test func transactionHistoryWithMalformedAppAppleIdIsRejected() throws {
        #expect(throws: DecodingError.self) {
            try decode(HistoryResponse.self, "transactionHistoryResponseWithMalformedAppAppleId.json")
        }
    }

    @Test func getAllSubscriptionStatusesResponse() throws {
        let response = try decode(StatusResponse.self, "getAllSubscriptionStatusesResponse.json")
        #expect(response.environment == .localTesting)
        #expect(response.bundleId == "com.example")
        #expect(response.appAppleId == 5_454_545)
        let groups = try #require(response.data)
        #expect(groups.map(\.subscriptionGroupIdentifier) == ["sub_group_one", "sub_group_two"])
        let first = try #require(groups[0].lastTransactions)
        #expect(first.count == 2)
        #expect(first[0].status == .active)
        #expect(first[0].originalTransactionId == "3749183")
        #expect(first[0].signedTransactionInfo == "signed_transaction_one")
        #expect(first[0].signedRenewalInfo == "signed_renewal_one")
        #expect(first[1].status == .revoked)
        #expect(first[1].originalTransactionId == "5314314134")
        #expect(first[1].signedTransactionInfo == "signed_transaction_two")
        #expect(first[1].signedRenewalInfo == "signed_renewal_two")
        let second = try #require(groups[1].lastTransactions?.first)
        #expect(second.status == .expired)
        #expect(second.originalTransactionId == "3413453")
        #expect(second.signedTransactionInfo == "signed_transaction_three")
        #expect(second.signedRenewalInfo == "signed_renewal_three")
    }

    @Test func lookupOrderIdResponse() throws {
        let response = try decode(OrderLookupResponse.self, "lookupOrderIdResponse.json")
        #expect(response.status == .invalid)
        #expect(response.signedTransactions == ["signed_transaction_one", "signed_transaction_two"])
    }

    @Test func getRefundHistoryResponse() throws {
        let response = try decode(RefundHistoryResponse.self, "getRefundHistoryResponse.json")
        #expect(response.signedTransactions == ["signed_transaction_one", "signed_transaction_two"])
        #expect(response.revision == "revision_output")
        #expect(response.hasMore == true)
    }

    @Test func extendSubscriptionRenewalDateResponse() throws {
        let response = try decode(ExtendRenewalDateResponse.self, "extendSubscriptionRenewalDateResponse.json")
        #expect(response.originalTransactionId == "2312412")
        #expect(response.webOrderLineItemId == "9993")
        #expect(response.success == true)
        #expect(response.effectiveDate == date(1_698_148_900_000))
    }

    @Test func extendRenewalDateForAllActiveSubscribersResponse() throws {
        let response = try decode(
            MassExtendRenewalDateResponse.self,
            "extendRenewalDateForAllActiveSubscribersResponse.json"
        )
        #expect(response.requestIdentifier == "758883e8-151b-47b7-abd0-60c4d804c2f5")
    }

    @Test func getStatusOfSubscriptionRenewalDateExtensionsResponse() throws {
        let response = try decode(
            MassExtendRenewalDateStatusResponse.self,
            "getStatusOfSubscriptionRenewalDateExtensionsResponse.json"
        )
        #expect(response.requestIdentifier == "20fba8a0-2b80-4a7d-a17f-85c1854727f8")
        #expect(response.complete == true)
        #expect(response.completeDate == date(1_698_148_900_000))
        #expect(response.succeededCount == 30)
        #expect(response.failedCount == 2)
    }

    @Test func requestTestNotificationResponse() throws {
        let response = try decode(SendTestNotificationResponse.self, "requestTestNotificationResponse.json")
        #expect(response.testNotificationToken == "ce3af791-365e-4c60-841b-1674b43c1609")
    }

    @Test func getTestNotificationStatusResponse() throws {
        let response = try decode(CheckTestNotificationResponse.self, "getTestNotificationStatusResponse.json")
        #expect(response.signedPayload == "signed_payload")
        #expect(response.firstSendAttemptResult == nil)
        let attempts = try #require(response.sendAttempts)
        #expect(attempts.count == 2)
        #expect(attempts[0].attemptDate == date(1_698_148_900_000))
        #expect(attempts[0].sendAttemptResult == .noResponse)
        #expect(attempts[1].attemptDate == date(1_698_148_950_000))
        #expect(attempts[1].sendAttemptResult == .success)
    }

    @Test func getNotificationHistoryResponse() throws {
        let response = try decode(NotificationHistoryResponse.self, "getNotificationHistoryResponse.json")
        #expect(response.paginationToken == "57715481-805a-4283-8499-1c19b5d6b20a")
        #expect(response.hasMore == true)
        let items = try #require(response.notificationHistory)
        #expect(items.count == 2)
        #expect(items[0].signedPayload == "signed_payload_one")
        #expect(items[0].sendAttempts?.map(\.sendAttemptResult) == [.noResponse, .success])
        #expect(items[0].sendAttempts?.map(\.attemptDate) == [date(1_698_148_900_000), date(1_698_148_950_000)])
        #expect(items[1].signedPayload == "signed_payload_two")
        #expect(items[1].sendAttempts?.first?.attemptDate == date(1_698_148_800_000))
        #expect(items[1].sendAttempts?.first?.sendAttemptResult == .circularRedirect)
    }

    @Test(
        arguments: [
            ("apiException.json", 5_000_000, "An unknown error occurred.", false),
            ("apiTooManyRequestsException.json", 4_290_000, "Rate limit exceeded.", true),
            ("apiUnknownError.json", 9_990_000, "Testing error.", false),
            ("appTransactionDoesNotExistError.json", 4_040_019, "No AppTransaction exists for the customer.", false),
            (
                "familyTransactionNotSupportedError.json", 4_000_185,
                "Invalid request. Family Sharing transactions aren't supported by this endpoint.", false
            ),
            (
                "invalidAppAccountTokenUUIDError.json", 4_000_183,
                "Invalid request. The app account token field must be a valid UUID.", false
            ),
            ("invalidTransactionIdError.json", 4_000_006, "Invalid transaction id.", false),
            ("transactionIdNotFoundError.json", 4_040_010, "Transaction id not found.", false),
            (
                "transactionIdNotOriginalTransactionId.json", 4_000_187,
                "Invalid request. The transaction ID provided is not an original transaction ID.", false
            ),
        ] as [(String, Int32, String, Bool)]
    )
    func errorBodies(file: String, code: Int32, message: String, retryable: Bool) throws {
        let body = try decode(APIErrorBody.self, file)
        #expect(body.errorCode?.rawValue == code)
        #expect(body.errorMessage == message)
        #expect(body.errorCode?.isRetryable == retryable)
        // Every code but the made-up 9990000 is one we name.
        #expect(body.errorCode?.isKnown == (code != 9_990_000))
    }
}

import Testing

@testable import AppStoreWire

@Suite("verifyReceipt status classification")
struct VerifyReceiptStatusTests {
    @Test(
        arguments: [
            (0, VerifyReceiptDisposition.valid),
            (21000, .invalid),
            (21001, .retryLater),
            (21002, .retryLater),
            (21003, .invalid),
            (21004, .invalid),
            (21005, .retryLater),
            (21006, .valid),
            (21007, .resendToSandbox),
            (21008, .resendToProduction),
            (21009, .retryLater),
            (21010, .invalid),
        ] as [(Int32, VerifyReceiptDisposition)]
    )
    func classifiesEveryDocumentedStatus(status: Int32, expected: VerifyReceiptDisposition) {
        #expect(VerifyReceiptStatus(rawValue: status).disposition() == expected)
        // is-retryable matters only for 21100–21199.
        #expect(VerifyReceiptStatus(rawValue: status).disposition(isRetryable: true) == expected)
        #expect(VerifyReceiptStatus(rawValue: status).isKnown)
    }

    @Test(arguments: [21100, 21150, 21199] as [Int32])
    func internalDataAccessRangeFollowsIsRetryable(status: Int32) {
        let value = VerifyReceiptStatus(rawValue: status)
        #expect(value.isInternalDataAccessRange)
        #expect(value.disposition(isRetryable: true) == .retryLater)
        #expect(value.disposition(isRetryable: false) == .invalid)
        #expect(value.disposition(isRetryable: nil) == .invalid)
    }

    @Test func unknownStatusesAreNoVerdict() {
        #expect(VerifyReceiptStatus(rawValue: 21099).disposition() == .retryLater)
        #expect(VerifyReceiptStatus(rawValue: 21200).disposition() == .retryLater)
        #expect(!VerifyReceiptStatus(rawValue: 21200).isInternalDataAccessRange)
        #expect(!VerifyReceiptStatus(rawValue: 21200).isKnown)
    }
}

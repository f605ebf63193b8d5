import AppStoreWire
import Foundation
import SwiftASN1
import Testing
import X509

/// Conformance with Apple's own signed test data (read in place from ../shared, never copied).
@Suite(.enabled(if: TestVectors.available)) struct AppleTestVectorTests {
    func verifier(
        bundleId: String = "com.example",
        environments: Set<AppStoreEnvironment> = [.sandbox]
    )
        throws -> SignedDataVerifier
    {
        let root = try Certificate(derEncoded: Array(try TestVectors.data("certs/testCA.der")))
        return try SignedDataVerifier(
            configuration: .init(
                bundleId: bundleId,
                appAppleId: 1234,
                environments: environments,
                roots: try TrustedRoots.only([root]),
                deployment: .development
            )
        )
    }

    // MARK: Tests

    @Test func transactionInfoVerifies() async throws {
        let transaction = try await verifier().verifyTransaction(try TestVectors.string("mock_signed_data/transactionInfo"))
        #expect(transaction.bundleId == "com.example")
        #expect(transaction.environment == .sandbox)
        #expect(transaction.signedDate == Date(timeIntervalSince1970: 1_672_956_154))
    }

    @Test func renewalInfoVerifies() async throws {
        let renewal = try await verifier().verifyRenewalInfo(try TestVectors.string("mock_signed_data/renewalInfo"))
        #expect(renewal.environment == .sandbox)
        #expect(renewal.signedDate == Date(timeIntervalSince1970: 1_672_956_154))
    }

    @Test func testNotificationVerifies() async throws {
        let notification = try await verifier().verifyNotification(
            try TestVectors.string("mock_signed_data/testNotification")
        )
        #expect(notification.notificationType == .test)
        #expect(notification.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(notification.data?.appAppleId == 1234)
        #expect(notification.data?.bundleId == "com.example")
    }

    @Test func wrongBundleIdIsRejectedAsWrongApp() async throws {
        do {
            _ = try await verifier().verifyNotification(try TestVectors.string("mock_signed_data/wrongBundleId"))
            Issue.record("wrongBundleId verified")
        } catch let error as SignedDataVerificationError {
            #expect(error.code == "wrong_app")
            #expect(error.message.contains("com.example.wrong"))
        }
    }

    @Test func missingX5CIsRejectedAsMalformed() async throws {
        do {
            _ = try await verifier().verifyNotification(try TestVectors.string("mock_signed_data/missingX5CHeaderClaim"))
            Issue.record("missingX5CHeaderClaim verified")
        } catch let error as SignedDataVerificationError {
            #expect(error.code == "malformed")
            #expect(error.message.contains("x5c"))
        }
    }

    @Test func appleVectorsFailAgainstTheRealAppleRoot() async throws {
        let strict = try SignedDataVerifier(
            configuration: .init(bundleId: "com.example", appAppleId: 1234, environments: [.sandbox], roots: try TrustedRoots.apple())
        )
        do {
            _ = try await strict.verifyTransaction(try TestVectors.string("mock_signed_data/transactionInfo"))
            Issue.record("test CA data verified against Apple's real root")
        } catch let error as SignedDataVerificationError {
            #expect(error.code == "invalid_certificate")
        }
    }

    @Test func xcodeTransactionDecodesButNeedsXcodeEnabled() async throws {
        let jws = try TestVectors.string("xcode/xcode-signed-transaction")
        do {
            _ = try await verifier().verifyTransaction(jws)
            Issue.record("Xcode data accepted without enabling Xcode")
        } catch let error as SignedDataVerificationError {
            #expect(error.code == "wrong_environment")
        }
        let enabled = try verifier(bundleId: "com.example.naturelab.backyardbirds.example", environments: [.xcode])
        let transaction = try await enabled.verifyTransaction(jws)
        #expect(transaction.productId == "pass.premium")
        #expect(transaction.transactionId == "0")
        let (_, unverified) = try SignedDataVerifier.decodeUnverified(jws, as: JWSTransactionDecodedPayload.self)
        #expect(unverified.environment == .xcode)
    }
}

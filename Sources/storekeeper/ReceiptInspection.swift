import AppStoreWire
import Foundation
import X509

/// Turns app receipts and iOS 6 transaction receipts into the JSON that `verify` and `decode` print.
enum ReceiptInspection {
    /// Parses an app receipt; with `verify`, its PKCS#7 signature must chain to `roots` (Apple Inc. Root, built in,
    /// when empty) and, when `bundleId` is given, the receipt must be that app's.
    static func appReceipt(
        _ bytes: [UInt8],
        roots: [Certificate],
        bundleId: String?,
        verify: Bool
    ) async throws
        -> [String: Any]
    {
        let receipt: AppReceipt
        if verify {
            let trusted = roots.isEmpty ? [try AppleRootCertificates.appleIncRoot()] : roots
            do {
                receipt = try await AppReceiptSignatureVerifier(trustedRoots: trusted, bundleId: bundleId).verify(bytes)
            } catch {
                throw ReceiptVerificationFailure(description: "\(error)")
            }
        } else {
            receipt = try AppReceiptParser().parse(bytes)
        }
        return ["verified": verify, "kind": "app-receipt", "payload": try JSONOutput.object(receipt)]
    }

    static func transactionReceipt(_ base64: String, verify: Bool) throws -> [String: Any] {
        guard !verify else {
            throw CommandFailure(
                "iOS 6-style transaction receipts can only be verified by Apple's verifyReceipt; "
                    + "use `storekeeper decode` to read the transaction id"
            )
        }
        let receipt = try TransactionReceipt(base64Encoded: base64)
        return ["verified": false, "kind": "transaction-receipt", "payload": try JSONOutput.object(receipt)]
    }
}

/// An app receipt whose signature did not verify.
struct ReceiptVerificationFailure: Error, CustomStringConvertible {
    let description: String
}

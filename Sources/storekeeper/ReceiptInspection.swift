import AppStoreWire
import Foundation
import X509

/// Turns app receipts and iOS 6 transaction receipts into the JSON that `verify` and `decode` print.
enum ReceiptInspection {
    static func appReceipt(_ bytes: [UInt8], roots: [Certificate], verify: Bool) throws -> [String: Any] {
        throw CommandFailure("app receipts are not supported yet")
    }

    static func transactionReceipt(_ base64: String) throws -> [String: Any] {
        throw CommandFailure("transaction receipts are not supported yet")
    }
}

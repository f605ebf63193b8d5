import AppStoreWire
import Foundation

/// The iPhone each simulated account uses: a stable device id, which also serves as the receipt's opaque value so
/// a receipt leads back to its account.
enum SimulatedDevice {
    static func identifier(of accountId: String) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        for (index, byte) in accountId.utf8.enumerated() { bytes[index % 16] = bytes[index % 16] &* 31 &+ byte }
        return bytes
    }

    /// The builder of this account's app receipt, dated now. Production receipts carry the app's Apple ID
    /// (sandbox ones leave it out, so verifyReceipt answers 0, as Apple's sandbox does).
    static func receiptBuilder(
        for accountId: String,
        store: SimulatedAppStore,
        identity: ReceiptSigningIdentity
    ) async
        -> AppReceiptBuilder
    {
        let catalog = await store.catalog
        return AppReceiptBuilder(
            identity: identity,
            bundleId: catalog.bundleId,
            appVersion: "1",
            deviceIdentifier: identifier(of: accountId),
            receiptType: AppReceiptBuilder.receiptType(for: store.environment),
            creationDate: await store.currentDate,
            opaqueValue: identifier(of: accountId),
            appItemId: store.environment == .production ? catalog.appAppleId : nil,
            originalPurchaseDate: await store.account(accountId)?.originalAppPurchaseDate
        )
    }
}

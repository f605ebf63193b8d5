import AppStoreTestSigning
import AppStoreWire
import Foundation

/// Notifications about the app rather than one purchase (seed of issue 19): a parent withdrawing consent
/// (`RESCIND_CONSENT`, with the install's signed app transaction), external purchase tokens, the Advanced Commerce
/// messages, and types Apple has not invented yet.
extension SimulatedAppStore {
    /// A parent or guardian withdrew consent for `account`, a minor: `RESCIND_CONSENT` with `appData` carrying the
    /// account's signed app transaction. Returns the notification's UUID.
    @discardableResult
    public func rescindConsent(account accountId: String) throws -> String {
        guard let account = accounts[accountId] else { throw SimulatorError.unknownAccount(accountId) }
        let signed = try signer.sign(appTransaction(of: account))
        return try notifyApp(
            .rescindConsent,
            nil,
            appData: AppData(
                appAppleId: environment == .production ? catalog.appAppleId : nil,
                bundleId: catalog.bundleId,
                environment: environment,
                signedAppTransactionInfo: signed
            )
        )
    }

    /// `EXTERNAL_PURCHASE_TOKEN` with `subtype` (`UNREPORTED`, `ACTIVE_TOKEN_REMINDER` or `CREATED`) for a token
    /// `id` (a sandbox token's id starts with `SANDBOX`). Returns the notification's UUID.
    @discardableResult
    public func externalPurchaseToken(_ subtype: Subtype, id: String, createdAt: Date? = nil) throws -> String {
        try notifyApp(
            .externalPurchaseToken,
            subtype,
            externalPurchaseToken: ExternalPurchaseToken(
                externalPurchaseId: id,
                tokenCreationDate: createdAt ?? now,
                appAppleId: catalog.appAppleId,
                bundleId: catalog.bundleId
            )
        )
    }

    /// A notification of any `type` (an Advanced Commerce message, or one Apple has not defined yet) about
    /// `transactionId`'s purchase, or about the app when nil. Returns the notification's UUID.
    @discardableResult
    public func sendNotification(_ type: NotificationTypeV2, subtype: Subtype? = nil, transactionId: String? = nil) throws -> String {
        var transaction: JWSTransactionDecodedPayload?
        if let transactionId {
            guard let found = transactions[transactionId] else { throw SimulatorError.unknownTransaction(transactionId) }
            transaction = found
        }
        try notify(type, subtype, transaction: transaction, renewal: nil, status: nil)
        return notifications.last?.notificationUUID ?? ""
    }

    /// The account's app transaction: its copy of the app, as Get App Transaction Info signs it.
    func appTransaction(of account: SimulatedAccount) -> AppTransaction {
        AppTransaction(
            receiptType: environment,
            appAppleId: catalog.appAppleId,
            bundleId: catalog.bundleId,
            // Apple's sandbox always signs 1.0 here; the simulator has no build number to give in production either.
            applicationVersion: "1.0",
            versionExternalIdentifier: 0,
            receiptCreationDate: now,
            originalPurchaseDate: account.originalAppPurchaseDate,
            originalApplicationVersion: "1.0",
            appTransactionId: account.appTransactionId,
            originalPlatform: .iOS
        )
    }

    private func notifyApp(
        _ type: NotificationTypeV2,
        _ subtype: Subtype?,
        appData: AppData? = nil,
        externalPurchaseToken: ExternalPurchaseToken? = nil
    ) throws -> String {
        let payload = ResponseBodyV2DecodedPayload(
            notificationType: type,
            subtype: subtype,
            notificationUUID: generator.uuid().uuidString.lowercased(),
            version: "2.0",
            signedDate: now,
            externalPurchaseToken: externalPurchaseToken,
            appData: appData
        )
        append(SimulatedNotification(payload: payload, signedPayload: try signer.sign(payload)), transaction: nil)
        return payload.notificationUUID ?? ""
    }
}

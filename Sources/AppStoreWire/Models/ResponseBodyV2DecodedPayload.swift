import Foundation

/// The decoded `signedPayload` of an App Store Server Notification V2.
///
/// Exactly one of ``data``, ``summary``, ``externalPurchaseToken`` and ``appData`` is normally present,
/// depending on ``notificationType``.
public struct ResponseBodyV2DecodedPayload: AppStoreSignedPayload, Codable, Sendable, Hashable {
    // MARK: Envelope

    /// What happened; unknown future types decode with `isKnown == false`. The only required field.
    public var notificationType: NotificationTypeV2
    /// Further detail on ``notificationType``; absent for many types.
    public var subtype: Subtype?
    /// The unique identifier of this notification; resent notifications keep it (use it to deduplicate).
    public var notificationUUID: String?
    /// The notification format version, `"2.0"`.
    public var version: String?
    /// When the App Store signed this payload.
    public var signedDate: Date?

    // MARK: Body (one of)

    /// App, environment and signed transaction/renewal info for in-app purchase events.
    public var data: NotificationData?
    /// Outcome of a mass renewal-date extension (`RENEWAL_EXTENSION` / `SUMMARY`).
    public var summary: NotificationSummary?
    /// An unreported External Purchase token (`EXTERNAL_PURCHASE_TOKEN`).
    public var externalPurchaseToken: ExternalPurchaseToken?
    /// App-level data, with a signed app transaction (`RESCIND_CONSENT`).
    public var appData: AppData?
    /// The seat claims Apple released (`UNCLAIM_SEATS`, beside ``data``; notifications 2.23).
    public var unclaimInfo: UnclaimInfo?

    public init(
        notificationType: NotificationTypeV2,
        subtype: Subtype? = nil,
        notificationUUID: String? = nil,
        version: String? = nil,
        signedDate: Date? = nil,
        data: NotificationData? = nil,
        summary: NotificationSummary? = nil,
        externalPurchaseToken: ExternalPurchaseToken? = nil,
        appData: AppData? = nil,
        unclaimInfo: UnclaimInfo? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.version = version
        self.signedDate = signedDate
        self.data = data
        self.summary = summary
        self.externalPurchaseToken = externalPurchaseToken
        self.appData = appData
        self.unclaimInfo = unclaimInfo
    }

    // MARK: Verification

    /// The chain must have been valid at ``signedDate``.
    public var verificationDate: Date? { signedDate }

    /// Identity fields this payload kind always carries.
    public static let carriedIdentityFields: PayloadIdentity.Fields = [.bundleId, .environment, .appAppleId]

    /// The app and environment named by whichever body is present (``data``, ``summary``, ``appData``,
    /// then ``externalPurchaseToken``); empty if none is.
    ///
    /// An External Purchase token has no environment field: like Apple's libraries, an `externalPurchaseId`
    /// starting with `SANDBOX` means Sandbox, anything else Production.
    public var claimedIdentity: PayloadIdentity {
        if let data {
            return PayloadIdentity(bundleId: data.bundleId, environment: data.environment, appAppleId: data.appAppleId)
        }
        if let summary {
            return PayloadIdentity(
                bundleId: summary.bundleId,
                environment: summary.environment,
                appAppleId: summary.appAppleId
            )
        }
        if let appData {
            return PayloadIdentity(
                bundleId: appData.bundleId,
                environment: appData.environment,
                appAppleId: appData.appAppleId
            )
        }
        if let externalPurchaseToken {
            return PayloadIdentity(
                bundleId: externalPurchaseToken.bundleId,
                environment: externalPurchaseToken.impliedEnvironment,
                appAppleId: externalPurchaseToken.appAppleId
            )
        }
        return PayloadIdentity()
    }
}

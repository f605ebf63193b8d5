/// What an audit entry records. A closed vocabulary of named constants, stored as its raw text; an action this
/// version does not name (written by a newer one) still reads back.
public struct AuditAction: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    // Entitlements
    public static let entitlementGranted = AuditAction(rawValue: "entitlement.granted")
    public static let entitlementExtended = AuditAction(rawValue: "entitlement.extended")
    public static let entitlementReplaced = AuditAction(rawValue: "entitlement.replaced")
    public static let entitlementRevoked = AuditAction(rawValue: "entitlement.revoked")
    public static let entitlementReinstated = AuditAction(rawValue: "entitlement.reinstated")
    public static let entitlementTransferredOut = AuditAction(rawValue: "entitlement.transferred_out")
    public static let entitlementTransferredIn = AuditAction(rawValue: "entitlement.transferred_in")
    // Transactions
    public static let transactionRefunded = AuditAction(rawValue: "transaction.refunded")
    public static let transactionRevoked = AuditAction(rawValue: "transaction.revoked")
    public static let transactionReinstated = AuditAction(rawValue: "transaction.reinstated")
    public static let transactionTransferred = AuditAction(rawValue: "transaction.transferred")
    public static let transactionClaimRefused = AuditAction(rawValue: "transaction.claim_refused")
    public static let transactionAssigned = AuditAction(rawValue: "transaction.assigned")
    /// Apple confirmed that a purchase made without a token now carries its user's (Set App Account Token).
    public static let transactionAccountTokenSet = AuditAction(rawValue: "transaction.account_token_set")
    /// Apple named the app install a purchase that came without one was made from (Get App Transaction Info).
    public static let transactionInstallNamed = AuditAction(rawValue: "transaction.install_named")
    /// Google Play confirmed a delivered purchase acknowledged (or consumed), so it will not refund it unasked.
    public static let transactionAcknowledged = AuditAction(rawValue: "transaction.acknowledged")
    /// Google Play will never take the acknowledgement (the purchase was cancelled or voided meanwhile).
    public static let transactionAcknowledgementRefused = AuditAction(rawValue: "transaction.acknowledgement_refused")
    // Teams (multiseat subscriptions whose developer manages invitations)
    /// The purchaser invited someone to a seat (or an operator added a member).
    public static let teamInvited = AuditAction(rawValue: "team.invited")
    /// Apple confirmed a seat claim: the member shares the purchaser's subscription from now.
    public static let teamSeatClaimed = AuditAction(rawValue: "team.seat_claimed")
    /// Apple associated a member's seat with their app install (Associate Seat).
    public static let teamSeatAssociated = AuditAction(rawValue: "team.seat_associated")
    /// A seat was unclaimed (by the purchaser, the member, an operator, or Apple itself): the member's access ends.
    public static let teamSeatReleased = AuditAction(rawValue: "team.seat_released")
    /// An invitation was withdrawn before anyone took it.
    public static let teamInvitationCancelled = AuditAction(rawValue: "team.invitation_cancelled")
    // Wallet
    public static let walletCredited = AuditAction(rawValue: "wallet.credited")
    public static let walletDebited = AuditAction(rawValue: "wallet.debited")
    public static let walletClawbackForgiven = AuditAction(rawValue: "wallet.clawback_forgiven")
    // Orders
    public static let orderCreated = AuditAction(rawValue: "order.created")
    public static let orderCancelled = AuditAction(rawValue: "order.cancelled")
    public static let orderDelivered = AuditAction(rawValue: "order.delivered")
    public static let orderIgnored = AuditAction(rawValue: "order.ignored")
    // Users, offers, refunds, risk
    public static let userMerged = AuditAction(rawValue: "user.merged")
    public static let guestClaimed = AuditAction(rawValue: "guest.claimed")
    public static let offerSigned = AuditAction(rawValue: "offer.signed")
    public static let refundRequested = AuditAction(rawValue: "refund.requested")
    /// The store left this subscriber out of an extension for all subscribers.
    public static let subscriptionExtensionFailed = AuditAction(rawValue: "subscription.extension_failed")
    /// A parent or guardian withdrew consent for a minor using the app (`RESCIND_CONSENT`).
    public static let consentRescinded = AuditAction(rawValue: "consent.rescinded")
    /// A subscriber about to cancel was shown a retention answer chosen by a rule (Retention Messaging).
    public static let retentionAnswered = AuditAction(rawValue: "retention.answered")
    public static let refundConsumptionAnswered = AuditAction(rawValue: "refund.consumption_answered")
    public static let riskIntroductoryOfferRepeated = AuditAction(rawValue: "risk.introductory_offer_repeated")

    /// A subscription entering `state` (`subscription.active`, `subscription.expired`, ...).
    public static func subscription(_ state: SubscriptionState) -> AuditAction { AuditAction(rawValue: "subscription.\(state.rawValue)") }

    /// Credited or debited, by the sign of `amount`.
    public static func wallet(_ amount: Int64) -> AuditAction { amount >= 0 ? .walletCredited : .walletDebited }
}

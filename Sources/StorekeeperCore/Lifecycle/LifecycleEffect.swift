/// What one of Apple's lifecycle messages does to Storekeeper's records: the pure decision, applied by the
/// notification processor inside one database transaction.
public struct LifecycleEffect: Sendable, Hashable {
    /// How a transaction is taken back.
    public enum Revocation: String, Sendable, Hashable {
        /// Apple refunded it (`REFUND`, V1 `REFUND`/`CANCEL`).
        case refund
        /// Family Sharing access was withdrawn (`REVOKE`).
        case revoke
    }

    /// Deliver the message's transaction if Storekeeper has not yet (unseen transactions get a record, or are
    /// parked when nobody can be attributed).
    public var deliver: Bool
    /// Take back what the transaction delivered, from its revocation date.
    public var revoke: Revocation?
    /// Restore what a refund took back (`REFUND_REVERSED`).
    public var reinstate: Bool
    /// Extend the transaction's grant to Apple's (later) expiry date (`RENEWAL_EXTENDED`).
    public var extendToExpiry: Bool
    /// Keep service to the grace period's end (`DID_FAIL_TO_RENEW` / `GRACE_PERIOD`).
    public var extendToGracePeriodEnd: Bool
    /// Queue an answer for Apple's refund question (`CONSUMPTION_REQUEST`).
    public var answerConsumptionRequest: Bool
    /// Close an open consumption request (Apple decided: `REFUND`, `REFUND_DECLINED`).
    public var closeConsumptionRequest: Bool
    /// Update the subscription's state from the message (auto-renewables).
    public var updatesSubscription: Bool
    /// A state the message implies beyond Apple's `status` field.
    public var impliedState: SubscriptionState?
    /// Release the seat claims Apple already unclaimed (`UNCLAIM_SEATS`): their members' access ends.
    public var releaseSeats: Bool
    /// Why nothing more happens, for messages that are recorded only.
    public var recordOnly: String?

    public init(
        deliver: Bool = false,
        revoke: Revocation? = nil,
        reinstate: Bool = false,
        extendToExpiry: Bool = false,
        extendToGracePeriodEnd: Bool = false,
        answerConsumptionRequest: Bool = false,
        closeConsumptionRequest: Bool = false,
        updatesSubscription: Bool = false,
        impliedState: SubscriptionState? = nil,
        releaseSeats: Bool = false,
        recordOnly: String? = nil
    ) {
        self.deliver = deliver
        self.revoke = revoke
        self.reinstate = reinstate
        self.extendToExpiry = extendToExpiry
        self.extendToGracePeriodEnd = extendToGracePeriodEnd
        self.answerConsumptionRequest = answerConsumptionRequest
        self.closeConsumptionRequest = closeConsumptionRequest
        self.updatesSubscription = updatesSubscription
        self.impliedState = impliedState
        self.releaseSeats = releaseSeats
        self.recordOnly = recordOnly
    }
}

/// Apple's notification types (V2, reference §3; V1, reference §2) mapped to their effects. Every type and
/// subtype Apple documents has an entry; an unknown type is recorded only, never guessed at.
public enum LifecycleRules {
    /// The effect of a V2 notification `type` with `subtype`.
    public static func effect(v2 type: String, subtype: String?) -> LifecycleEffect {
        switch type {
        case "SUBSCRIBED":
            // INITIAL_BUY, RESUBSCRIBE: a new period starts.
            return LifecycleEffect(deliver: true, updatesSubscription: true, impliedState: .active)
        case "DID_RENEW":
            // Plain renewal or BILLING_RECOVERY: the new period is delivered; recovery within grace starts it at
            // the missed renewal date, so service stays continuous.
            return LifecycleEffect(deliver: true, updatesSubscription: true, impliedState: .active)
        case "DID_CHANGE_RENEWAL_PREF":
            // UPGRADE (and same-duration crossgrades) start a new transaction now; DOWNGRADE (and
            // different-duration crossgrades) only change the next renewal's product; none cancels a downgrade.
            return LifecycleEffect(deliver: subtype == "UPGRADE", updatesSubscription: true)
        case "DID_CHANGE_RENEWAL_STATUS":
            return LifecycleEffect(updatesSubscription: true)
        case "OFFER_REDEEMED":
            // On an active subscription: UPGRADE starts a new transaction now; otherwise the offer applies from
            // the next renewal.
            return LifecycleEffect(deliver: subtype == "UPGRADE", updatesSubscription: true)
        case "DID_FAIL_TO_RENEW":
            return subtype == "GRACE_PERIOD"
                ? LifecycleEffect(extendToGracePeriodEnd: true, updatesSubscription: true, impliedState: .gracePeriod)
                : LifecycleEffect(updatesSubscription: true, impliedState: .billingRetry)
        case "GRACE_PERIOD_EXPIRED":
            return LifecycleEffect(updatesSubscription: true, impliedState: .billingRetry)
        case "EXPIRED":
            // VOLUNTARY, BILLING_RETRY, PRICE_INCREASE, PRODUCT_NOT_FOR_SALE: the reason is kept with the state.
            return LifecycleEffect(updatesSubscription: true, impliedState: .expired)
        case "PRICE_INCREASE":
            // PENDING (consent asked) or ACCEPTED: kept on the subscription; no entitlement changes.
            return LifecycleEffect(updatesSubscription: true)
        case "REFUND" where subtype == "SEATS":
            // Some seats of a multiseat subscription were refunded (`revokedSeatQuantity` on the purchaser's
            // transaction): the subscription stays for the seats left, so nothing is taken from the purchaser.
            return LifecycleEffect(deliver: true, closeConsumptionRequest: true, updatesSubscription: true)
        case "REFUND":
            return LifecycleEffect(
                deliver: true,
                revoke: .refund,
                closeConsumptionRequest: true,
                updatesSubscription: true
            )
        case "REFUND_DECLINED":
            return LifecycleEffect(closeConsumptionRequest: true, recordOnly: "Apple declined the refund request")
        case "REFUND_REVERSED":
            return LifecycleEffect(deliver: true, reinstate: true, updatesSubscription: true)
        case "REVOKE":
            return LifecycleEffect(deliver: true, revoke: .revoke, updatesSubscription: true)
        case "CONSUMPTION_REQUEST":
            return LifecycleEffect(deliver: true, answerConsumptionRequest: true)
        case "RENEWAL_EXTENDED":
            return LifecycleEffect(deliver: true, extendToExpiry: true, updatesSubscription: true)
        case "RENEWAL_EXTENSION":
            return subtype == "FAILURE"
                ? LifecycleEffect(recordOnly: "Apple could not extend this subscription's renewal date")
                : LifecycleEffect(recordOnly: "summary of a renewal date extension for all subscribers")
        case "ONE_TIME_CHARGE":
            return LifecycleEffect(deliver: true)
        case "UNCLAIM_SEATS":
            // Apple already released the seats `unclaimInfo` names: their members lose access; the purchaser keeps
            // theirs.
            return LifecycleEffect(releaseSeats: true)
        case "PRICE_CHANGE", "METADATA_UPDATE", "MIGRATION", "MIGRATE":
            return LifecycleEffect(recordOnly: "Advanced Commerce API message; Storekeeper sells through StoreKit")
        case "RESCIND_CONSENT":
            return LifecycleEffect(recordOnly: "a parent or guardian withdrew consent; the app must act on it")
        case "EXTERNAL_PURCHASE_TOKEN":
            return LifecycleEffect(recordOnly: "external purchase token; reported outside the App Store")
        case "TEST":
            return LifecycleEffect(recordOnly: "test notification")
        default:
            return LifecycleEffect(recordOnly: "unknown notification type \(type)")
        }
    }

    /// The effect of a V1 notification type. V1 bodies carry the whole unified receipt, so every V1 message also
    /// reconciles its transactions: undelivered ones are delivered and cancelled ones taken back from their
    /// cancellation date (that is how all three `CANCEL` variants of seed 001 come out right: an upgrade or
    /// crossgrade cancels the old transaction at the switch, a refund at the refund).
    public static func effect(v1 type: String) -> LifecycleEffect {
        switch type {
        case "INITIAL_BUY", "DID_RENEW", "INTERACTIVE_RENEWAL", "DID_RECOVER", "RENEWAL":
            return LifecycleEffect(deliver: true, updatesSubscription: true, impliedState: .active)
        case "CANCEL", "REFUND":
            return LifecycleEffect(deliver: true, revoke: .refund, closeConsumptionRequest: true, updatesSubscription: true)
        case "REVOKE":
            return LifecycleEffect(deliver: true, revoke: .revoke, updatesSubscription: true)
        case "DID_CHANGE_RENEWAL_STATUS", "DID_CHANGE_RENEWAL_PREF", "PRICE_INCREASE_CONSENT":
            return LifecycleEffect(deliver: true, updatesSubscription: true)
        case "DID_FAIL_TO_RENEW":
            return LifecycleEffect(deliver: true, updatesSubscription: true)
        case "CONSUMPTION_REQUEST":
            return LifecycleEffect(deliver: true, answerConsumptionRequest: true)
        default:
            return LifecycleEffect(recordOnly: "unknown V1 notification type \(type)")
        }
    }
}

import AppStoreWire
import Foundation

/// What a device passes along with a purchase, as StoreKit's purchase options do.
public struct PurchaseOptions: Sendable, Hashable {
    /// `appAccountToken`: the developer's UUID for the buyer, copied into every transaction of the purchase.
    public var appAccountToken: UUID?
    /// An offer to redeem with the purchase (already checked by ``OfferSignatureChecker`` where it needs a signature).
    public var offer: OfferRedemption?
    /// Consumables: how many (1–10); a multiseat subscription: how many seats (1 up to its plan's maximum).
    public var quantity: Int
    /// The developer's signed introductory-offer eligibility decision, overriding Apple's once-per-group rule.
    public var introductoryOfferEligible: Bool?
    /// `MONTHLY`: a yearly subscription paid monthly with a 12-month commitment (the product must offer it);
    /// nil or `BILLED_UPFRONT`: the whole period up front.
    public var billingPlan: BillingPlanType?

    public init(
        appAccountToken: UUID? = nil,
        offer: OfferRedemption? = nil,
        quantity: Int = 1,
        introductoryOfferEligible: Bool? = nil,
        billingPlan: BillingPlanType? = nil
    ) {
        self.appAccountToken = appAccountToken
        self.offer = offer
        self.quantity = quantity
        self.introductoryOfferEligible = introductoryOfferEligible
        self.billingPlan = billingPlan
    }
}

/// A subscription offer a customer redeems.
public enum OfferRedemption: Sendable, Hashable {
    /// A promotional offer (signed by the developer): for current and lapsed subscribers.
    case promotional(id: String)
    /// A win-back offer: for lapsed subscribers only.
    case winBack(id: String)
    /// An offer code (its reference name).
    case offerCode(referenceName: String)
}

import Foundation

/// What Storekeeper already knows that makes a customer worth a look (seed 001's offer abuse, seed 003's refund
/// abuse), computed from its own records: introductory offers taken again under other Apple IDs, one app install
/// shared by several app users, purchases replayed from other accounts, refunds and their amount, coins refunded
/// after they were spent, guest devices merged into the account.
public struct RiskSignals: Sendable, Hashable {
    public var user: String
    /// Introductory offers taken again in a subscription group the user already had one in (another Apple ID).
    public var introductoryOfferRepeats = 0
    /// Other app users whose purchases carry one of this user's `appTransactionId`s (the same app install).
    public var sharedInstallUsers = 0
    /// Purchases this user submitted that belong to another account (`owned_by_another_user`).
    public var replaysRefused = 0
    /// Paid purchases delivered, and how many of them Apple refunded.
    public var paidPurchases = 0
    public var refunds = 0
    /// Refunded customer price per currency, milliunits.
    public var refundedAmount: [String: Int64] = [:]
    /// Coins refunds could not take back because they were spent: forgiven (the floor policy) or owed (a negative
    /// balance, the debt policy).
    public var coinsForgiven: Int64 = 0
    public var debt: Int64 = 0
    /// Guest users merged into this account.
    public var mergedGuests = 0

    public init(user: String) { self.user = user }

    /// Refunds per paid purchase, in permille (0 without purchases).
    public var refundRatePermille: Int { paidPurchases == 0 ? 0 : min(1_000, refunds * 1_000 / paidPurchases) }

    /// The signals over `policy`'s thresholds, by name.
    public func flags(_ policy: RiskPolicy) -> [String] {
        var flags: [String] = []
        if introductoryOfferRepeats > 0 { flags.append("introductory_offer_repeated") }
        if sharedInstallUsers > 0 { flags.append("install_shared") }
        if replaysRefused > 0 { flags.append("replayed_purchases") }
        if refunds >= policy.refundsToReview && refundRatePermille >= policy.refundRatePermille { flags.append("refunds") }
        if coinsForgiven > 0 || debt > 0 { flags.append("refunded_after_spending") }
        if mergedGuests >= policy.mergedGuestsToReview { flags.append("many_guests_merged") }
        return flags
    }
}

/// The thresholds that put a customer on the review list, and the refund policy they drive (`risk.*`).
public struct RiskPolicy: Sendable, Hashable {
    /// Refunds (at or above ``refundRatePermille`` of paid purchases) that put a customer up for review.
    public var refundsToReview: Int
    public var refundRatePermille: Int
    public var mergedGuestsToReview: Int
    /// From this many refunds on, Storekeeper answers Apple's refund questions with `DECLINE`; nil: never.
    public var declineRefundsFrom: Int?

    public init(refundsToReview: Int = 3, refundRatePermille: Int = 300, mergedGuestsToReview: Int = 3, declineRefundsFrom: Int? = nil) {
        self.refundsToReview = refundsToReview
        self.refundRatePermille = refundRatePermille
        self.mergedGuestsToReview = mergedGuestsToReview
        self.declineRefundsFrom = declineRefundsFrom
    }

    /// Why a refund question about `signals`' customer is answered `DECLINE`, or nil when the policy does not say so.
    public func declineReason(_ signals: RiskSignals) -> String? {
        guard let threshold = declineRefundsFrom, signals.refunds >= threshold else { return nil }
        return "the customer has \(signals.refunds) refund(s); risk.declineRefundsFrom is \(threshold)"
    }

    /// The signal names ``RiskSignals/flags(_:)`` may return.
    public static let signals = [
        "introductory_offer_repeated", "install_shared", "replayed_purchases", "refunds", "refunded_after_spending", "many_guests_merged",
    ]
}

import Foundation

/// A subscription paid monthly under a 12-month commitment (App Store Server API 1.21, `billingPlanType` MONTHLY):
/// which payment the current period is, how many the commitment has, and when it ends. Turning auto-renew off
/// stops the renewal *after* the commitment, not the payments left in it: the subscription is paid through
/// ``endsAt`` whatever the customer chose.
public struct SubscriptionCommitment: Sendable, Hashable {
    /// Apple's numbers are bounded before they get here: nothing past ten years of monthly payments.
    public static let maximumPeriods = 120

    /// The payment the latest transaction made (1-based).
    public var paymentsMade: Int
    public var paymentsTotal: Int
    public var endsAt: Date?
    /// The commitment's total price, in milliunits of the transaction's currency.
    public var price: Int64?
    /// Whether the subscription starts another commitment when this one ends (the renewal info's
    /// `commitmentAutoRenewStatus`); nil until Apple said.
    public var renewsAfterCommitment: Bool?

    public init(paymentsMade: Int, paymentsTotal: Int, endsAt: Date?, price: Int64?, renewsAfterCommitment: Bool? = nil) {
        self.paymentsMade = paymentsMade
        self.paymentsTotal = paymentsTotal
        self.endsAt = endsAt
        self.price = price
        self.renewsAfterCommitment = renewsAfterCommitment
    }

    /// A commitment from Apple's fields, or nil when they are missing or out of range (never trusted blindly).
    public init?(billingPeriodNumber: Int32?, totalBillingPeriods: Int32?, expires: Date?, price: Int64?) {
        guard let made = billingPeriodNumber.map(Int.init), let total = totalBillingPeriods.map(Int.init),
            (1...Self.maximumPeriods).contains(total), (1...total).contains(made)
        else { return nil }
        self.init(paymentsMade: made, paymentsTotal: total, endsAt: expires, price: price.flatMap { $0 >= 0 ? $0 : nil })
    }

    /// Payments still due before the commitment ends.
    public var paymentsLeft: Int { max(0, paymentsTotal - paymentsMade) }
}

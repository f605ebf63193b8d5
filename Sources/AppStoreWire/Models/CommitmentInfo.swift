import Foundation

/// A transaction's `commitmentInfo`: its place in a monthly plan with a 12-month commitment (API 1.21).
public struct CommitmentInfo: Codable, Sendable, Hashable {
    /// Which billing period of the commitment this transaction pays for (1-based, up to ``totalBillingPeriods``).
    public var billingPeriodNumber: Int32?
    /// How many billing periods the commitment has (12 for a 12-month commitment).
    public var totalBillingPeriods: Int32?
    /// When the commitment ends.
    public var commitmentExpiresDate: Date?
    /// The total price of the commitment, in milliunits of the transaction's currency.
    public var commitmentPrice: Int64?

    public init(
        billingPeriodNumber: Int32? = nil,
        totalBillingPeriods: Int32? = nil,
        commitmentExpiresDate: Date? = nil,
        commitmentPrice: Int64? = nil
    ) {
        self.billingPeriodNumber = billingPeriodNumber
        self.totalBillingPeriods = totalBillingPeriods
        self.commitmentExpiresDate = commitmentExpiresDate
        self.commitmentPrice = commitmentPrice
    }
}

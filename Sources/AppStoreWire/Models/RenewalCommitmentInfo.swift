import Foundation

/// Renewal info's `commitmentInfo`: what happens when a 12-month commitment ends (API 1.21).
public struct RenewalCommitmentInfo: Codable, Sendable, Hashable {
    /// The product that renews when the commitment ends.
    public var commitmentAutoRenewProductId: String?
    /// Whether the subscription renews when the commitment ends.
    public var commitmentAutoRenewStatus: AutoRenewStatus?
    /// How the renewal after the commitment is billed.
    public var commitmentRenewalBillingPlanType: BillingPlanType?
    /// When the commitment renews.
    public var commitmentRenewalDate: Date?
    /// The price of the renewal after the commitment, in milliunits.
    public var commitmentRenewalPrice: Int64?

    public init(
        commitmentAutoRenewProductId: String? = nil,
        commitmentAutoRenewStatus: AutoRenewStatus? = nil,
        commitmentRenewalBillingPlanType: BillingPlanType? = nil,
        commitmentRenewalDate: Date? = nil,
        commitmentRenewalPrice: Int64? = nil
    ) {
        self.commitmentAutoRenewProductId = commitmentAutoRenewProductId
        self.commitmentAutoRenewStatus = commitmentAutoRenewStatus
        self.commitmentRenewalBillingPlanType = commitmentRenewalBillingPlanType
        self.commitmentRenewalDate = commitmentRenewalDate
        self.commitmentRenewalPrice = commitmentRenewalPrice
    }
}

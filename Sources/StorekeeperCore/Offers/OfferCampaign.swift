import Crypto
import Foundation

/// A campaign granting subscription offers to users, split deterministically into variants (A/B, seed 000).
///
/// A user's variant is a pure function of the campaign id and the user id, so every server process, every
/// request and every restart puts the user in the same variant.
public struct OfferCampaign: Sendable, Hashable, Codable {
    public struct Variant: Sendable, Hashable, Codable {
        public var name: String
        /// The offer this variant may redeem; `nil` is the control group (no offer).
        public var offerId: String?
        public var weight: Int

        public init(name: String, offerId: String?, weight: Int) {
            self.name = name
            self.offerId = offerId
            self.weight = weight
        }
    }

    public var id: String
    /// The products the offers apply to.
    public var productIds: [String]
    public var variants: [Variant]
    /// Whether the campaign is running.
    public var active: Bool

    public init(id: String, productIds: [String], variants: [Variant], active: Bool = true) {
        self.id = id
        self.productIds = productIds
        self.variants = variants
        self.active = active
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        productIds = try c.decode([String].self, forKey: .productIds)
        variants = try c.decode([Variant].self, forKey: .variants)
        active = try c.decodeIfPresent(Bool.self, forKey: .active) ?? true
    }

    /// The largest weight a variant may have (the console's bound too), so the sum of any campaign's weights fits.
    public static let maximumWeight = 1_000_000
    /// The most variants a campaign may split into.
    public static let maximumVariants = 1_000

    var problem: String? {
        if id.isEmpty { return "campaign id is empty" }
        if variants.isEmpty { return "campaign \(id) has no variants" }
        if variants.count > Self.maximumVariants { return "campaign \(id) has more than \(Self.maximumVariants) variants" }
        // Bounded before summing: weights from an admin request once summed past Int.max and trapped the server.
        if variants.contains(where: { !(0...Self.maximumWeight).contains($0.weight) }) || variants.reduce(0, { $0 + $1.weight }) <= 0 {
            return "campaign \(id) needs weights from 0 to \(Self.maximumWeight) with a positive sum"
        }
        return nil
    }

    /// The variant `userId` falls in: SHA-256 of "campaign:user" picks a point in the summed weights.
    public func variant(for userId: String) -> Variant {
        let digest = SHA256.hash(data: Data("\(id):\(userId)".utf8))
        let point = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let total = UInt64(variants.reduce(0) { $0 + $1.weight })
        var target = point % total
        for variant in variants {
            let weight = UInt64(variant.weight)
            if target < weight { return variant }
            target -= weight
        }
        return variants[variants.count - 1]
    }
}

extension Catalog {
    /// The campaign that grants `userId` the offer `offerId` on `productId`, if any.
    public func campaignGranting(offerId: String, productId: String, to userId: String) -> OfferCampaign? {
        campaigns.first { campaign in
            campaign.active && campaign.productIds.contains(productId)
                && campaign.variant(for: userId).offerId == offerId
        }
    }
}

import Foundation
import StorekeeperCore
import Testing

/// Retention rules: the first match by product, locale and history wins; a rule must name exactly one answer.
@Suite("Retention rules")
struct RetentionRuleTests {
    static let monthly = "com.example.monthly"
    static let catalog = """
        {"products": [
          {"id": "com.example.monthly", "kind": "autoRenewable", "entitlement": "m", "subscriptionGroup": "g", "level": 2},
          {"id": "com.example.yearly", "kind": "autoRenewable", "entitlement": "m", "subscriptionGroup": "g", "level": 1}],
         "retention": [
          {"id": "offer", "productIds": ["com.example.monthly"], "when": {"minimumPaidPeriods": 2, "maximumRefunds": 0, "offerNotRedeemedBefore": true},
           "promotionalOffer": {"messageId": "7a1e0c52-0f7b-4d3e-9a57-2f1c1b9e0a01", "offerId": "stay"}},
          {"id": "switch", "locales": ["en"], "alternateProduct": {"messageId": "7a1e0c52-0f7b-4d3e-9a57-2f1c1b9e0a02", "productId": "com.example.yearly"}},
          {"id": "de", "locales": ["de-DE"], "message": {"messageId": "7a1e0c52-0f7b-4d3e-9a57-2f1c1b9e0a03"}}]}
        """

    static func history(paid: Int, refunds: Int = 0, redeemed: Set<String> = []) -> RetentionHistory {
        RetentionHistory(user: UserID(rawValue: "u"), paidPeriods: paid, refunds: refunds, redeemedOffers: redeemed)
    }

    @Test func firstMatchWins() throws {
        let catalog = try JSONDecoder().decode(Catalog.self, from: Data(Self.catalog.utf8))
        try catalog.validate()
        let rules = catalog.retention
        func chosen(_ locale: String, _ history: RetentionHistory) -> String? {
            RetentionRule.choose(rules, productId: Self.monthly, locale: locale, history: history)?.id
        }
        #expect(chosen("en-US", Self.history(paid: 3)) == "offer")
        #expect(chosen("en-US", Self.history(paid: 1)) == "switch", "too new for the offer")
        #expect(chosen("en-GB", Self.history(paid: 3, refunds: 1)) == "switch", "refunded before: no offer")
        #expect(chosen("en-US", Self.history(paid: 3, redeemed: ["stay"])) == "switch", "already had the offer")
        #expect(chosen("de-DE", Self.history(paid: 1)) == "de")
        #expect(chosen("de-AT", Self.history(paid: 1)) == nil, "an exact locale matches only itself")
        #expect(chosen("fr-FR", Self.history(paid: 1)) == nil)
    }

    @Test func invalidRulesAreRefused() throws {
        let two = """
            {"retention": [{"id": "x", "message": {"messageId": "7a1e0c52-0f7b-4d3e-9a57-2f1c1b9e0a01"},
              "promotionalOffer": {"messageId": "7a1e0c52-0f7b-4d3e-9a57-2f1c1b9e0a01", "offerId": "o"}}]}
            """
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Catalog.self, from: Data(two.utf8)) }
        let badMessage = #"{"retention": [{"id": "x", "message": {"messageId": "not-a-uuid"}}]}"#
        #expect(throws: CatalogError.self) { try JSONDecoder().decode(Catalog.self, from: Data(badMessage.utf8)).validate() }
        let unknownProduct =
            #"{"retention": [{"id": "x", "productIds": ["nope"], "message": {"messageId": "7a1e0c52-0f7b-4d3e-9a57-2f1c1b9e0a01"}}]}"#
        #expect(throws: CatalogError.self) { try JSONDecoder().decode(Catalog.self, from: Data(unknownProduct.utf8)).validate() }
    }
}

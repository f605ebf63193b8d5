/// The sample catalogs (`Samples/storekeeper-catalog.json`, `Samples/simulator-catalog.json`) built into the
/// executable, so `storekeeper demo` runs from any directory. `storekeeper sample` writes them out, and a test
/// checks they equal the files in `Samples/`.
enum SampleCatalogs {
    static let storekeeper = #"""
        {
          "products": [
            { "id": "com.example.storekeeper.coins.60", "kind": "consumable", "coins": 60 },
            { "id": "com.example.storekeeper.coins.300", "kind": "consumable", "coins": 300 },
            { "id": "com.example.storekeeper.chapter.2", "kind": "nonConsumable", "entitlement": "chapter.2" },
            { "id": "com.example.storekeeper.pass.month", "kind": "nonRenewing", "entitlement": "pass", "duration": "P1M" },
            {
              "id": "com.example.storekeeper.membership.monthly", "kind": "autoRenewable", "entitlement": "membership",
              "subscriptionGroup": "21000001", "level": 2, "hasIntroductoryOffer": true,
              "introductoryOfferFreeVariant": "com.example.storekeeper.membership.monthly.standard"
            },
            {
              "id": "com.example.storekeeper.membership.monthly.standard", "kind": "autoRenewable", "entitlement": "membership",
              "subscriptionGroup": "21000001", "level": 2
            },
            {
              "id": "com.example.storekeeper.membership.yearly", "kind": "autoRenewable", "entitlement": "membership",
              "subscriptionGroup": "21000001", "level": 1
            },
            {
              "id": "com.example.storekeeper.vipA", "kind": "autoRenewable", "entitlement": "vip",
              "subscriptionGroup": "21000002", "level": 1
            },
            {
              "id": "com.example.storekeeper.vipB", "kind": "autoRenewable", "entitlement": "vip",
              "subscriptionGroup": "21000002", "level": 1
            },
            {
              "id": "com.example.storekeeper.teams.monthly", "kind": "autoRenewable", "entitlement": "teams",
              "subscriptionGroup": "21000003", "level": 1
            },
            { "id": "coins_100", "store": "googlePlay", "kind": "consumable", "coins": 100 },
            { "id": "lifetime_pro", "store": "googlePlay", "kind": "nonConsumable", "entitlement": "chapter.2" },
            { "id": "vip_monthly", "store": "googlePlay", "kind": "autoRenewable", "entitlement": "membership", "subscriptionGroup": "play.vip", "level": 2 },
            { "id": "vip_yearly", "store": "googlePlay", "kind": "autoRenewable", "entitlement": "membership", "subscriptionGroup": "play.vip", "level": 1 },
            { "id": "vip_pass", "store": "googlePlay", "kind": "autoRenewable", "entitlement": "membership", "subscriptionGroup": "play.pass" }
          ],
          "campaigns": [
            {
              "id": "winback-2026", "productIds": ["com.example.storekeeper.membership.monthly", "com.example.storekeeper.membership.monthly.standard"],
              "variants": [
                { "name": "offer", "offerId": "winback-50", "weight": 50 },
                { "name": "control", "offerId": null, "weight": 50 }
              ]
            }
          ],
          "retention": [
            {
              "id": "loyal-offer", "productIds": ["com.example.storekeeper.membership.monthly"],
              "when": { "minimumPaidPeriods": 2, "maximumRefunds": 0, "offerNotRedeemedBefore": true },
              "promotionalOffer": { "messageId": "7a1e0c52-0f7b-4d3e-9a57-2f1c1b9e0a01", "offerId": "winback-50" }
            },
            {
              "id": "pay-yearly-monthly", "productIds": ["com.example.storekeeper.membership.monthly"], "locales": ["en"],
              "alternateProduct": {
                "messageId": "7a1e0c52-0f7b-4d3e-9a57-2f1c1b9e0a02", "productId": "com.example.storekeeper.membership.yearly",
                "billingPlan": "MONTHLY"
              }
            },
            {
              "id": "what-you-keep-de", "locales": ["de"],
              "message": { "messageId": "7a1e0c52-0f7b-4d3e-9a57-2f1c1b9e0a03" }
            }
          ]
        }
        """#

    static let simulator = #"""
        {
          "bundleId": "com.example.storekeeper",
          "appAppleId": 1234567890,
          "storefronts": [
            { "code": "USA", "id": "143441", "currency": "USD" },
            { "code": "CHN", "id": "143465", "currency": "CNY", "taxPermille": 60 }
          ],
          "subscriptionGroups": [
            { "id": "21000001", "name": "Membership", "gracePeriodDays": 16 },
            { "id": "21000002", "name": "VIP", "gracePeriodDays": null },
            { "id": "21000003", "name": "Teams", "gracePeriodDays": null }
          ],
          "products": [
            { "id": "com.example.storekeeper.coins.60", "kind": "consumable", "price": 990 },
            { "id": "com.example.storekeeper.coins.300", "kind": "consumable", "price": 4990 },
            { "id": "com.example.storekeeper.chapter.2", "kind": "nonConsumable", "price": 2990 },
            { "id": "com.example.storekeeper.pass.month", "kind": "nonRenewing", "price": 1990, "period": "P1M" },
            {
              "id": "com.example.storekeeper.membership.monthly", "kind": "autoRenewable", "price": 9990,
              "groupId": "21000001", "level": 2, "period": "P1M",
              "introductoryOffer": { "id": "trial-1w", "discountType": "FREE_TRIAL", "period": "P1W", "price": 0 },
              "promotionalOffers": [
                { "id": "winback-50", "discountType": "PAY_AS_YOU_GO", "period": "P1M", "periodCount": 3, "price": 4990 }
              ],
              "offerCodes": [
                { "id": "FRIENDS", "discountType": "FREE_TRIAL", "period": "P1M", "price": 0 }
              ]
            },
            {
              "id": "com.example.storekeeper.membership.monthly.standard", "kind": "autoRenewable", "price": 9990,
              "groupId": "21000001", "level": 2, "period": "P1M",
              "promotionalOffers": [
                { "id": "winback-50", "discountType": "PAY_AS_YOU_GO", "period": "P1M", "periodCount": 3, "price": 4990 }
              ]
            },
            {
              "id": "com.example.storekeeper.membership.yearly", "kind": "autoRenewable", "price": 99990,
              "groupId": "21000001", "level": 1, "period": "P1Y", "monthlyCommitmentPrice": 8990
            },
            {
              "id": "com.example.storekeeper.vipA", "kind": "autoRenewable", "price": 2990,
              "groupId": "21000002", "level": 1, "period": "P1M"
            },
            {
              "id": "com.example.storekeeper.vipB", "kind": "autoRenewable", "price": 2990,
              "groupId": "21000002", "level": 1, "period": "P1M"
            },
            {
              "id": "com.example.storekeeper.teams.monthly", "kind": "autoRenewable", "price": 9990,
              "groupId": "21000003", "level": 1, "period": "P1M",
              "multiSeat": { "invitationManagement": "DEVELOPER", "tiers": [{ "fromSeat": 1, "price": 9990 }, { "fromSeat": 6, "price": 7140 }] }
            }
          ]
        }
        """#
}

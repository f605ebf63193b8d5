import Foundation
import GooglePlayWire
import Testing

/// Google's resources as the reference (google-play-protocol.md §3–§7) writes them: int64 as strings, RFC 3339
/// timestamps, presence-only messages, and values Google adds later kept rather than refused.
@Suite struct PlayModelTests {
    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try PlayJSON.decode(type, from: Array(json.utf8))
    }

    @Test func aSubscriptionWithEveryPartItCanHave() throws {
        let json = """
            {"kind":"androidpublisher#subscriptionPurchaseV2","regionCode":"DE","startTime":"2026-10-01T12:34:56.789Z",
             "subscriptionState":"SUBSCRIPTION_STATE_IN_GRACE_PERIOD","linkedPurchaseToken":"old-token",
             "acknowledgementState":"ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED",
             "externalAccountIdentifiers":{"obfuscatedExternalAccountId":"acct-7"},"testPurchase":{},
             "inGracePeriodStateContext":{"renewalDeclined":{"pendingOrderId":"GPA.1234-5678-9012-34567..3"}},
             "etag":"e1","lineItems":[{"productId":"vip_monthly","expiryTime":"2026-11-01T12:34:56Z",
               "latestSuccessfulOrderId":"GPA.1234-5678-9012-34567..2",
               "autoRenewingPlan":{"autoRenewEnabled":true,"recurringPrice":{"currencyCode":"EUR","units":"9","nanos":990000000},
                 "priceChangeDetails":{"newPrice":{"currencyCode":"EUR","units":"11","nanos":490000000},
                   "priceChangeMode":"PRICE_INCREASE","priceChangeState":"OUTSTANDING"}},
               "offerDetails":{"basePlanId":"monthly","offerId":"intro","offerTags":["winback"]},
               "offerPhase":{"introductoryPrice":{}},
               "itemReplacement":{"productId":"vip_weekly","basePlanId":"weekly","replacementMode":"WITH_TIME_PRORATION"}}]}
            """
        let purchase = try Self.decode(SubscriptionPurchaseV2.self, json)
        #expect(purchase.subscriptionState == .inGracePeriod)
        #expect(purchase.subscriptionState?.grantsAccess == true)
        #expect(purchase.isTestPurchase)
        #expect(purchase.linkedPurchaseToken == "old-token")
        #expect(purchase.acknowledgementState == .acknowledged)
        #expect(purchase.externalAccountIdentifiers?.obfuscatedExternalAccountId == "acct-7")
        #expect(purchase.startTime == Date(timeIntervalSince1970: 1_790_858_096.789))
        #expect(purchase.inGracePeriodStateContext?.renewalDeclined?.pendingOrderId == "GPA.1234-5678-9012-34567..3")
        let item = try #require(purchase.lineItems?.first)
        #expect(item.productId == "vip_monthly")
        #expect(item.autoRenewingPlan?.recurringPrice?.milliunits == 9_990)
        #expect(item.autoRenewingPlan?.priceChangeDetails?.newPrice?.milliunits == 11_490)
        #expect(item.offerDetails?.offerId == "intro")
        #expect(item.offerPhase?.introductoryPrice != nil && item.offerPhase?.basePrice == nil)
        #expect(item.itemReplacement?.replacementMode == .withTimeProration)
        #expect(purchase.expiryTime == Date(timeIntervalSince1970: 1_793_536_496))

        // Written back as Google writes it, and read again to the same value.
        let again = try PlayJSON.decode(SubscriptionPurchaseV2.self, from: try PlayJSON.encode(purchase))
        #expect(again == purchase)
        let text = String(decoding: try PlayJSON.encode(purchase), as: UTF8.self)
        #expect(text.contains(#""units":"9""#), "int64 is written as a string")
        #expect(text.contains(#""testPurchase":{}"#))
        #expect(text.contains(#""startTime":"2026-10-01T12:34:56.789Z""#))
    }

    @Test func valuesGoogleAddsLaterAreKept() throws {
        let purchase = try Self.decode(
            SubscriptionPurchaseV2.self,
            #"{"subscriptionState":"SUBSCRIPTION_STATE_SOMETHING_NEW","lineItems":[{"productId":"p","offerPhase":{"basePrice":{"x":1}}}]}"#
        )
        #expect(purchase.subscriptionState?.rawValue == "SUBSCRIPTION_STATE_SOMETHING_NEW")
        #expect(purchase.subscriptionState?.isKnown == false)
        #expect(purchase.subscriptionState?.grantsAccess == false, "an unknown state grants nothing")
        let notification = try Self.decode(
            DeveloperNotification.self,
            #"{"version":"1.0","packageName":"p","eventTimeMillis":"1","subscriptionNotification":{"notificationType":99,"purchaseToken":"t"}}"#
        )
        #expect(notification.subscriptionNotification?.notificationType?.rawValue == 99)
        #expect(notification.subscriptionNotification?.notificationType?.description == "unknown (99)")
        #expect(SubscriptionNotificationType.renewed.description == "SUBSCRIPTION_RENEWED (2)")
    }

    @Test func aOneTimePurchaseWithInt64Strings() throws {
        let purchase = try Self.decode(
            ProductPurchase.self,
            """
            {"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"1468825200000","purchaseState":0,
             "consumptionState":0,"acknowledgementState":0,"orderId":"GPA.3312-1234-5678-90123","quantity":3,
             "refundableQuantity":2,"obfuscatedExternalAccountId":"acct","regionCode":"US","purchaseType":0}
            """
        )
        #expect(purchase.purchaseTimeMillis?.value == 1_468_825_200_000)
        #expect(purchase.purchaseTimeMillis?.date == Date(timeIntervalSince1970: 1_468_825_200))
        #expect(purchase.purchaseState == .purchased)
        #expect(purchase.units == 3)
        #expect(purchase.refundableQuantity == 2)
        #expect(purchase.isTestPurchase)
        let plain = try Self.decode(ProductPurchase.self, #"{"purchaseState":2,"purchaseTimeMillis":1468825200000}"#)
        #expect(plain.units == 1, "no quantity means one")
        #expect(plain.purchaseState == .pending)
        #expect(plain.purchaseTimeMillis?.value == 1_468_825_200_000, "a bare number is read too")
        #expect(!plain.isTestPurchase)
        #expect(throws: DecodingError.self) { try Self.decode(ProductPurchase.self, #"{"purchaseTimeMillis":"12x"}"#) }
    }

    @Test func aOneTimePurchaseInVersionTwo() throws {
        let purchase = try Self.decode(
            ProductPurchaseV2.self,
            """
            {"kind":"androidpublisher#productPurchaseV2","orderId":"GPA.1","purchaseStateContext":{"purchaseState":"PURCHASED"},
             "testPurchaseContext":{"fopType":"TEST"},"purchaseCompletionTime":"2026-10-02T00:00:00Z",
             "acknowledgementState":"ACKNOWLEDGEMENT_STATE_PENDING",
             "productLineItem":[{"productId":"coins_100","productOfferDetails":{"purchaseOptionId":"buy","quantity":2,
               "refundableQuantity":2,"consumptionState":"CONSUMPTION_STATE_YET_TO_BE_CONSUMED"}}]}
            """
        )
        #expect(purchase.isTestPurchase)
        #expect(purchase.purchaseStateContext?.purchaseState == "PURCHASED")
        #expect(purchase.acknowledgementState == .pending)
        #expect(purchase.productLineItem?.first?.productOfferDetails?.quantity == 2)
    }

    @Test func voidedPurchasesAndTheirPages() throws {
        let page = try Self.decode(
            VoidedPurchasesListResponse.self,
            """
            {"pageInfo":{"totalResults":2,"resultPerPage":1000,"startIndex":0},"tokenPagination":{"nextPageToken":"n1"},
             "voidedPurchases":[{"kind":"androidpublisher#voidedPurchase","purchaseToken":"t1","orderId":"GPA.1..0",
               "purchaseTimeMillis":"1790000000000","voidedTimeMillis":"1790000600000","voidedSource":2,"voidedReason":8},
              {"purchaseToken":"t2","orderId":"GPA.2","voidedTimeMillis":"1790000700000","voidedSource":0,"voidedReason":1,
               "voidedQuantity":2}]}
            """
        )
        #expect(page.tokenPagination?.nextPageToken == "n1")
        let voided = try #require(page.voidedPurchases)
        #expect(voided[0].voidedReason == .unacknowledgedPurchase)
        #expect(voided[0].voidedSource == .google)
        #expect(voided[0].voidedTimeMillis?.value == 1_790_000_600_000)
        #expect(voided[1].voidedQuantity == 2)
        #expect(voided[1].voidedReason?.name == "REMORSE")
    }

    @Test func aPushRequestCarriesADeveloperNotification() throws {
        let notification =
            #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1790000000000","subscriptionNotification":{"version":"1.0","notificationType":4,"purchaseToken":"PURCHASE_TOKEN"}}"#
        let data = Data(notification.utf8).base64EncodedString()
        let push = try Self.decode(
            PubSubPushRequest.self,
            """
            {"message":{"attributes":{},"data":"\(data)","messageId":"2070443601311540","message_id":"2070443601311540",
             "publishTime":"2026-10-01T19:13:55.749Z","publish_time":"2026-10-01T19:13:55.749Z"},
             "subscription":"projects/my-project/subscriptions/play-rtdn-push","deliveryAttempt":3}
            """
        )
        #expect(push.message.messageId == "2070443601311540")
        #expect(push.deliveryAttempt == 3)
        let decoded = try push.developerNotification()
        #expect(decoded.packageName == "com.example.app")
        #expect(decoded.eventTimeMillis?.value == 1_790_000_000_000)
        #expect(decoded.content == .subscription(SubscriptionNotification(notificationType: .purchased, purchaseToken: "PURCHASE_TOKEN")))
        #expect(decoded.purchaseToken == "PURCHASE_TOKEN")

        // Only the snake_case spelling: still read.
        let snake = try Self.decode(
            PubSubPushRequest.self,
            #"{"message":{"data":"\#(data)","message_id":"9","publish_time":"2026-10-01T19:13:55Z"}}"#
        )
        #expect(snake.message.messageId == "9")
        #expect(snake.message.publishTime == Date(timeIntervalSince1970: 1_790_882_035))
        // Written with both spellings, as Pub/Sub does.
        let written = String(decoding: try PlayJSON.encode(snake), as: UTF8.self)
        #expect(written.contains(#""message_id":"9""#) && written.contains(#""messageId":"9""#))
    }

    @Test func notificationsOfEveryKindAndNone() throws {
        func content(_ body: String) throws -> DeveloperNotification.Content {
            try Self.decode(DeveloperNotification.self, #"{"version":"1.0","packageName":"p","eventTimeMillis":"1",\#(body)}"#).content
        }
        #expect(try content(#""testNotification":{"version":"1.0"}"#) == .test)
        #expect(
            try content(#""oneTimeProductNotification":{"version":"1.0","notificationType":2,"purchaseToken":"t","sku":"coins"}"#)
                == .oneTimeProduct(OneTimeProductNotification(notificationType: .canceled, purchaseToken: "t", sku: "coins"))
        )
        #expect(
            try content(#""voidedPurchaseNotification":{"purchaseToken":"t","orderId":"GPA.1","productType":2,"refundType":2}"#)
                == .voidedPurchase(
                    VoidedPurchaseNotification(purchaseToken: "t", orderId: "GPA.1", productType: .oneTime, refundType: .quantityBasedPartialRefund)
                )
        )
        if case .pendingRefundReview(let review) = try content(
            #""pendingRefundReviewNotification":{"pendingRefundToken":"r","orderId":"GPA.2","refundReason":7}"#
        ) {
            #expect(review.pendingRefundToken == "r")
        } else {
            Issue.record("a pending refund review")
        }
        #expect(try content(#""somethingNew":{}"#) == .unknown)
        #expect(
            try content(#""testNotification":{},"subscriptionNotification":{"notificationType":2,"purchaseToken":"t"}"#) == .unknown,
            "two kinds at once is not a notification Storekeeper acts on"
        )
    }

    @Test func pushBodiesThatAreNotNotifications() throws {
        for data in [nil, "%%%not base64", Data("[1,2]".utf8).base64EncodedString()] {
            let push = PubSubPushRequest(message: .init(data: data, messageId: "1", publishTime: nil), subscription: nil)
            #expect(throws: PlayWireError.self) { try push.developerNotification() }
        }
        let huge = Data(repeating: 0x20, count: DeveloperNotification.maximumSize + 1).base64EncodedString()
        let push = PubSubPushRequest(message: .init(data: huge, messageId: "1", publishTime: nil), subscription: nil)
        #expect(throws: PlayWireError.malformed("the notification is larger than 65536 bytes")) { try push.developerNotification() }
    }

    @Test func googlesErrorBody() throws {
        let body = try Self.decode(
            GoogleAPIErrorBody.self,
            """
            {"error": {"code": 404, "message": "The purchase token was not found.",
                       "errors": [{"message": "The purchase token was not found.", "domain": "global",
                                   "reason": "purchaseTokenNotFound", "location": "token", "locationType": "parameter"}],
                       "status": "NOT_FOUND"}}
            """
        )
        #expect(body.error.code == 404)
        #expect(body.reason == "purchaseTokenNotFound")
        #expect(body.error.status == "NOT_FOUND")
    }

    @Test func timestampsAsRFC3339() {
        let base = Date(timeIntervalSince1970: 1_790_882_035)
        #expect(PlayJSON.parseTimestamp("2026-10-01T19:13:55Z") == base)
        #expect(PlayJSON.parseTimestamp("2026-10-01T19:13:55.5Z") == base.addingTimeInterval(0.5))
        #expect(PlayJSON.parseTimestamp("2026-10-01T21:13:55+02:00") == base)
        #expect(PlayJSON.parseTimestamp("2026-10-01t19:13:55z") == base)
        let nanos = PlayJSON.parseTimestamp("2026-10-01T19:13:55.123456789Z")
        #expect(abs((nanos ?? .distantPast).timeIntervalSince(base) - 0.123456789) < 1e-6)
        for bad in [
            "", "2026-10-01", "2026-13-01T00:00:00Z", "2026-10-01T19:13:55", "2026-10-01T19:13:55.Z", "2026-10-01T19:13:55.1234567890Z",
            "2026-10-01T19:13:55+2:00", "2026-02-30T00:00:00Z", "x026-10-01T19:13:55Z", "2026-10-01T19:13:55Zjunk",
        ] {
            #expect(PlayJSON.parseTimestamp(bad) == nil, "\(bad)")
        }
        #expect(PlayJSON.formatTimestamp(base.addingTimeInterval(0.0429)) == "2026-10-01T19:13:55.042Z")
        #expect(PlayJSON.formatTimestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
    }

    @Test func moneyInMilliunits() {
        #expect(Money(currencyCode: "USD", units: 9, nanos: 990_000_000).milliunits == 9_990)
        #expect(Money(currencyCode: "USD", units: -1, nanos: -750_000_000).milliunits == -1_750)
        #expect(Money(currencyCode: "USD", units: 1, nanos: -1).milliunits == nil, "nanos of the other sign")
        #expect(Money(currencyCode: "USD", units: 0, nanos: 1_000_000_000).milliunits == nil, "nanos out of range")
        #expect(Money(currencyCode: "USD", units: .max, nanos: nil).milliunits == nil, "overflow")
        #expect(Money(currencyCode: "JPY", milliunits: 120_000) == Money(currencyCode: "JPY", units: 120, nanos: nil))
        #expect(Money(currencyCode: "EUR", milliunits: 9_990).milliunits == 9_990)
    }
}

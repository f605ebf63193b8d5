import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import Foundation
import Testing

/// Every notification type and subtype of reference §3 that a device or Apple can cause is produced, and every
/// one verifies through AppStoreWire. (EXTERNAL_PURCHASE_TOKEN, RESCIND_CONSENT and the Advanced Commerce types
/// METADATA_UPDATE, MIGRATION and PRICE_CHANGE have no device action in the simulator.)
@Suite struct NotificationCoverageTests {
    typealias H = SimulatorHarness

    static let expected: Set<String> = [
        "SUBSCRIBED/INITIAL_BUY", "SUBSCRIBED/RESUBSCRIBE", "DID_RENEW", "DID_RENEW/BILLING_RECOVERY",
        "DID_CHANGE_RENEWAL_PREF/UPGRADE", "DID_CHANGE_RENEWAL_PREF/DOWNGRADE",
        "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED",
        "OFFER_REDEEMED", "OFFER_REDEEMED/UPGRADE", "OFFER_REDEEMED/DOWNGRADE", "DID_FAIL_TO_RENEW",
        "DID_FAIL_TO_RENEW/GRACE_PERIOD", "GRACE_PERIOD_EXPIRED", "EXPIRED/VOLUNTARY", "EXPIRED/BILLING_RETRY",
        "EXPIRED/PRICE_INCREASE", "EXPIRED/PRODUCT_NOT_FOR_SALE", "PRICE_INCREASE/PENDING", "PRICE_INCREASE/ACCEPTED",
        "REFUND", "REFUND_DECLINED", "REFUND_REVERSED", "CONSUMPTION_REQUEST", "REVOKE", "RENEWAL_EXTENDED",
        "RENEWAL_EXTENSION/SUMMARY", "RENEWAL_EXTENSION/FAILURE", "TEST", "ONE_TIME_CHARGE",
    ]

    @Test func everyReachableTypeAndSubtypeIsProducedAndVerifies() async throws {
        var catalog = try SimulatorCatalog.load(from: H.catalogURL)
        for index in catalog.products.indices where catalog.products[index].id == H.yearly {
            catalog.products[index].promotionalOffers = [
                .init(id: "loyal", discountType: .payUpFront, period: .init(value: 1, unit: .year), periodCount: 1, price: 59_990)
            ]
        }
        let store = try SimulatedAppStore(
            catalog: catalog,
            signingChain: try AppStoreSigningChain.generate(.init(name: "Simulator")),
            seed: 9
        )
        let a = try await store.createAccount()
        let b = try await store.createAccount()
        let c = try await store.createAccount()
        let d = try await store.createAccount()

        // Trial, renewals, cancel and re-enable, upgrade and downgrade, offers.
        let monthly = try await store.purchase(productId: H.monthly, account: a.id)
        let original = monthly.transaction.originalTransactionId!
        try await store.advance(by: 8 * H.day)
        try await store.setAutoRenew(false, originalTransactionId: original)
        try await store.setAutoRenew(true, originalTransactionId: original)
        _ = try await store.purchase(productId: H.monthly, account: a.id, options: .init(offer: .promotional(id: "winback-50")))
        _ = try await store.purchase(productId: H.yearly, account: a.id, options: .init(offer: .promotional(id: "loyal")))
        _ = try await store.purchase(productId: H.monthly, account: a.id, options: .init(offer: .promotional(id: "winback-50")))
        // A plain downgrade and upgrade on another account.
        let yearly = try await store.purchase(productId: H.yearly, account: b.id)
        _ = try await store.purchase(productId: H.monthly, account: b.id)
        _ = try await store.purchase(productId: "com.example.storekeeper.vipA", account: b.id)
        _ = try await store.purchase(productId: "com.example.storekeeper.vipB", account: b.id)

        // Billing: grace then recovery; retry without grace until Apple gives up.
        try await store.setBillingFails(true, account: b.id)
        try await store.advance(by: 31 * H.day)  // vipB fails (no grace group)
        try await store.setBillingFails(false, account: b.id)
        try await store.advance(by: 2 * H.day)  // recovery
        try await store.setBillingFails(true, account: b.id)
        try await store.advance(by: 400 * H.day)  // yearly: grace, grace expired, billing retry expiry
        _ = yearly

        // Price increase with and without consent; a product leaving sale.
        let cMonthly = try await store.purchase(productId: "com.example.storekeeper.vipA", account: c.id)
        try await store.raisePrice(productId: "com.example.storekeeper.vipA", to: 3990, requiresConsent: true)
        try await store.advance(by: 31 * H.day)  // lapses without consent
        let dVip = try await store.purchase(productId: "com.example.storekeeper.vipB", account: d.id)
        try await store.raisePrice(productId: "com.example.storekeeper.vipB", to: 3990, requiresConsent: true)
        try await store.consentToPriceIncrease(originalTransactionId: dVip.transaction.originalTransactionId!)
        try await store.setForSale(false, productId: "com.example.storekeeper.vipB")
        try await store.advance(by: 31 * H.day)
        _ = try await store.purchase(productId: "com.example.storekeeper.vipA", account: c.id)  // resubscribe
        _ = cMonthly

        // Extensions: single, mass with a failure (a trialing subscriber) and a summary.
        let e = try await store.createAccount()
        let paid = try await store.purchase(productId: H.yearly, account: e.id)
        _ = try await store.extendRenewalDate(originalTransactionId: paid.transaction.originalTransactionId!, days: 3)
        let f = try await store.createAccount()
        let trial = try await store.purchase(productId: H.monthly, account: f.id)
        _ = try await store.extendRenewalDateForAll(productId: H.monthly, days: 1, requestIdentifier: "mass-1")
        // A cancellation that runs out.
        try await store.setAutoRenew(false, originalTransactionId: trial.transaction.originalTransactionId!)
        try await store.advance(by: 8 * H.day)

        // One-time purchases, refunds, family sharing.
        let coins = try await store.purchase(productId: "com.example.storekeeper.coins.60", account: e.id)
        try await store.requestRefund(transactionId: coins.transaction.transactionId!)
        try await store.decideRefund(transactionId: coins.transaction.transactionId!, approve: true)
        try await store.reverseRefund(transactionId: coins.transaction.transactionId!)
        let chapter = try await store.purchase(productId: "com.example.storekeeper.chapter.2", account: e.id)
        try await store.requestRefund(transactionId: chapter.transaction.transactionId!)
        try await store.decideRefund(transactionId: chapter.transaction.transactionId!, approve: false)
        let g = try await store.createAccount()
        try await store.createFamily([e.id, g.id])
        // Apple sends a TEST only to an app with a notification URL: configure delivery first.
        await store.setDeliversNotifications(true)
        _ = try await store.sendTestNotification()

        // Family revoke needs a shareable product: the sample's chapter made shareable.
        var familyCatalog = catalog
        for index in familyCatalog.products.indices where familyCatalog.products[index].id == "com.example.storekeeper.chapter.2" {
            familyCatalog.products[index].familyShareable = true
        }
        let family = try SimulatedAppStore(catalog: familyCatalog, signingChain: try AppStoreSigningChain.generate(), seed: 2)
        let parent = try await family.createAccount()
        let kid = try await family.createAccount()
        try await family.createFamily([parent.id, kid.id])
        _ = try await family.purchase(productId: "com.example.storekeeper.chapter.2", account: parent.id)
        try await family.leaveFamily(account: kid.id)

        var produced = Set<String>()
        for notification in await store.sentNotifications() + family.sentNotifications() {
            produced.insert([notification.type.rawValue, notification.subtype?.rawValue].compactMap { $0 }.joined(separator: "/"))
        }
        let missing = Self.expected.subtracting(produced)
        #expect(missing.isEmpty, "not produced: \(missing.sorted())")

        // Every one of them is signed so that AppStoreWire accepts it (with each store's root pinned).
        for (store, root) in [(store, await store.signingRoot), (family, await family.signingRoot)] {
            let verifier = try SignedDataVerifier(
                configuration: .init(
                    bundleId: catalog.bundleId,
                    environments: [.sandbox],
                    roots: try TrustedRoots.only([root]),
                    deployment: .development
                )
            )
            for notification in await store.sentNotifications() {
                let payload = try await verifier.verifyNotification(notification.signedPayload)
                if let signed = payload.data?.signedTransactionInfo { _ = try await verifier.verifyTransaction(signed) }
                if let signed = payload.data?.signedRenewalInfo { _ = try await verifier.verifyRenewalInfo(signed) }
            }
        }
    }
}

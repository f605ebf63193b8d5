import AppStoreSimulator
import AppStoreWire
import Foundation

/// Shared inputs for the receipt tests: signing identities (RSA key generation is slow, so once per run) and a
/// purchase history that exercises every in-app field mapping.
enum ReceiptFixtures {
    static let bundleId = "com.example.storekeeper"
    static let device = UUID(uuidString: "2C7B8B5E-8F4A-4C43-9A3C-6B1D6E4F1A20")!
    /// 2026-01-01 00:00:00 UTC, inside the identity's default validity (2020–2050).
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let day: TimeInterval = 86_400

    static let identityResult = Result { try ReceiptSigningIdentity.generate() }
    /// An impostor: same names, other keys.
    static let otherIdentityResult = Result { try ReceiptSigningIdentity.generate() }

    static func identity() throws -> ReceiptSigningIdentity { try identityResult.get() }
    static func otherIdentity() throws -> ReceiptSigningIdentity { try otherIdentityResult.get() }

    static func builder(
        identity: ReceiptSigningIdentity,
        receiptType: String = "ProductionSandbox",
        creationDate: Date = now
    ) -> AppReceiptBuilder {
        AppReceiptBuilder(
            identity: identity,
            bundleId: bundleId,
            appVersion: "42",
            deviceIdentifier: AppReceiptBuilder.deviceIdentifier(device),
            receiptType: receiptType,
            creationDate: creationDate
        )
    }

    static let monthly = "com.example.storekeeper.monthly"
    static let yearly = "com.example.storekeeper.yearly"

    /// Monthly subscription "1000": free trial, intro pay-as-you-go, promotional renewal, plain renewal.
    /// Yearly subscription "2000": purchase and one renewal (upgraded away). Plus a consumable bought three at
    /// once, a refunded non-consumable and a non-renewing subscription redeemed with an offer code.
    /// Dates are whole seconds so the receipt (second precision) holds them exactly.
    static func transactions() -> [JWSTransactionDecodedPayload] {
        let start = now.addingTimeInterval(-200 * day)
        func subscription(
            _ id: String,
            original: String,
            product: String,
            group: String,
            purchased: Date,
            expires: Date,
            offer: OfferType? = nil,
            offerId: String? = nil,
            discount: OfferDiscountType? = nil,
            originalDate: Date,
            upgraded: Bool? = nil
        ) -> JWSTransactionDecodedPayload {
            JWSTransactionDecodedPayload(
                transactionId: id,
                originalTransactionId: original,
                webOrderLineItemId: String(Int64(id)! + 500_000),
                bundleId: bundleId,
                productId: product,
                subscriptionGroupIdentifier: group,
                purchaseDate: purchased,
                originalPurchaseDate: originalDate,
                expiresDate: expires,
                quantity: 1,
                type: .autoRenewable,
                appAccountToken: "8d4ab9b6-2f0e-4a73-9a2a-5e0c0b1f2d3c",
                inAppOwnershipType: .purchased,
                isUpgraded: upgraded,
                offerType: offer,
                offerIdentifier: offerId,
                offerDiscountType: discount,
                environment: .sandbox
            )
        }
        let m0 = start
        return [
            subscription(
                "1000",
                original: "1000",
                product: monthly,
                group: "21000001",
                purchased: m0,
                expires: m0 + 7 * day,
                offer: .introductory,
                discount: .freeTrial,
                originalDate: m0
            ),
            subscription(
                "1001",
                original: "1000",
                product: monthly,
                group: "21000001",
                purchased: m0 + 7 * day,
                expires: m0 + 37 * day,
                offer: .introductory,
                discount: .payAsYouGo,
                originalDate: m0
            ),
            subscription(
                "1002",
                original: "1000",
                product: monthly,
                group: "21000001",
                purchased: m0 + 37 * day,
                expires: m0 + 67 * day,
                offer: .promotional,
                offerId: "winback.half",
                discount: .payAsYouGo,
                originalDate: m0
            ),
            subscription(
                "1003",
                original: "1000",
                product: monthly,
                group: "21000001",
                purchased: m0 + 67 * day,
                expires: m0 + 97 * day,
                originalDate: m0
            ),
            subscription(
                "2000",
                original: "2000",
                product: yearly,
                group: "21000002",
                purchased: m0 + 10 * day,
                expires: m0 + 40 * day,
                originalDate: m0 + 10 * day,
                upgraded: true
            ),
            subscription(
                "2001",
                original: "2000",
                product: yearly,
                group: "21000002",
                purchased: m0 + 40 * day,
                expires: m0 + 405 * day,
                originalDate: m0 + 10 * day
            ),
            JWSTransactionDecodedPayload(
                transactionId: "3000",
                originalTransactionId: "3000",
                bundleId: bundleId,
                productId: "com.example.storekeeper.coins",
                purchaseDate: m0 + 3 * day,
                originalPurchaseDate: m0 + 3 * day,
                quantity: 3,
                type: .consumable,
                inAppOwnershipType: .purchased
            ),
            JWSTransactionDecodedPayload(
                transactionId: "3001",
                originalTransactionId: "3001",
                bundleId: bundleId,
                productId: "com.example.storekeeper.pro",
                purchaseDate: m0 + 4 * day,
                originalPurchaseDate: m0 + 4 * day,
                quantity: 1,
                type: .nonConsumable,
                inAppOwnershipType: .purchased,
                revocationReason: .refundedDueToIssue,
                revocationDate: m0 + 5 * day
            ),
            JWSTransactionDecodedPayload(
                transactionId: "3002",
                originalTransactionId: "3002",
                bundleId: bundleId,
                productId: "com.example.storekeeper.season",
                purchaseDate: m0 + 6 * day,
                originalPurchaseDate: m0 + 6 * day,
                expiresDate: m0 + 96 * day,
                quantity: 1,
                type: .nonRenewing,
                inAppOwnershipType: .familyShared,
                offerType: .offerCode,
                offerIdentifier: "SPRING",
                offerDiscountType: .payUpFront
            ),
        ]
    }

    static func renewalInfos() -> [JWSRenewalInfoDecodedPayload] {
        [
            JWSRenewalInfoDecodedPayload(
                originalTransactionId: "1000",
                productId: monthly,
                autoRenewProductId: yearly,
                autoRenewStatus: .on,
                isInBillingRetryPeriod: true,
                gracePeriodExpiresDate: now + 3 * day,
                priceIncreaseStatus: .customerHasNotResponded,
                offerType: .promotional,
                offerIdentifier: "winback.half",
                environment: .sandbox
            ),
            JWSRenewalInfoDecodedPayload(
                originalTransactionId: "2000",
                productId: yearly,
                autoRenewProductId: yearly,
                autoRenewStatus: .off,
                expirationIntent: .customerCancelled,
                isInBillingRetryPeriod: false,
                offerType: .offerCode,
                offerIdentifier: "LOYAL",
                environment: .sandbox
            ),
        ]
    }
}

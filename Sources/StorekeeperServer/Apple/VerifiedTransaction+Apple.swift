import AppStoreWire
import Foundation
import StorekeeperCore

/// Apple's transaction formats mapped to the domain's ``VerifiedTransaction``, in one place: a verified JWS payload
/// (StoreKit 2, notifications, the Server API) and a receipt entry `verifyReceipt` vouched for (legacy receipts, V1).
extension VerifiedTransaction {
    /// A transaction from a verified JWS payload; nil without an id, product or purchase date.
    init?(payload: JWSTransactionDecodedPayload, signedData: String?, source: Source = .signedTransaction) {
        guard let id = payload.transactionId, let productId = payload.productId, let purchaseDate = payload.purchaseDate,
            let bundleId = payload.bundleId
        else { return nil }
        self.init(
            transactionId: id,
            originalTransactionId: payload.originalTransactionId ?? id,
            bundleId: bundleId,
            productId: productId,
            environment: StoreEnvironment(storeName: payload.environment?.rawValue ?? "Production"),
            purchaseDate: purchaseDate,
            expiresDate: payload.expiresDate,
            quantity: Int(payload.quantity ?? 1),
            appAccountToken: payload.appAccountTokenUUID,
            offerType: payload.offerType.map { OfferKind(rawValue: Int($0.rawValue)) },
            subscriptionGroup: payload.subscriptionGroupIdentifier,
            revocationDate: payload.revocationDate,
            source: source,
            signedData: signedData,
            commerce: TransactionCommerce(
                price: Self.customerPrice(payload),
                currency: payload.currency,
                storefront: payload.storefront,
                storefrontId: payload.storefrontId,
                offerId: payload.offerIdentifier,
                offerDiscountType: payload.offerDiscountType?.rawValue,
                offerPeriod: payload.offerPeriod,
                appTransactionId: payload.appTransactionId,
                transactionReason: payload.transactionReason?.rawValue,
                webOrderLineItemId: payload.webOrderLineItemId,
                ownershipType: payload.inAppOwnershipType?.rawValue,
                revocationType: payload.revocationType?.rawValue,
                revocationPercentage: payload.revocationPercentage.map(Int.init),
                refundedSeats: payload.multiSeatInfo?.revokedSeatQuantity.flatMap { $0 > 0 ? Int($0) : nil }
            )
        )
    }

    /// What the customer paid for the transaction: Apple's `price`, except for a multiseat subscription, whose `price`
    /// is the average per seat — there the tiers' sum (or the average times the seats), so revenue counts every seat.
    /// Nil when the sum does not fit.
    static func customerPrice(_ payload: JWSTransactionDecodedPayload) -> Int64? {
        guard let seats = payload.multiSeatInfo else { return payload.price }
        if let total = seats.totalPrice { return total }
        guard let price = payload.price, let quantity = payload.quantity, quantity > 0 else { return payload.price }
        let (total, overflow) = price.multipliedReportingOverflow(by: Int64(quantity))
        return overflow ? nil : total
    }

    /// A transaction from a receipt entry Apple's `verifyReceipt` (or a V1 notification) vouched for.
    init?(legacy entry: LegacyTransaction, bundleId: String, environment: StoreEnvironment) {
        guard let id = entry.transactionId, let productId = entry.productId, let purchaseDate = entry.purchaseDateValue else {
            return nil
        }
        var offerType: OfferKind?
        if entry.isTrialPeriodValue == true || entry.isInIntroOfferPeriodValue == true {
            offerType = .introductory
        } else if entry.promotionalOfferId != nil {
            offerType = .promotional
        } else if entry.offerCodeRefName != nil {
            offerType = .code
        }
        self.init(
            transactionId: id,
            originalTransactionId: entry.originalTransactionId ?? id,
            bundleId: bundleId,
            productId: productId,
            environment: environment,
            purchaseDate: purchaseDate,
            expiresDate: entry.expiresDateValue,
            quantity: entry.quantityValue ?? 1,
            appAccountToken: entry.appAccountTokenValue,
            offerType: offerType,
            subscriptionGroup: entry.subscriptionGroupIdentifier,
            revocationDate: entry.cancellationDateValue,
            source: .receipt,
            // What a receipt carries of money and offers: no price, currency or storefront.
            commerce: TransactionCommerce(
                offerId: entry.promotionalOfferId ?? entry.offerCodeRefName,
                webOrderLineItemId: entry.webOrderLineItemId,
                ownershipType: entry.inAppOwnershipType
            )
        )
    }
}

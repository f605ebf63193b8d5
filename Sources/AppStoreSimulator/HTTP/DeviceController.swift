import AppStoreWire
import Foundation
import Hummingbird

/// The device side: what an iPhone with StoreKit does against the App Store (accounts, purchases, Ask to Buy,
/// transactions, cancelling, refund requests).
struct DeviceController<Context: RequestContext>: Sendable {
    let store: SimulatedAppStore
    /// Checks signed offers as the App Store does; `nil` (no Apple side configured) accepts offers unsigned.
    let offers: OfferSignatureChecker?

    struct CreateAccount: Codable { var storefront: String? }
    struct Billing: Codable { var fails: Bool }
    /// The v1 promotional-offer signature fields StoreKit sends with the offer id.
    struct OfferSignature: Codable {
        var keyIdentifier: String
        var nonce: String
        var timestamp: Int64
        var signature: String
    }
    struct Offer: Codable {
        /// `promotional`, `winBack` or `offerCode`.
        var type: String
        var id: String
        /// A promotional offer's v1 signature, or
        var signature: OfferSignature?
        /// its v2 JWS.
        var jws: String?
    }
    struct Purchase: Codable {
        var account: String
        var productId: String
        var appAccountToken: UUID?
        var quantity: Int?
        var offer: Offer?
        /// The developer's introductory-offer eligibility JWS.
        var introductoryOfferEligibility: String?
        /// `MONTHLY` (a yearly product paid monthly with a 12-month commitment) or `BILLED_UPFRONT`.
        var billingPlan: String?
    }
    struct PurchaseResult: Codable {
        var signedTransaction: String
        var transaction: JWSTransactionDecodedPayload
    }
    struct AskToBuyResult: Codable { var requestId: String }
    struct AutoRenew: Codable { var enabled: Bool }
    struct RefundRequest: Codable { var reason: ConsumptionRequestReason? }
    struct SignedTransactions: Codable { var signedTransactions: [String] }
    struct Products: Codable { var products: [StorefrontProduct] }

    func add(to router: some RouterMethods<Context>) {
        let device = router.group("device")
        device.post("accounts") { request, _ in
            let body = try await HTTPJSON.decode(CreateAccount.self, from: request)
            return try HTTPJSON.response(
                try await SimulatorError.mapped { try await store.createAccount(storefront: body.storefront) },
                status: .created
            )
        }
        device.post("accounts/:account/billing") { request, context in
            let body = try await HTTPJSON.decode(Billing.self, from: request)
            let account = try PathParameter.require("account", in: context)
            try await SimulatorError.mapped { try await store.setBillingFails(body.fails, account: account) }
            return Response(status: .noContent)
        }
        device.get("products") { request, _ in
            // `ids` once per product (or comma-separated), as `Product.products(for:)` asks; at most 200.
            let ids = request.uri.queryParameters.getAll("ids").flatMap { $0.split(separator: ",").map(String.init) }
            guard !ids.isEmpty, ids.count <= 200 else {
                throw SimulatorHTTPError(.badRequest, code: "invalid_ids", message: "ids names 1 to 200 products")
            }
            let account = request.uri.queryParameters["account"].map(String.init)
            let products = try await SimulatorError.mapped { try await store.storefrontProducts(ids: ids, account: account) }
            return try HTTPJSON.response(Products(products: products))
        }
        device.get("accounts/:account/transactions") { _, context in
            let account = try PathParameter.require("account", in: context)
            let signed = try await SimulatorError.mapped { try await store.signedTransactions(account: account) }
            return try HTTPJSON.response(SignedTransactions(signedTransactions: signed))
        }
        device.get("accounts/:account/unfinished") { _, context in
            let account = try PathParameter.require("account", in: context)
            let signed = try await SimulatorError.mapped { try await store.signedUnfinishedTransactions(account: account) }
            return try HTTPJSON.response(SignedTransactions(signedTransactions: signed))
        }
        device.post("transactions/:transaction/finish") { _, context in
            let id = try PathParameter.require("transaction", in: context)
            try await SimulatorError.mapped { try await store.finishOnDevice(id) }
            return Response(status: .noContent)
        }
        device.post("accounts/:account/restore") { _, context in
            let account = try PathParameter.require("account", in: context)
            let signed = try await SimulatorError.mapped { try await store.restore(account: account) }
            return try HTTPJSON.response(SignedTransactions(signedTransactions: signed))
        }
        device.post("purchases") { request, _ in
            let body = try await HTTPJSON.decode(Purchase.self, from: request)
            let options = try await checkedOptions(body)
            let purchase = try await SimulatorError.mapped {
                try await store.purchase(productId: body.productId, account: body.account, options: options)
            }
            return try HTTPJSON.response(
                PurchaseResult(signedTransaction: purchase.signedTransaction, transaction: purchase.transaction),
                status: .created
            )
        }
        device.post("ask-to-buy") { request, _ in
            let body = try await HTTPJSON.decode(Purchase.self, from: request)
            let options = try await checkedOptions(body)
            let id = try await SimulatorError.mapped {
                try await store.requestAskToBuy(productId: body.productId, account: body.account, options: options)
            }
            return try HTTPJSON.response(AskToBuyResult(requestId: id), status: .accepted)
        }
        device.post("ask-to-buy/:request/approve") { _, context in
            let id = try PathParameter.require("request", in: context)
            let purchase = try await SimulatorError.mapped { try await store.approveAskToBuy(id) }
            return try HTTPJSON.response(
                PurchaseResult(signedTransaction: purchase.signedTransaction, transaction: purchase.transaction),
                status: .created
            )
        }
        device.post("ask-to-buy/:request/decline") { _, context in
            let id = try PathParameter.require("request", in: context)
            try await SimulatorError.mapped { try await store.declineAskToBuy(id) }
            return Response(status: .noContent)
        }
        device.post("subscriptions/:original/auto-renew") { request, context in
            let body = try await HTTPJSON.decode(AutoRenew.self, from: request)
            let original = try PathParameter.require("original", in: context)
            try await SimulatorError.mapped { try await store.setAutoRenew(body.enabled, originalTransactionId: original) }
            return Response(status: .noContent)
        }
        device.post("transactions/:transaction/refund-request") { request, context in
            let body = try await HTTPJSON.decode(RefundRequest.self, from: request)
            let id = try PathParameter.require("transaction", in: context)
            try await SimulatorError.mapped {
                try await store.requestRefund(transactionId: id, reason: body.reason ?? .unintendedPurchase)
            }
            return Response(status: .accepted)
        }
    }

    /// The purchase options after the App Store's checks of signed offers and eligibility decisions.
    private func checkedOptions(_ body: Purchase) async throws -> PurchaseOptions {
        var options = try options(body)
        guard let offers else { return options }
        let bundleId = await store.catalog.bundleId
        // Any of the customer's ids may be named, the app transaction id included.
        var owned = Set(await store.transactions(account: body.account).compactMap(\.transactionId))
        if let appTransactionId = await store.account(body.account)?.appTransactionId { owned.insert(appTransactionId) }
        do {
            if let offer = body.offer, offer.type == "promotional" {
                if let jws = offer.jws {
                    try offers.checkPromotionalOfferV2(
                        jws,
                        bundleId: bundleId,
                        productId: body.productId,
                        offerIdentifier: offer.id,
                        customerTransactionIds: owned,
                        now: Date()
                    )
                } else if let signature = offer.signature {
                    try offers.checkPromotionalOfferV1(
                        keyIdentifier: signature.keyIdentifier,
                        nonce: signature.nonce,
                        timestamp: signature.timestamp,
                        signature: signature.signature,
                        bundleId: bundleId,
                        productId: body.productId,
                        offerId: offer.id,
                        appAccountToken: body.appAccountToken?.uuidString.lowercased() ?? "",
                        now: Date()
                    )
                } else {
                    throw SimulatorHTTPError(
                        .badRequest,
                        code: "unsigned_offer",
                        message: "a promotional offer needs its signature or JWS"
                    )
                }
            }
            if let jws = body.introductoryOfferEligibility {
                let claims = try offers.checkIntroductoryOfferEligibility(
                    jws,
                    bundleId: bundleId,
                    productId: body.productId,
                    customerTransactionIds: owned,
                    now: Date()
                )
                options.introductoryOfferEligible = claims.allowIntroductoryOffer
            }
        } catch let failure as OfferSignatureFailure {
            throw SimulatorHTTPError(.forbidden, code: "invalid_offer_signature", message: "\(failure)")
        }
        return options
    }

    private func options(_ body: Purchase) throws -> PurchaseOptions {
        var offer: OfferRedemption?
        if let requested = body.offer {
            switch requested.type {
            case "promotional": offer = .promotional(id: requested.id)
            case "winBack": offer = .winBack(id: requested.id)
            case "offerCode": offer = .offerCode(referenceName: requested.id)
            default:
                throw SimulatorHTTPError(
                    .badRequest,
                    code: "unknown_offer_type",
                    message: "offer type \(requested.type) is not one of promotional, winBack, offerCode"
                )
            }
        }
        var plan: BillingPlanType?
        if let requested = body.billingPlan {
            guard BillingPlanType.knownValues.contains(BillingPlanType(rawValue: requested)) else {
                throw SimulatorHTTPError(
                    .badRequest,
                    code: "unknown_billing_plan",
                    message: "billingPlan \(requested) is not MONTHLY or BILLED_UPFRONT"
                )
            }
            plan = BillingPlanType(rawValue: requested)
        }
        return PurchaseOptions(appAccountToken: body.appAccountToken, offer: offer, quantity: body.quantity ?? 1, billingPlan: plan)
    }
}

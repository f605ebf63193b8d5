import AppStoreWire
import Foundation
import Hummingbird

/// The device side: what an iPhone with StoreKit does against the App Store (accounts, purchases, Ask to Buy,
/// transactions, cancelling, refund requests).
struct DeviceController<Context: RequestContext>: Sendable {
    let store: SimulatedAppStore

    struct CreateAccount: Codable { var storefront: String? }
    struct Billing: Codable { var fails: Bool }
    struct Offer: Codable {
        /// `promotional`, `winBack` or `offerCode`.
        var type: String
        var id: String
    }
    struct Purchase: Codable {
        var account: String
        var productId: String
        var appAccountToken: UUID?
        var quantity: Int?
        var offer: Offer?
    }
    struct PurchaseResult: Codable {
        var signedTransaction: String
        var transaction: JWSTransactionDecodedPayload
    }
    struct AskToBuyResult: Codable { var requestId: String }
    struct AutoRenew: Codable { var enabled: Bool }
    struct RefundRequest: Codable { var reason: ConsumptionRequestReason? }
    struct SignedTransactions: Codable { var signedTransactions: [String] }

    func add(to router: Router<Context>) {
        let device = router.group("device")
        device.post("accounts") { request, _ in
            let body = try await HTTPJSON.decode(CreateAccount.self, from: request)
            return try HTTPJSON.response(try await SimulatorError.mapped { try await store.createAccount(storefront: body.storefront) }, status: .created)
        }
        device.post("accounts/:account/billing") { request, context in
            let body = try await HTTPJSON.decode(Billing.self, from: request)
            let account = try context.parameters.require("account")
            try await SimulatorError.mapped { try await store.setBillingFails(body.fails, account: account) }
            return Response(status: .noContent)
        }
        device.get("accounts/:account/transactions") { _, context in
            let account = try context.parameters.require("account")
            let signed = try await SimulatorError.mapped { try await store.signedTransactions(account: account) }
            return try HTTPJSON.response(SignedTransactions(signedTransactions: signed))
        }
        device.post("purchases") { request, _ in
            let body = try await HTTPJSON.decode(Purchase.self, from: request)
            let purchase = try await SimulatorError.mapped {
                try await store.purchase(productId: body.productId, account: body.account, options: try options(body))
            }
            return try HTTPJSON.response(
                PurchaseResult(signedTransaction: purchase.signedTransaction, transaction: purchase.transaction), status: .created)
        }
        device.post("ask-to-buy") { request, _ in
            let body = try await HTTPJSON.decode(Purchase.self, from: request)
            let id = try await SimulatorError.mapped {
                try await store.requestAskToBuy(productId: body.productId, account: body.account, options: try options(body))
            }
            return try HTTPJSON.response(AskToBuyResult(requestId: id), status: .accepted)
        }
        device.post("ask-to-buy/:request/approve") { _, context in
            let id = try context.parameters.require("request")
            let purchase = try await SimulatorError.mapped { try await store.approveAskToBuy(id) }
            return try HTTPJSON.response(
                PurchaseResult(signedTransaction: purchase.signedTransaction, transaction: purchase.transaction), status: .created)
        }
        device.post("ask-to-buy/:request/decline") { _, context in
            let id = try context.parameters.require("request")
            try await SimulatorError.mapped { try await store.declineAskToBuy(id) }
            return Response(status: .noContent)
        }
        device.post("subscriptions/:original/auto-renew") { request, context in
            let body = try await HTTPJSON.decode(AutoRenew.self, from: request)
            let original = try context.parameters.require("original")
            try await SimulatorError.mapped { try await store.setAutoRenew(body.enabled, originalTransactionId: original) }
            return Response(status: .noContent)
        }
        device.post("transactions/:transaction/refund-request") { request, context in
            let body = try await HTTPJSON.decode(RefundRequest.self, from: request)
            let id = try context.parameters.require("transaction")
            try await SimulatorError.mapped {
                try await store.requestRefund(transactionId: id, reason: body.reason ?? .unintendedPurchase)
            }
            return Response(status: .accepted)
        }
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
                    .badRequest, code: "unknown_offer_type",
                    message: "offer type \(requested.type) is not one of promotional, winBack, offerCode")
            }
        }
        return PurchaseOptions(appAccountToken: body.appAccountToken, offer: offer, quantity: body.quantity ?? 1)
    }
}

import AppStoreWire
import Foundation
import Hummingbird

/// The test operator's side: the clock, Apple's decisions (refunds, price changes, extensions), Family Sharing,
/// the catalog's sale state, sent notifications and the ground truth.
struct ControlController<Context: RequestContext>: Sendable {
    let store: SimulatedAppStore
    let rootPEM: String
    let faults: AppleEndpointFaults?

    struct Clock: Codable { var now: Date }
    struct Advance: Codable {
        var seconds: Double?
        /// An ISO 8601 period such as `P1M` or `P3D`, added in calendar terms.
        var period: String?
    }
    struct Decision: Codable {
        var approve: Bool
        /// A prorated refund's share, milliunits of a percent (1-99999); absent: a full refund.
        var proratedPercentage: Int?
    }
    struct Family: Codable { var accounts: [String] }
    /// A notification Apple sends about the app or a purchase outside the purchase flows.
    struct Send: Codable {
        var type: String
        var subtype: String?
        var transactionId: String?
        /// `RESCIND_CONSENT`: the minor's account.
        var account: String?
        /// `EXTERNAL_PURCHASE_TOKEN`: the token's id (`SANDBOX…` in the sandbox).
        var externalPurchaseId: String?
    }
    struct Sent: Codable { var notificationUUID: String }
    struct FamilyResult: Codable { var familyId: String }
    /// An organization's assignment (Apple Business or School Manager).
    struct GroupJoin: Decodable {
        var account: String
        var appAccountToken: UUID?
    }

    struct Assignment: Codable {
        var productId: String
        var account: String
        var appAccountToken: UUID?
    }
    struct Sale: Codable { var forSale: Bool }
    struct Price: Codable {
        var price: Int64
        var requiresConsent: Bool
    }
    struct Extend: Codable { var days: Int }
    /// Seats of a multiseat subscription's current period Apple refunds.
    struct SeatRefund: Codable { var count: Int }
    /// Seat claims Apple releases itself.
    struct SeatUnclaim: Codable { var seatClaimIds: [String] }
    struct ExtendAll: Codable {
        var productId: String
        var days: Int
        var requestIdentifier: String
        var storefrontCountryCodes: [String]?
    }
    struct ExtendResult: Codable {
        var originalTransactionId: String
        var webOrderLineItemId: String?
        var success: Bool
        var effectiveDate: Date?
    }
    struct MassResult: Codable {
        var requestIdentifier: String
        var complete: Bool
        var completeDate: Date?
        var succeededCount: Int64
        var failedCount: Int64
    }
    struct NotificationSummary: Codable {
        var notificationUUID: String
        var notificationType: NotificationTypeV2
        var subtype: Subtype?
        var signedPayload: String
    }
    struct Truth: Codable {
        struct Entitlement: Codable {
            var productId: String
            /// nil: permanent.
            var until: Date?
        }
        var at: Date
        var entitlements: [Entitlement]
        var consumables: [String: Int]
        var transactionIds: [String]
    }

    func add(to router: some RouterMethods<Context>) {
        let control = router.group("control")
        control.get("root.pem") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/x-pem-file"], body: .init(byteBuffer: .init(string: rootPEM)))
        }
        control.get("clock") { _, _ in try HTTPJSON.response(Clock(now: await store.currentDate)) }
        control.post("clock/advance") { request, _ in
            let body = try await HTTPJSON.decode(Advance.self, from: request)
            let start = await store.currentDate
            var seconds = body.seconds ?? 0
            if let text = body.period {
                guard let period = SubscriptionPeriod(iso8601: text) else {
                    throw SimulatorHTTPError(.badRequest, code: "bad_period", message: "\(text) is not an ISO 8601 period like P1M")
                }
                seconds += period.advance(start).timeIntervalSince(start)
            }
            guard seconds >= 0 else {
                throw SimulatorHTTPError(.badRequest, code: "bad_duration", message: "the clock only moves forward")
            }
            try await SimulatorError.mapped { try await store.advance(by: seconds) }
            return try HTTPJSON.response(Clock(now: await store.currentDate))
        }
        control.post("refunds/:transaction/decide") { request, context in
            let body = try await HTTPJSON.decode(Decision.self, from: request)
            let id = try PathParameter.require("transaction", in: context)
            try await SimulatorError.mapped {
                try await store.decideRefund(transactionId: id, approve: body.approve, proratedPercentage: body.proratedPercentage)
            }
            return Response(status: .noContent)
        }
        control.post("refunds/:transaction/reverse") { _, context in
            let id = try PathParameter.require("transaction", in: context)
            try await SimulatorError.mapped { try await store.reverseRefund(transactionId: id) }
            return Response(status: .noContent)
        }
        control.post("notifications") { request, _ in
            let body = try await HTTPJSON.decode(Send.self, from: request)
            func name(_ text: String?, _ field: String) throws -> String? {
                guard let text else { return nil }
                guard (1...64).contains(text.utf8.count), text.utf8.allSatisfy({ (65...90).contains($0) || (48...57).contains($0) || $0 == 95 })
                else {
                    throw SimulatorHTTPError(.badRequest, code: "bad_\(field)", message: "\(field) is 1-64 of A-Z, 0-9 and _")
                }
                return text
            }
            let type = try name(body.type, "type") ?? ""
            let subtype = try name(body.subtype, "subtype").map(Subtype.init(rawValue:))
            let uuid = try await SimulatorError.mapped { () async throws -> String in
                switch type {
                case NotificationTypeV2.rescindConsent.rawValue:
                    guard let account = body.account else {
                        throw SimulatorHTTPError(.badRequest, code: "account_required", message: "RESCIND_CONSENT names an account")
                    }
                    return try await store.rescindConsent(account: account)
                case NotificationTypeV2.externalPurchaseToken.rawValue:
                    guard let id = body.externalPurchaseId, let subtype, (1...128).contains(id.utf8.count) else {
                        throw SimulatorHTTPError(
                            .badRequest,
                            code: "token_required",
                            message: "EXTERNAL_PURCHASE_TOKEN needs externalPurchaseId and subtype"
                        )
                    }
                    return try await store.externalPurchaseToken(subtype, id: id)
                default:
                    return try await store.sendNotification(NotificationTypeV2(rawValue: type), subtype: subtype, transactionId: body.transactionId)
                }
            }
            return try HTTPJSON.response(Sent(notificationUUID: uuid), status: .created)
        }
        control.post("families") { request, _ in
            let body = try await HTTPJSON.decode(Family.self, from: request)
            let id = try await SimulatorError.mapped { try await store.createFamily(body.accounts) }
            return try HTTPJSON.response(FamilyResult(familyId: id), status: .created)
        }
        control.post("assignments") { request, _ in
            let body = try await HTTPJSON.decode(Assignment.self, from: request)
            let purchase = try await SimulatorError.mapped {
                try await store.assign(productId: body.productId, to: body.account, appAccountToken: body.appAccountToken)
            }
            return try HTTPJSON.response(
                DeviceController<Context>.PurchaseResult(signedTransaction: purchase.signedTransaction, transaction: purchase.transaction),
                status: .created
            )
        }
        control.post("assignments/:transaction/revoke") { _, context in
            let id = try PathParameter.require("transaction", in: context)
            try await SimulatorError.mapped { try await store.revokeAssignment(transactionId: id) }
            return Response(status: .noContent)
        }
        control.post("families/leave/:account") { _, context in
            let account = try PathParameter.require("account", in: context)
            try await SimulatorError.mapped { try await store.leaveFamily(account: account) }
            return Response(status: .noContent)
        }
        control.post("products/:product/sale") { request, context in
            let body = try await HTTPJSON.decode(Sale.self, from: request)
            let product = try PathParameter.require("product", in: context)
            try await SimulatorError.mapped { try await store.setForSale(body.forSale, productId: product) }
            return Response(status: .noContent)
        }
        control.post("products/:product/price") { request, context in
            let body = try await HTTPJSON.decode(Price.self, from: request)
            let product = try PathParameter.require("product", in: context)
            try await SimulatorError.mapped {
                try await store.raisePrice(productId: product, to: body.price, requiresConsent: body.requiresConsent)
            }
            return Response(status: .noContent)
        }
        control.post("subscriptions/:original/accept-retention-offer") { _, context in
            let original = try PathParameter.require("original", in: context)
            try await SimulatorError.mapped { try await store.acceptRetentionOffer(originalTransactionId: original) }
            return Response(status: .noContent)
        }
        control.post("subscriptions/:original/unclaim-seats") { request, context in
            let body = try await HTTPJSON.decode(SeatUnclaim.self, from: request)
            let original = try PathParameter.require("original", in: context)
            do {
                try await store.appleUnclaimsSeats(originalTransactionId: original, seatClaimIds: body.seatClaimIds)
            } catch let error as SeatError {
                throw SimulatorHTTPError(.conflict, code: "not_allowed", message: "seats not unclaimed: \(error)")
            }
            return Response(status: .noContent)
        }
        control.post("subscriptions/:original/join-group") { request, context in
            let body = try await HTTPJSON.decode(GroupJoin.self, from: request)
            let original = try PathParameter.require("original", in: context)
            let purchase = try await SimulatorError.mapped {
                try await store.joinGroup(originalTransactionId: original, memberAccount: body.account, appAccountToken: body.appAccountToken)
            }
            return try HTTPJSON.response(
                DeviceController<Context>.PurchaseResult(signedTransaction: purchase.signedTransaction, transaction: purchase.transaction),
                status: .created
            )
        }
        control.get("subscriptions/:original/seats") { _, context in
            let original = try PathParameter.require("original", in: context)
            return try HTTPJSON.response(try await SimulatorError.mapped { try await store.seatTruth(originalTransactionId: original) })
        }
        control.post("subscriptions/:original/refund-seats") { request, context in
            let body = try await HTTPJSON.decode(SeatRefund.self, from: request)
            let original = try PathParameter.require("original", in: context)
            try await SimulatorError.mapped { try await store.refundSeats(originalTransactionId: original, count: body.count) }
            return Response(status: .noContent)
        }
        control.post("subscriptions/:original/consent") { _, context in
            let original = try PathParameter.require("original", in: context)
            try await SimulatorError.mapped { try await store.consentToPriceIncrease(originalTransactionId: original) }
            return Response(status: .noContent)
        }
        control.post("subscriptions/:original/extend") { request, context in
            let body = try await HTTPJSON.decode(Extend.self, from: request)
            let original = try PathParameter.require("original", in: context)
            let result = try await SimulatorError.mapped {
                try await store.extendRenewalDate(originalTransactionId: original, days: body.days)
            }
            return try HTTPJSON.response(
                ExtendResult(
                    originalTransactionId: result.originalTransactionId,
                    webOrderLineItemId: result.webOrderLineItemId,
                    success: result.success,
                    effectiveDate: result.effectiveDate
                )
            )
        }
        control.post("extend-all") { request, _ in
            let body = try await HTTPJSON.decode(ExtendAll.self, from: request)
            let status = try await SimulatorError.mapped {
                try await store.extendRenewalDateForAll(
                    productId: body.productId,
                    days: body.days,
                    requestIdentifier: body.requestIdentifier,
                    storefrontCountryCodes: body.storefrontCountryCodes
                )
            }
            return try HTTPJSON.response(
                MassResult(
                    requestIdentifier: status.requestIdentifier,
                    complete: status.complete,
                    completeDate: status.completeDate,
                    succeededCount: status.succeededCount,
                    failedCount: status.failedCount
                )
            )
        }
        control.get("faults/delivery") { _, _ in try HTTPJSON.response(await store.currentDeliveryFaults) }
        control.post("faults/delivery") { request, _ in
            let faults = try await HTTPJSON.decode(DeliveryFaults.self, from: request)
            await store.setDeliveryFaults(faults)
            return try HTTPJSON.response(faults)
        }
        control.post("faults/apple") { request, _ in
            let settings = try await HTTPJSON.decode(AppleEndpointFaults.Settings.self, from: request)
            guard let faults else {
                throw SimulatorHTTPError(.conflict, code: "no_apple_endpoints", message: "Apple's endpoints are not served")
            }
            faults.settings = settings
            return try HTTPJSON.response(settings)
        }
        control.get("notifications") { _, _ in
            let sent = await store.sentNotifications().map {
                NotificationSummary(
                    notificationUUID: $0.notificationUUID,
                    notificationType: $0.type,
                    subtype: $0.subtype,
                    signedPayload: $0.signedPayload
                )
            }
            return try HTTPJSON.response(sent)
        }
        control.get("consumption") { request, _ in
            // Bodies are JSON objects the Server API already decoded; each is shown as the object it is.
            let filter = request.uri.queryParameters["transactionId"].map(String.init)
            let answers = await store.receivedConsumptionAnswers().filter { filter == nil || $0.transactionId == filter }
            let items: [[String: Any]] = answers.map { answer in
                [
                    "transactionId": answer.transactionId, "endpoint": answer.endpoint.rawValue,
                    "receivedAt": Int64((answer.receivedAt.timeIntervalSince1970 * 1000).rounded()),
                    "body": (try? JSONSerialization.jsonObject(with: answer.body)) ?? String(decoding: answer.body, as: UTF8.self),
                ]
            }
            let data = try JSONSerialization.data(withJSONObject: items, options: [.sortedKeys])
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: .init(bytes: data)))
        }
        control.get("truth") { request, _ in
            let query = request.uri.queryParameters
            let at = query["at"].flatMap { Double(String($0)) }.map { Date(timeIntervalSince1970: $0 / 1000) }
            let truth: GroundTruth
            if let account = query["account"] {
                truth = try await SimulatorError.mapped { try await store.groundTruth(account: String(account), at: at) }
            } else if let token = query["appAccountToken"].flatMap({ UUID(uuidString: String($0)) }) {
                truth = await store.groundTruth(appAccountToken: token, at: at)
            } else {
                throw SimulatorHTTPError(.badRequest, code: "missing_query", message: "pass account= or appAccountToken=")
            }
            let moment: Date
            if let at { moment = at } else { moment = await store.currentDate }
            return try HTTPJSON.response(
                Truth(
                    at: moment,
                    entitlements: truth.entitlements.keys.sorted().map { Truth.Entitlement(productId: $0, until: truth.entitlements[$0] ?? nil) },
                    consumables: truth.consumables,
                    transactionIds: truth.transactions.compactMap(\.transactionId)
                )
            )
        }
    }
}

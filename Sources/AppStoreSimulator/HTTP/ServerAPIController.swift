import AppStoreWire
import Foundation
import Hummingbird
import NIOCore

/// Apple's App Store Server API (reference §5) answered from the simulator's state, behind the same ES256 JWT
/// check Apple makes (401 without a body otherwise), with Apple's error bodies and injectable 5xx / 429.
struct ServerAPIController<Context: RequestContext>: Sendable {
    let store: SimulatedAppStore
    let tokens: ServerAPITokenVerifier
    let faults: AppleEndpointFaults
    static var pageSize: Int { 20 }

    func add(to router: some RouterMethods<Context>) {
        addSeats(to: router.group("groups"))
        let api = router.group("inApps")
        api.get("v1/transactions/:id") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                return try HTTPJSON.response(
                    TransactionInfoResponse(signedTransactionInfo: try await known(id) { try await store.signedTransaction(id) })
                )
            }
        }
        for version in ["v1", "v2"] {
            api.get("\(version)/history/:id") { request, context in
                try await guarded(request) {
                    let id = try PathParameter.require("id", in: context)
                    let query = try historyRequest(request.uri.queryParameters)
                    var history = try await known(id) { try await store.transactionHistory(anyTransactionId: id, request: query) }
                    if version == "v1" { history = history.filter { $0.type != .consumable || $0.revocationDate != nil } }
                    let page = try self.page(history, revision: query.revision)
                    return try HTTPJSON.response(
                        HistoryResponse(
                            revision: page.revision,
                            hasMore: page.hasMore,
                            bundleId: await store.catalog.bundleId,
                            appAppleId: await store.catalog.appAppleId,
                            environment: store.environment,
                            signedTransactions: try await page.items.asyncMap { try await store.signedTransaction($0.transactionId!) }
                        )
                    )
                }
            }
        }
        api.get("v1/subscriptions/:id") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                let statuses = request.uri.queryParameters.getAll("status").compactMap { Int32($0) }.map(SubscriptionStatus.init(rawValue:))
                return try HTTPJSON.response(try await known(id) { try await store.subscriptionStatuses(anyTransactionId: id, statuses: statuses) })
            }
        }
        api.put("v2/transactions/consumption/:id") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                let data = try await HTTPJSON.collect(request)
                let body = try HTTPJSON.decode(ConsumptionRequest.self, from: data)
                guard body.customerConsented else {
                    return try apiError(.badRequest, code: 4_000_035, "customerConsented must be true")
                }
                let transaction = try? await store.transaction(id)
                if let refusal = try ownershipRefusal(transaction) { return refusal }
                // Version 2 takes every product type (late 2026); in April 2026 it refused non-renewing subscriptions
                // with 4000047, which the simulator can still rehearse.
                if transaction?.type == .nonRenewing, await store.consumptionV2RefusesNonRenewing {
                    return try apiError(.badRequest, code: 4_000_047, "Invalid request. The transaction type is not supported.")
                }
                if let percentage = body.consumptionPercentage {
                    if transaction?.type == .autoRenewable {
                        return try apiError(.badRequest, code: 4_000_209, "consumptionPercentage is not allowed for an auto-renewable subscription")
                    }
                    guard (0...100_000).contains(percentage) else {
                        return try apiError(.badRequest, code: 4_000_000, "ConsumptionPercentageOutOfRange: consumptionPercentage is 0-100000")
                    }
                    if body.deliveryStatus != .delivered, percentage != 0 {
                        return try apiError(
                            .badRequest,
                            code: 4_000_000,
                            "UndeliveredConsumptionPercentageNonZero: an undelivered purchase was consumed 0"
                        )
                    }
                    if body.refundPreference == .grantProrated, percentage == 0 || percentage == 100_000 {
                        return try apiError(
                            .badRequest,
                            code: 4_000_000,
                            "ConsumptionPercentageOutOfRange: GRANT_PRORATED needs a share between 0 and 100000"
                        )
                    }
                }
                try await known(id) { try await store.recordConsumptionInformation(transactionId: id, body) }
                await store.logConsumptionAnswer(transactionId: id, endpoint: .v2, body: data)
                return Response(status: .accepted)
            }
        }
        api.put("v1/transactions/consumption/:id") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                let data = try await HTTPJSON.collect(request)
                let body = try HTTPJSON.decode(ConsumptionRequestV1.self, from: data)
                guard body.customerConsented else {
                    return try apiError(.badRequest, code: 4_000_035, "customerConsented must be true")
                }
                if let refusal = try ownershipRefusal(try? await store.transaction(id)) { return refusal }
                let v2 = ConsumptionRequest(
                    customerConsented: true,
                    sampleContentProvided: body.sampleContentProvided,
                    deliveryStatus: body.deliveryStatus == .deliveredAndWorkingProperly ? .delivered : .undeliveredOther
                )
                try await known(id) { try await store.recordConsumptionInformation(transactionId: id, v2) }
                await store.logConsumptionAnswer(transactionId: id, endpoint: .v1, body: data)
                return Response(status: .accepted)
            }
        }
        api.get("v1/lookup/:order") { request, context in
            try await guarded(request) {
                try HTTPJSON.response(try await store.lookUpOrder(try PathParameter.require("order", in: context)))
            }
        }
        api.get("v2/refund/lookup/:id") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                let refunds = try await known(id) { try await store.refundHistory(anyTransactionId: id) }
                let page = try self.page(refunds, revision: request.uri.queryParameters["revision"].map(String.init))
                return try HTTPJSON.response(
                    RefundHistoryResponse(
                        signedTransactions: try await page.items.asyncMap { try await store.signedTransaction($0.transactionId!) },
                        revision: page.revision,
                        hasMore: page.hasMore
                    )
                )
            }
        }
        api.get("v1/refund/lookup/:id") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                let refunds = try await known(id) { try await store.refundHistory(anyTransactionId: id) }
                return try HTTPJSON.response(
                    RefundHistoryResponse(
                        signedTransactions: try await refunds.prefix(50).asyncMap { try await store.signedTransaction($0.transactionId!) }
                    )
                )
            }
        }
        api.put("v1/subscriptions/extend/:id") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                let body = try await HTTPJSON.decode(ExtendRenewalDateRequest.self, from: request)
                guard (1...90).contains(body.extendByDays) else {
                    return try apiError(.badRequest, code: 4_000_009, "extendByDays must be 1–90")
                }
                if (try? await store.transaction(id))?.inAppOwnershipType == .assigned {
                    return try apiError(.forbidden, code: 4_030_028, "an assigned subscription is not eligible for a renewal date extension")
                }
                let result = try await known(id, code: 4_040_005) {
                    try await store.extendRenewalDate(originalTransactionId: id, days: Int(body.extendByDays))
                }
                guard result.success else {
                    return try apiError(.forbidden, code: 4_030_004, "subscription is not eligible for a renewal date extension")
                }
                return try HTTPJSON.response(
                    ExtendRenewalDateResponse(
                        originalTransactionId: result.originalTransactionId,
                        webOrderLineItemId: result.webOrderLineItemId,
                        success: true,
                        effectiveDate: result.effectiveDate
                    )
                )
            }
        }
        api.post("v1/subscriptions/extend/mass") { request, _ in
            try await guarded(request) {
                let body = try await HTTPJSON.decode(MassExtendRenewalDateRequest.self, from: request)
                _ = try await SimulatorError.mapped {
                    try await store.extendRenewalDateForAll(
                        productId: body.productId,
                        days: Int(body.extendByDays),
                        requestIdentifier: body.requestIdentifier,
                        storefrontCountryCodes: body.storefrontCountryCodes
                    )
                }
                return try HTTPJSON.response(MassExtendRenewalDateResponse(requestIdentifier: body.requestIdentifier))
            }
        }
        api.get("v1/subscriptions/extend/mass/:product/:request") { request, context in
            try await guarded(request) {
                let product = try PathParameter.require("product", in: context)
                let id = try PathParameter.require("request", in: context)
                guard let status = await store.massExtensionStatus(productId: product, requestIdentifier: id) else {
                    return try apiError(.notFound, code: 4_040_009, "no renewal date extension request \(id) for \(product)")
                }
                return try HTTPJSON.response(
                    MassExtendRenewalDateStatusResponse(
                        requestIdentifier: status.requestIdentifier,
                        complete: status.complete,
                        completeDate: status.completeDate,
                        succeededCount: status.succeededCount,
                        failedCount: status.failedCount
                    )
                )
            }
        }
        api.post("v1/notifications/test") { request, _ in
            try await guarded(request) {
                guard await store.deliversNotifications else {
                    // Apple's ServerNotificationURLNotFoundError: no URL for the app in this environment.
                    return try apiError(.notFound, code: 4_040_007, "No App Store Server Notifications URL is configured for the app.")
                }
                return try HTTPJSON.response(
                    SendTestNotificationResponse(testNotificationToken: try await store.sendTestNotification())
                )
            }
        }
        api.get("v1/notifications/test/:token") { request, context in
            try await guarded(request) {
                let token = try PathParameter.require("token", in: context)
                do {
                    return try HTTPJSON.response(try await store.testNotificationStatus(token: token))
                } catch is SimulatorError {
                    return try apiError(.notFound, code: 4_040_008, "no test notification for that token")
                }
            }
        }
        api.post("v1/notifications/history") { request, _ in
            try await guarded(request) {
                let body = try await HTTPJSON.decode(NotificationHistoryRequest.self, from: request)
                let items: [NotificationHistoryResponseItem]
                do {
                    items = try await store.notificationHistory(body)
                } catch let error as SimulatorError {
                    return try apiError(.badRequest, code: 4_000_012, error.description)
                }
                let page = try self.page(items, revision: request.uri.queryParameters["paginationToken"].map(String.init))
                return try HTTPJSON.response(
                    NotificationHistoryResponse(paginationToken: page.revision, hasMore: page.hasMore, notificationHistory: page.items)
                )
            }
        }
        api.put("v1/transactions/:id/appAccountToken") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                let body: UpdateAppAccountTokenRequest
                do {
                    body = try await HTTPJSON.decode(UpdateAppAccountTokenRequest.self, from: request)
                } catch {
                    return try apiError(.badRequest, code: 4_000_183, "appAccountToken must be a UUID")
                }
                if let refusal = try ownershipRefusal(try? await store.transaction(id)) { return refusal }
                try await known(id, code: 4_040_005) { try await store.setAppAccountToken(originalTransactionId: id, token: body.appAccountToken) }
                return Response(status: .ok)
            }
        }
        api.get("v1/transactions/appTransactions/:id") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                return try HTTPJSON.response(
                    AppTransactionInfoResponse(
                        signedAppTransactionInfo: try await known(id, code: 4_040_019) {
                            try await store.signedAppTransaction(anyTransactionId: id)
                        }
                    )
                )
            }
        }
        api.post("v1/transactions/:id/finish") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                try await known(id) { try await store.finishTransaction(id) }
                return Response(status: .ok)
            }
        }
    }

    /// The JWT check and injected faults, in front of every endpoint.
    func guarded(_ request: Request, _ body: () async throws -> Response) async throws -> Response {
        do {
            // Clients sign with their own (real) clocks, whatever the simulated date is.
            try tokens.verify(authorization: request.headers[.authorization], now: Date())
        } catch {
            // Apple answers a bad token with a bare 401.
            return Response(status: .unauthorized)
        }
        switch faults.takeAPIFault() {
        case .serverError:
            return try apiError(.internalServerError, code: 5_000_001, "An unknown retryable error occurred.")
        case .rateLimited(let seconds):
            // Clients wait in real time, so Retry-After is real time too, not the simulated clock.
            let retryAt = Int64((Date().timeIntervalSince1970 + Double(seconds)) * 1000)
            var response = try apiError(.tooManyRequests, code: 4_290_000, "Rate limit exceeded.")
            response.headers[.retryAfter] = String(retryAt)
            return response
        case nil:
            return try await body()
        }
    }

    /// Runs `body`, answering an unknown id with Apple's not-found error.
    func known<T>(_ id: String, code: Int32 = 4_040_010, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch SimulatorError.unknownTransaction {
            throw AppleAPIError(status: .notFound, code: code, message: "Transaction id \(id) not found.")
        } catch let error as SimulatorError {
            throw AppleAPIError(status: .badRequest, code: 4_000_000, message: error.description)
        }
    }

    /// Apple's seat endpoints (API 1.23): `/groups/v1/transactions/{originalTransactionId}/seats…`.
    func addSeats(to groups: some RouterMethods<Context>) {
        groups.get("v1/transactions/:id/seats") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                return try HTTPJSON.response(try await seats(id) { try await store.seatInfo(originalTransactionId: id) })
            }
        }
        groups.post("v1/transactions/:id/seats") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                let body = try await HTTPJSON.decode(ClaimSeatRequest.self, from: request)
                guard !body.requestIdentifier.isEmpty, body.requestIdentifier.utf8.count <= 128 else {
                    return try apiError(.badRequest, code: 4_000_008, "Invalid request identifier.")
                }
                let claim = try await seats(id) {
                    try await store.claimSeat(
                        originalTransactionId: id,
                        requestIdentifier: body.requestIdentifier,
                        appTransactionId: body.appTransactionId
                    )
                }
                return try HTTPJSON.response(ClaimSeatResponse(seatClaimId: claim))
            }
        }
        groups.delete("v1/transactions/:id/seats/:claim") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                let claim = try PathParameter.require("claim", in: context)
                try await seats(id) { try await store.unclaimSeat(originalTransactionId: id, seatClaimId: claim) }
                return Response(status: .ok)
            }
        }
        groups.post("v1/transactions/:id/seats/:claim/associate") { request, context in
            try await guarded(request) {
                let id = try PathParameter.require("id", in: context)
                let claim = try PathParameter.require("claim", in: context)
                let body = try await HTTPJSON.decode(AssociateSeatRequest.self, from: request)
                try await seats(id) {
                    try await store.associateSeat(originalTransactionId: id, seatClaimId: claim, appTransactionId: body.appTransactionId)
                }
                return Response(status: .ok)
            }
        }
    }

    /// Runs a seat operation, answering its refusals as Apple's errors (numbers provisional: see ``APIErrorCode``).
    func seats<T>(_ id: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as SeatError {
            switch error {
            case .unknownTransaction:
                throw AppleAPIError(status: .notFound, code: 4_040_010, message: "Transaction id \(id) not found.")
            case .notDeveloperManaged:
                throw AppleAPIError(status: .badRequest, code: 4_000_301, message: "TransactionNotDevManagedGroupError")
            case .noAvailableSeats:
                throw AppleAPIError(status: .conflict, code: 4_090_101, message: "NoAvailableSeatsError")
            case .seatClaimNotFound:
                throw AppleAPIError(status: .notFound, code: 4_040_101, message: "SeatClaimIdNotFoundError")
            case .appTransactionNotFound:
                throw AppleAPIError(status: .notFound, code: 4_040_102, message: "AppTransactionIdNotFoundError")
            }
        }
    }

    /// Apple's refusal of consumption information and Set App Account Token for a transaction the customer did not buy:
    /// assigned by an organization (4000227) or shared by a family member (4000185).
    func ownershipRefusal(_ transaction: JWSTransactionDecodedPayload?) throws -> Response? {
        switch transaction?.inAppOwnershipType {
        case .assigned?: try apiError(.badRequest, code: 4_000_227, "Invalid request. Assigned transactions are not supported.")
        case .familyShared?: try apiError(.badRequest, code: 4_000_185, "Invalid request. Family transactions are not supported.")
        default: nil
        }
    }

    func apiError(_ status: HTTPResponse.Status, code: Int32, _ message: String) throws -> Response {
        try HTTPJSON.response(APIErrorBody(errorCode: APIErrorCode(rawValue: code), errorMessage: message), status: status)
    }

    func historyRequest(_ query: Parameters) throws -> TransactionHistoryRequest {
        func dates(_ name: String) -> Date? {
            query[Substring(name)].flatMap { Double(String($0)) }.map { Date(timeIntervalSince1970: $0 / 1000) }
        }
        let productTypes: [TransactionHistoryProductType] = query.getAll("productType").map {
            TransactionHistoryProductType(rawValue: $0)
        }
        let ownership: InAppOwnershipType? = query["inAppOwnershipType"].map { InAppOwnershipType(rawValue: String($0)) }
        let sort: TransactionHistorySort? = query["sort"].map { TransactionHistorySort(rawValue: String($0)) }
        var revoked: Bool?
        if let text = query["revoked"] {
            // Apple's Python client sends `True`/`False`; any letter case is a Boolean, anything else is refused.
            guard let value = QueryBoolean.parse(text) else {
                throw AppleAPIError(status: .badRequest, code: 4_000_030, message: "Invalid request. The revoked parameter is invalid.")
            }
            revoked = value
        }
        return TransactionHistoryRequest(
            revision: query["revision"].map(String.init),
            startDate: dates("startDate"),
            endDate: dates("endDate"),
            productIds: query.getAll("productId"),
            productTypes: productTypes,
            subscriptionGroupIdentifiers: query.getAll("subscriptionGroupIdentifier"),
            inAppOwnershipType: ownership,
            sort: sort,
            revoked: revoked
        )
    }

    /// Pages of 20; the revision (or pagination token) is the offset of the next page.
    func page<T>(_ items: [T], revision: String?) throws -> (items: [T], revision: String?, hasMore: Bool) {
        var offset = 0
        if let revision {
            guard let decoded = Data(base64Encoded: revision).flatMap({ String(data: $0, encoding: .utf8) }),
                decoded.hasPrefix("o:"), let value = Int(decoded.dropFirst(2)), value >= 0, value <= items.count
            else { throw AppleAPIError(status: .badRequest, code: 4_000_005, message: "Invalid request revision.") }
            offset = value
        }
        let end = min(items.count, offset + Self.pageSize)
        let next = Data("o:\(end)".utf8).base64EncodedString()
        return (Array(items[offset..<end]), next, end < items.count)
    }
}

/// An App Store Server API error with Apple's body `{"errorCode": …, "errorMessage": …}`.
struct AppleAPIError: HTTPResponseError {
    let status: HTTPResponse.Status
    let code: Int32
    let message: String

    func response(from request: Request, context: some RequestContext) throws -> Response {
        try HTTPJSON.response(APIErrorBody(errorCode: APIErrorCode(rawValue: code), errorMessage: message), status: status)
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}

import AppStoreWire
import Crypto
import Foundation
import Hummingbird
import Logging
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLedger
import StorekeeperServerAPI
import StorekeeperStorage

/// The client API under `/v1`: guests, orders, purchases, restore, the caller's own account, wallet spending,
/// introductory-offer eligibility and subscription offer signatures. A caller only ever sees their own user.
extension APIHandler {
    /// `POST /v1/guests`: a new guest and its credential, which the app keeps in the Keychain and sends as
    /// `X-Storekeeper-Guest` (App Review buys without signing in). Nothing to authenticate yet: that is its purpose.
    func createGuest(_ input: Operations.CreateGuest.Input) async throws -> Operations.CreateGuest.Output {
        guard auth.allowGuests else {
            throw StorekeeperError(.notPermitted, code: "guests_disabled", message: "sign in first: guest purchases are off")
        }
        if let guestLimiter { try guestLimiter.take(try RequestScope.current().clientAddress ?? "unknown") }
        let issued = try await ledger.issueGuest()
        return .created(
            .init(body: .json(.init(userId: issued.user.rawValue, guestId: issued.user.guestId ?? "", token: issued.token)))
        )
    }

    /// `POST /v1/guests/claim {deviceId, signedTransactions}`: a guest from before credentials (keyed by a device
    /// id the client chose) gets a credential once, on proof that Apple signed a transaction bound to it.
    func claimLegacyGuest(_ input: Operations.ClaimLegacyGuest.Input) async throws -> Operations.ClaimLegacyGuest.Output {
        let context = try RequestScope.current()
        guard auth.allowGuests, allowLegacyGuestClaims else {
            throw StorekeeperError(.notPermitted, code: "claims_disabled", message: "legacy guest claims are off on this server")
        }
        let body =
            switch input.body {
            case .json(let value): value
            }
        guard let guest = UserID.guest(id: try InputText.check(body.deviceId, field: "deviceId", maxBytes: 128)) else {
            throw StorekeeperError.invalidInput("invalid_device_id", "deviceId must be 8-128 printable characters")
        }
        guard (1...50).contains(body.signedTransactions.count) else {
            throw StorekeeperError.invalidInput(
                "proof_required",
                "send 1-50 signedTransactions of this device's StoreKit history as proof"
            )
        }
        var originals = Set<String>()
        for jws in body.signedTransactions {
            // Only what Apple signed proves anything; a transaction that fails verification is simply no proof.
            if let transaction = try? await purchases.verify(jws, source: .restore) { originals.insert(transaction.originalTransactionId) }
        }
        switch try await ledger.claimLegacyGuest(guest, originalTransactionIds: originals) {
        case .issued(let issued):
            context.logger.notice("legacy guest claimed", metadata: ["user": "\(guest)"])
            return .created(
                .init(body: .json(.init(userId: issued.user.rawValue, guestId: issued.user.guestId ?? "", token: issued.token)))
            )
        case .alreadyClaimed:
            throw StorekeeperError(.conflict, code: "already_claimed", message: "this guest has a credential already")
        case .notProved:
            throw StorekeeperError(
                .notPermitted,
                code: "claim_not_proved",
                message: "none of these Apple-signed transactions belongs to this guest"
            )
        }
    }

    func createOrder(_ input: Operations.CreateOrder.Input) async throws -> Operations.CreateOrder.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let body =
            switch input.body {
            case .json(let value): value
            }
        try InputText.check(body.productId, field: "productId")
        try InputText.check(body.bundleId, field: "bundleId")
        guard let product = catalog.catalog.product(body.productId) else {
            throw StorekeeperError(.notFound, code: "unknown_product", message: "product \(body.productId) is not in the catalog")
        }
        guard product.onSale else {
            throw StorekeeperError(.conflict, code: "product_not_for_sale", message: "product \(product.id) is not on sale")
        }
        // The product's store decides how the app is named: a Play order carries the package name, as Google's
        // purchases do, so the transaction and the order match.
        let orderApp: String
        switch product.store {
        case .appStore:
            guard let app = apps.app(named: body.bundleId) else {
                throw StorekeeperError.invalidInput("unknown_app", "bundleId is not an app this server serves")
            }
            orderApp = app.configuration.bundleId
        case .googlePlay:
            let app = body.bundleId.map { apps.app(packageName: $0) ?? apps.app(bundleId: $0) } ?? apps.app(named: nil)
            guard let app else { throw StorekeeperError.invalidInput("unknown_app", "bundleId is not an app this server serves") }
            guard let play = app.googlePlay else {
                throw StorekeeperError(
                    .conflict,
                    code: "wrong_store",
                    message: "product \(product.id) is sold on Google Play, which this app does not sell on"
                )
            }
            orderApp = play.configuration.packageName
        }
        if product.hasIntroductoryOffer, let group = product.subscriptionGroup,
            try await accounts.hadIntroductoryOffer(user, group: group)
        {
            throw StorekeeperError(
                .conflict,
                code: "introductory_offer_not_eligible",
                message: "this user already had an introductory offer in group \(group); sell the variant without one",
                details: product.introductoryOfferFreeVariant.map { ["alternativeProductId": $0] }
            )
        }
        let now = Date()
        let order = Order(
            id: "ord_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""),
            user: user,
            bundleId: orderApp,
            productId: product.id,
            appAccountToken: UUID(),
            status: .created,
            createdAt: now,
            expiresAt: now.addingTimeInterval(Double(orderLifetime.components.seconds)),
            transactionId: nil
        )
        try await ledger.createOrder(order)
        metrics.order("created")
        return .created(.init(body: .json(try .init(order, now: now))))
    }

    func getOrder(_ input: Operations.GetOrder.Input) async throws -> Operations.GetOrder.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let id = try InputText.check(input.path.id, field: "orderId")
        // Another user's order is indistinguishable from a missing one.
        guard let order = try await orders.find(id), order.user == user else {
            throw StorekeeperError.notFound("unknown_order", "no order \(id) for this user")
        }
        return .ok(.init(body: .json(try .init(order, now: Date()))))
    }

    func cancelOrder(_ input: Operations.CancelOrder.Input) async throws -> Operations.CancelOrder.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let id = try InputText.check(input.path.id, field: "orderId")
        if try await ledger.cancelOrder(id, user: user) { metrics.order("cancelled") }
        guard let order = try await orders.find(id, of: user) else {
            throw StorekeeperError.notFound("unknown_order", "no order \(id) for this user")
        }
        return .ok(.init(body: .json(try .init(order, now: Date()))))
    }

    func submitPurchase(_ input: Operations.SubmitPurchase.Input) async throws -> Operations.SubmitPurchase.Output {
        let path =
            switch input.body {
            case .json(let value):
                value.store == .googlePlay ? "google_play" : value.signedTransaction == nil ? "receipt" : "signed_transaction"
            }
        return try await countedSubmission(path) {
            try await submitPurchaseOnce(input)
        } outcome: { output in
            switch output {
            case .ok(let ok): (try? ok.body.json.outcome.rawValue) ?? "delivered"
            case .accepted: "parked"
            default: "other"
            }
        }
    }

    /// Counts a purchase submission under its path and outcome (`delivered`, `parked`, `retry`, `rejected`).
    private func countedSubmission<T>(
        _ path: String,
        _ body: () async throws -> T,
        outcome: (T) -> String
    ) async throws -> T {
        do {
            let result = try await body()
            metrics.submission(path: path, outcome: outcome(result))
            return result
        } catch let failure as any StorekeeperFailure {
            let error = failure.apiError
            let retry = error.outcome == .retry || (error.outcome == nil && [.unavailable, .internal].contains(error.kind))
            metrics.submission(path: path, outcome: retry ? "retry" : "rejected")
            throw error
        } catch {
            metrics.submission(path: path, outcome: "retry")
            throw error
        }
    }

    private func submitPurchaseOnce(_ input: Operations.SubmitPurchase.Input) async throws -> Operations.SubmitPurchase.Output {
        let identity = try RequestScope.current().client()
        let body =
            switch input.body {
            case .json(let value): value
            }
        if body.store == .googlePlay { return try await submitPlayPurchase(body, identity: identity) }
        // A malformed field never becomes valid by retrying: final (the transaction stays in StoreKit's history).
        do {
            try InputText.check(body.orderId, field: "orderId")
            try InputText.check(body.transactionId, field: "transactionId", maxBytes: 64)
            try InputText.check(body.bundleId, field: "bundleId")
        } catch let failure as any StorekeeperFailure {
            let error = failure.apiError
            throw StorekeeperError(error.kind, code: error.code, message: error.message, outcome: .rejected)
        }
        if let jws = body.signedTransaction {
            guard body.receipt == nil else {
                throw StorekeeperError.invalidInput("ambiguous_purchase", "send signedTransaction or receipt, not both")
            }
            switch try await purchases.submitSignedTransaction(jws, orderId: body.orderId, identity: identity) {
            case .delivered(let delivery):
                metrics.riskFlags(delivery.riskFlags)
                return .ok(.init(body: .json(.init(outcome: .delivered, delivery: try .init(delivery)))))
            case .parked(let id):
                return .accepted(
                    .init(
                        body: .json(
                            .init(
                                outcome: .retry,
                                code: "unattributed",
                                message: "transaction \(id) is verified but names no user: sign in and submit again; support can also assign it"
                            )
                        )
                    )
                )
            case .ownedByAnotherUser:
                throw StorekeeperError.rejected(.conflict, "owned_by_another_user", "the transaction belongs to another user")
            }
        }
        guard let receipt = body.receipt else {
            throw StorekeeperError.invalidInput("missing_purchase", "send signedTransaction (StoreKit 2) or receipt (legacy)")
        }
        let results = try await purchases.submitReceipt(
            receipt,
            transactionId: body.transactionId,
            orderId: body.orderId,
            bundleId: body.bundleId,
            identity: identity
        )
        return .ok(.init(body: .json(try answer(results, focus: body.transactionId))))
    }

    /// A Google Play purchase: confirmed with the Play Developer API, delivered once, then acknowledged.
    private func submitPlayPurchase(
        _ body: Components.Schemas.SubmitPurchaseRequest,
        identity: ClientIdentity
    ) async throws -> Operations.SubmitPurchase.Output {
        let packageName: String
        let productId: String
        let token: String
        do {
            guard body.signedTransaction == nil, body.receipt == nil else {
                throw StorekeeperError.invalidInput("ambiguous_purchase", "a Google Play purchase has no signedTransaction or receipt")
            }
            guard let name = try InputText.check(body.packageName, field: "packageName"),
                let product = try InputText.check(body.productId, field: "productId"),
                let purchaseToken = body.purchaseToken
            else {
                throw StorekeeperError.invalidInput("missing_purchase", "send packageName, productId and purchaseToken")
            }
            try InputText.check(body.orderId, field: "orderId")
            (packageName, productId, token) = (name, product, purchaseToken)
        } catch let failure as any StorekeeperFailure {
            let error = failure.apiError
            throw StorekeeperError(error.kind, code: error.code, message: error.message, outcome: .rejected)
        }
        guard let playPurchases else {
            throw PurchaseRefusal.wrongApp("no app of this server sells on Google Play")
        }
        switch try await playPurchases.submit(
            packageName: packageName,
            productId: productId,
            purchaseToken: token,
            orderId: body.orderId,
            identity: identity
        ) {
        case .delivered(let delivery):
            metrics.riskFlags(delivery.riskFlags)
            return .ok(.init(body: .json(.init(outcome: .delivered, delivery: try .init(delivery)))))
        case .parked(let id):
            return .accepted(
                .init(
                    body: .json(
                        .init(
                            outcome: .retry,
                            code: "unattributed",
                            message: "purchase \(id) is verified but names no user: sign in and submit again; support can also assign it"
                        )
                    )
                )
            )
        case .ownedByAnotherUser:
            throw StorekeeperError.rejected(.conflict, "owned_by_another_user", "the purchase belongs to another user")
        }
    }

    func restorePurchases(_ input: Operations.RestorePurchases.Input) async throws -> Operations.RestorePurchases.Output {
        let identity = try RequestScope.current().client()
        let body =
            switch input.body {
            case .json(let value): value
            }
        guard body.signedTransactions.count <= 500 else {
            throw StorekeeperError.invalidInput("too_many_transactions", "restore at most 500 transactions per request")
        }
        return try await countedSubmission("restore") {
            let results = try await purchases.restore(body.signedTransactions, identity: identity)
            return Operations.RestorePurchases.Output.ok(.init(body: .json(try answer(results, focus: nil))))
        } outcome: { output in
            switch output {
            case .ok(let ok): (try? ok.body.json.outcome.rawValue) ?? "delivered"
            default: "other"
            }
        }
    }

    /// One answer for many items: the focused transaction's outcome, or `retry` if any item should be retried.
    private func answer(_ results: [PurchaseService.ItemResult], focus: String?) throws -> Components.Schemas.PurchaseAnswer {
        var deliveries: [Components.Schemas.Delivery] = []
        var problems: [Components.Schemas.ItemProblem] = []
        var outcome = Components.Schemas.PurchaseAnswer.OutcomePayload.delivered
        var focusProblem: StorekeeperError?
        for result in results {
            switch result {
            case .delivered(let delivery):
                metrics.riskFlags(delivery.riskFlags)
                deliveries.append(try .init(delivery))
            case .refused(let id, let error):
                metrics.refused(code: error.code)
                problems.append(
                    .init(
                        transactionId: id,
                        code: error.code,
                        message: error.message,
                        outcome: try error.outcome.map { try documented($0.rawValue) }
                    )
                )
                if error.outcome == .retry && focus == nil { outcome = .retry }
                if let focus, id == focus { focusProblem = error }
            }
        }
        if let focusProblem {
            outcome = try documented(focusProblem.outcome?.rawValue ?? "rejected")
        } else if focus == nil, deliveries.isEmpty, !problems.isEmpty, outcome != .retry {
            // Nothing was delivered and nothing is worth retrying.
            outcome = .rejected
        }
        return .init(
            outcome: outcome,
            code: focusProblem?.code,
            message: focusProblem?.message,
            deliveries: deliveries,
            problems: problems.isEmpty ? nil : problems
        )
    }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let (user, _) = try RequestScope.current().clientUser()
        return .ok(.init(body: .json(try await userState(user, at: try Self.moment(input.query.at)))))
    }

    func mergeGuest(_ input: Operations.MergeGuest.Input) async throws -> Operations.MergeGuest.Output {
        let (user, identity) = try RequestScope.current().clientUser()
        guard identity.method == "token" || identity.method.hasPrefix("apiKey:"), !user.isGuest else {
            throw StorekeeperError(.notPermitted, code: "account_required", message: "merging needs a signed-in user")
        }
        let body =
            switch input.body {
            case .json(let value): value
            }
        // Proof of possession: the guest's own credential, never its id.
        guard let token = body.guestToken else {
            throw StorekeeperError.invalidInput(
                "guest_token_required",
                "send the guest's credential as guestToken (a device or guest id proves nothing)"
            )
        }
        guard let guest = try await guests.verify(try InputText.check(token, field: "guestToken", maxBytes: 300)) else {
            throw StorekeeperError(.notPermitted, code: "invalid_guest_token", message: "guestToken is not a credential this server issued")
        }
        let summary = try await ledger.mergeGuest(guest, into: user)
        return .ok(
            .init(
                body: .json(
                    .init(
                        userId: user.rawValue,
                        mergedGuest: guest.rawValue,
                        transactions: summary.transactions,
                        entitlements: summary.entitlements,
                        orders: summary.orders,
                        coins: summary.coins
                    )
                )
            )
        )
    }

    func spendCoins(_ input: Operations.SpendCoins.Input) async throws -> Operations.SpendCoins.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let body =
            switch input.body {
            case .json(let value): value
            }
        guard (1...WalletLimits.maximumAmount).contains(body.amount) else {
            throw StorekeeperError.invalidInput("invalid_amount", "amount must be 1-\(WalletLimits.maximumAmount)")
        }
        try InputText.check(body.idempotencyKey, field: "idempotencyKey")
        try InputText.check(body.reason, field: "reason", maxBytes: 500)
        let currency = try InputText.check(body.currency ?? "coins", field: "currency", maxBytes: 32)
        switch try await ledger.spend(
            user: user,
            currency: currency,
            amount: body.amount,
            idempotencyKey: body.idempotencyKey,
            reason: body.reason
        )
        {
        case .applied(let balance):
            return .ok(.init(body: .json(.init(currency: currency, balance: balance, repeated: false))))
        case .duplicate(let balance):
            return .ok(.init(body: .json(.init(currency: currency, balance: balance, repeated: true))))
        case .insufficientFunds(let balance):
            throw StorekeeperError(
                .conflict,
                code: "insufficient_funds",
                message: "balance \(balance) is less than \(body.amount)",
                details: ["balance": String(balance)]
            )
        }
    }

    func getEligibility(_ input: Operations.GetEligibility.Input) async throws -> Operations.GetEligibility.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let current = catalog.catalog
        var groups: Components.Schemas.Eligibility.GroupsPayload = []
        for group in current.subscriptionGroups {
            let used = try await accounts.hadIntroductoryOffer(user, group: group)
            let products = current.products.filter { $0.subscriptionGroup == group }.map { product in
                Components.Schemas.Eligibility.GroupsPayloadPayload.ProductsPayloadPayload(
                    productId: product.id,
                    hasIntroductoryOffer: product.hasIntroductoryOffer,
                    sellInstead: used && product.hasIntroductoryOffer ? product.introductoryOfferFreeVariant : nil
                )
            }
            groups.append(.init(subscriptionGroup: group, introductoryOfferEligible: !used, products: products))
        }
        return .ok(.init(body: .json(.init(userId: user.rawValue, groups: groups))))
    }

    /// `GET /v1/catalog`: the products on sale and, per subscription group, the packages this caller is sold (the
    /// variant without an introductory offer when they had one, their campaign variant's offer), tagged with a hash
    /// of the answer so an unchanged catalog costs the app a 304.
    func getCatalog(_ input: Operations.GetCatalog.Input) async throws -> Operations.GetCatalog.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let known = try InputText.check(input.headers.ifNoneMatch, field: "ifNoneMatch", maxBytes: 1024)
        let current = catalog.catalog
        let history = try await accounts.subscriptionHistory(user)
        let sold = current.customerCatalog(
            for: user.rawValue,
            subscribed: history.subscribed,
            hadIntroductoryOffer: history.hadIntroductoryOffer,
            store: input.query.store.flatMap { Store(apiName: $0.rawValue) } ?? .appStore
        )
        let body = Components.Schemas.ClientCatalog(
            userId: user.rawValue,
            products: sold.products.map { product in
                .init(
                    id: product.id,
                    kind: Components.Schemas.ProductKind(rawValue: product.kind.rawValue) ?? .consumable,
                    entitlement: product.entitlement,
                    coins: product.coins,
                    duration: product.duration?.description,
                    subscriptionGroup: product.subscriptionGroup,
                    level: product.level,
                    hasIntroductoryOffer: product.hasIntroductoryOffer
                )
            },
            offerings: sold.offerings.map { offering in
                .init(
                    id: offering.group,
                    introductoryOfferEligible: offering.introductoryOfferEligible,
                    packages: offering.packages.map { package in
                        .init(
                            id: package.id,
                            productId: package.productId,
                            offer: package.offer.map { .init(campaignId: $0.campaignId, variant: $0.variant, offerId: $0.offerId) }
                        )
                    }
                )
            }
        )
        let tag = try Self.entityTag(of: body)
        if let known, Self.entityTags(in: known).contains(where: { $0 == tag || $0 == "*" }) {
            return .notModified(.init(headers: .init(eTag: tag)))
        }
        return .ok(.init(headers: .init(eTag: tag, cacheControl: "private, no-cache"), body: .json(body)))
    }

    /// A strong tag: the SHA-256 of the answer's canonical JSON (sorted keys), so equal answers have equal tags in
    /// every process.
    static func entityTag(of catalog: Components.Schemas.ClientCatalog) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return "\"" + Base64URL.encode(Array(SHA256.hash(data: try encoder.encode(catalog)))) + "\""
    }

    /// The tags an `If-None-Match` lists (`"a", W/"b"`): a weak tag compares by its opaque part (RFC 9110 §13.1.2).
    static func entityTags(in header: String) -> [String] {
        header.split(separator: ",").map { item in
            var tag = item.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag
        }
    }

    func signOffer(_ input: Operations.SignOffer.Input) async throws -> Operations.SignOffer.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let body =
            switch input.body {
            case .json(let value): value
            }
        try InputText.check(body.productId, field: "productId")
        try InputText.check(body.offerId, field: "offerId")
        try InputText.check(body.appAccountToken, field: "appAccountToken", maxBytes: 64)
        try InputText.check(body.transactionId, field: "transactionId", maxBytes: 64)
        let current = catalog.catalog
        guard let product = current.product(body.productId), product.kind == ProductKind.autoRenewable else {
            throw StorekeeperError.notFound("unknown_product", "\(body.productId) is not an auto-renewable product in the catalog")
        }
        guard let campaign = current.campaignGranting(offerId: body.offerId, productId: product.id, to: user.rawValue) else {
            throw StorekeeperError(
                .notPermitted,
                code: "offer_not_granted",
                message: "no running campaign grants offer \(body.offerId) to this user"
            )
        }
        try InputText.check(body.bundleId, field: "bundleId")
        // The app the offer is for signs it (its key, and for v1 its bundle id in the signed text): the one the
        // caller names, or the only one. Another app's signature would be refused by the App Store.
        guard let app = apps.app(named: body.bundleId) else {
            throw StorekeeperError.invalidInput("unknown_app", "bundleId must name an app this server serves (required when it serves several)")
        }
        let variant = campaign.variant(for: user.rawValue).name
        let version = body.version ?? .v2
        switch version {
        case .v1 where app.offerSignerV1 == nil, .v2 where app.requestSigner == nil:
            throw StorekeeperError(
                .conflict,
                code: "offer_signing_unavailable",
                message: "no In-App Purchase key (and issuer, for v2) is configured"
            )
        case .v1, .v2: break
        }
        var nonce = UUID()
        var recorded = false
        for _ in 0..<3 where !recorded {
            recorded = try await ledger.recordOfferNonce(
                nonce,
                user: user,
                productId: product.id,
                offerId: body.offerId,
                campaignId: campaign.id
            )
            if !recorded { nonce = UUID() }
        }
        guard recorded else { throw StorekeeperError(.internal, code: "nonce_collision", message: "could not record a fresh nonce") }
        let answer: Components.Schemas.OfferSignatureAnswer
        switch version {
        case .v1:
            guard let signer = app.offerSignerV1 else {
                throw StorekeeperError(.conflict, code: "offer_signing_unavailable", message: "no In-App Purchase key is configured")
            }
            let signature = try signer.sign(
                productId: product.id,
                offerId: body.offerId,
                appAccountToken: body.appAccountToken ?? "",
                nonce: nonce
            )
            answer = .init(
                version: .v1,
                productId: product.id,
                offerId: body.offerId,
                campaignId: campaign.id,
                variant: variant,
                keyIdentifier: signature.keyIdentifier,
                nonce: signature.nonce.uuidString.lowercased(),
                timestamp: signature.timestamp,
                signature: signature.signature
            )
        case .v2:
            guard let signer = app.requestSigner else {
                throw StorekeeperError(
                    .conflict,
                    code: "offer_signing_unavailable",
                    message: "no In-App Purchase key and issuer are configured"
                )
            }
            let jws = try signer.promotionalOfferV2(
                productId: product.id,
                offerIdentifier: body.offerId,
                transactionId: body.transactionId,
                nonce: nonce
            )
            answer = .init(
                version: .v2,
                productId: product.id,
                offerId: body.offerId,
                campaignId: campaign.id,
                variant: variant,
                keyIdentifier: signer.keyIdentifier,
                nonce: nonce.uuidString.lowercased(),
                timestamp: nil,
                signature: jws
            )
        }
        return .ok(.init(body: .json(answer)))
    }
}

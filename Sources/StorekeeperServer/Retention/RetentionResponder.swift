import AppStoreWire
import Foundation
import StorekeeperCore
import StorekeeperStorage

/// Answers Apple's realtime retention requests (Retention Messaging's Get Retention Message): verifies the signed
/// request like any signed data from Apple (chain, signature, environment, app), reads the subscriber's history,
/// and picks the first matching rule's answer — a message, another product of the group, or a promotional offer
/// signed with the app's In-App Purchase key (V2, bound to the subscription's original transaction).
///
/// A request signed more than ``freshness`` ago is refused as stale, and each request id is answered once (claimed in
/// the database, so every server process agrees): a captured request replayed gets no second freshly signed offer.
/// Otherwise nothing is written on the way: the answer is recorded afterwards (``RetentionRecorder``), so the request
/// costs one verification (the chain is cached after the first), the claim, three indexed reads and at most one
/// signature.
struct RetentionResponder: Sendable {
    /// What was decided for one request.
    struct Decision: Sendable {
        var request: DecodedRealtimeRequestBody
        var app: AppRegistry.App
        var rule: RetentionRule?
        var history: RetentionHistory
        var body: RealtimeResponseBody?
    }

    let apps: AppRegistry
    let rules: [RetentionRule]
    let catalog: @Sendable () -> Catalog
    let store: RetentionStore
    /// Claims a request id (signed at the date given); `false` when it was answered before.
    let claim: @Sendable (_ requestId: String, _ signedAt: Date) async throws -> Bool

    /// How old a signed request may be when it arrives.
    static let freshness: TimeInterval = 300

    /// The app a request names by its (not yet verified) `appAppleId`; the only app when there is one.
    func app(for signedPayload: String) throws -> AppRegistry.App {
        let claimed = (try? SignedDataVerifier.decodeUnverifiedPayload(signedPayload, as: DecodedRealtimeRequestBody.self))?.appAppleId
        if let claimed, let app = apps.apps.first(where: { $0.configuration.appAppleId == claimed }) { return app }
        if apps.apps.count == 1 { return apps.apps[0] }
        throw InboundRefusal.wrongApp("the retention request is for an app this server does not serve")
    }

    func answer(signedPayload: String) async throws -> Decision {
        let app = try app(for: signedPayload)
        let request: DecodedRealtimeRequestBody
        do {
            request = try await app.verifier.verifyRealtimeRequest(signedPayload)
        } catch {
            throw InboundRefusal.unverified(code: error.code, message: error.message, what: "retention request")
        }
        // Apple: always check the app, in every environment (the verifier checks it in Production only).
        if let expected = app.configuration.appAppleId, let claimed = request.appAppleId, claimed != expected {
            throw InboundRefusal.wrongApp("the retention request names appAppleId \(claimed), not \(expected)")
        }
        guard let original = request.originalTransactionId, !original.isEmpty, original.utf8.count <= 64,
            let productId = request.productId, !productId.isEmpty, productId.utf8.count <= 200
        else { throw InboundRefusal.missingFields("the retention request names no subscription or product") }
        guard let signedAt = request.signedDate, signedAt >= Date().addingTimeInterval(-Self.freshness) else {
            throw InboundRefusal.stale("the retention request was signed more than 5 minutes ago")
        }
        // Apple names each request; without a name, the signed payload itself is the request.
        let requestId = request.requestIdentifier.map { String($0.prefix(128)) } ?? "payload:" + ClientIdentity.digest(signedPayload)
        guard try await claim(requestId, signedAt) else {
            throw InboundRefusal.replayed("this retention request was answered before")
        }
        let locale = String((request.userLocale ?? "").prefix(35))
        let history = try await store.history(originalTransactionId: original)
        var decision = Decision(request: request, app: app, rule: nil, history: history, body: nil)
        let catalog = catalog()
        for rule in rules where rule.matches(productId: productId, locale: locale, history: history) {
            guard let body = try body(for: rule.answer, productId: productId, original: original, app: app, catalog: catalog) else { continue }
            decision.rule = rule
            decision.body = body
            break
        }
        return decision
    }

    /// The answer's body, or nil when this server cannot give it (no signing key; a product outside the group).
    private func body(
        for answer: RetentionRule.Answer,
        productId: String,
        original: String,
        app: AppRegistry.App,
        catalog: Catalog
    ) throws -> RealtimeResponseBody? {
        switch answer {
        case .message(let id):
            return RealtimeResponseBody(message: RetentionMessage(messageIdentifier: id.lowercased()))
        case .alternateProduct(let id, let alternate, let plan):
            guard alternate != productId else { return nil }
            if let current = catalog.product(productId)?.subscriptionGroup, let other = catalog.product(alternate)?.subscriptionGroup,
                current != other
            {
                return nil
            }
            return RealtimeResponseBody(
                alternateProduct: AlternateProduct(
                    messageIdentifier: id.lowercased(),
                    productId: alternate,
                    billingPlanType: plan.map(BillingPlanType.init(rawValue:))
                )
            )
        case .promotionalOffer(let id, let offerId):
            guard let signer = app.requestSigner else { return nil }
            let jws = try signer.promotionalOfferV2(productId: productId, offerIdentifier: offerId, transactionId: original)
            return RealtimeResponseBody(
                promotionalOffer: RetentionPromotionalOffer(messageIdentifier: id.lowercased(), promotionalOfferSignatureV2: jws)
            )
        }
    }
}

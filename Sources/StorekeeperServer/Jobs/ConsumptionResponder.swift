import AppStoreWire
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Answers Apple's refund questions (seed 003) from Storekeeper's own records with Send Consumption Information,
/// within Apple's 12 hours, retrying failures, at most one answer per request, audited.
public struct ConsumptionResponder: PeriodicJob {
    let apps: AppRegistry
    let ledger: Ledger
    let requests: ConsumptionRequestStore
    let catalog: CatalogService
    let configuration: LifecycleConfiguration
    let metrics: ServerMetrics
    let logger: Logger
    /// The customer's signals, for the refund policy.
    let risk: RiskStore?
    let riskPolicy: RiskPolicy

    /// Answers every due request; returns how many were answered. `now` is the clock deadlines are measured on.
    @discardableResult
    public func runOnce(now: Date = Date()) async throws -> Int {
        var answered = 0
        while true {
            let due = try await ledger.claimConsumptionRequests(limit: 20, lease: .seconds(120), now: now)
            if due.isEmpty { break }
            for request in due where try await answer(request, now: now) { answered += 1 }
        }
        metrics.jobRun("consumption_responder", items: answered)
        return answered
    }

    private func answer(_ request: ConsumptionRequestStore.Request, now: Date) async throws -> Bool {
        guard configuration.customerConsented else {
            try await ledger.failConsumptionRequest(
                request.id,
                error: "not sent: customers' consent is not configured (lifecycle.consumption.customerConsented)",
                final: true,
                retryAfter: .seconds(0),
                now: now
            )
            return false
        }
        guard now < request.deadline else {
            try await ledger.failConsumptionRequest(
                request.id,
                error: "not sent: Apple's 12-hour deadline passed",
                final: true,
                retryAfter: .seconds(0),
                now: now
            )
            return false
        }
        guard let app = apps.app(bundleId: request.bundleId), let client = app.serverAPI(for: request.environment) else {
            try await ledger.failConsumptionRequest(
                request.id,
                error: "no App Store Server API key for \(request.bundleId) (\(request.environment))",
                final: true,
                retryAfter: .seconds(0),
                now: now
            )
            return false
        }
        let facts = try await requests.facts(transactionId: request.transactionId, now: now)
        // Apple takes no consumption information for a purchase an organization assigned (4000227) or a family
        // member's copy (4000185): the question is closed without a call that could only fail.
        guard TransactionCommerce.isSale(ownershipType: facts.ownershipType) else {
            try await ledger.failConsumptionRequest(
                request.id,
                error: "not sent: Apple takes no consumption information for a \(facts.ownershipType ?? "") transaction",
                final: true,
                retryAfter: .seconds(0),
                now: now
            )
            return false
        }
        let productId = try await productId(of: request)
        let product = productId.flatMap { catalog.catalog.product($0) }
        var preference = (facts.kind ?? product?.kind).flatMap { configuration.refundPreference[$0] }
        // The risk policy: a customer over the refund threshold is answered DECLINE, and the answer says why (it is
        // stored with the request and in the customer's audit).
        var policyReason: String?
        if riskPolicy.declineRefundsFrom != nil, let risk, let signals = try await risk.signals(ofTransaction: request.transactionId),
            let reason = riskPolicy.declineReason(signals)
        {
            preference = "DECLINE"
            policyReason = reason
        }
        var answer = ConsumptionAnswer.build(facts, sampleContentProvided: product?.sampleContentProvided ?? false, preference: preference)
        answer.policy = policyReason
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            // Version 2 for every product type, as Apple's late-2026 rules say; version 1 only for old
            // configurations and where version 2 refuses the transaction's type (4000047, which Apple answered for
            // non-renewing subscriptions in April 2026).
            if configuration.consumptionAPIVersion == "v1" {
                try await client.sendConsumptionInformationV1(transactionId: request.transactionId, request: Self.v1Body(answer))
            } else {
                do {
                    try await client.sendConsumptionInformation(
                        transactionId: request.transactionId,
                        request: ConsumptionRequest(
                            customerConsented: true,
                            sampleContentProvided: answer.sampleContentProvided,
                            deliveryStatus: DeliveryStatus(rawValue: answer.deliveryStatus),
                            consumptionPercentage: answer.consumptionPercentage,
                            refundPreference: answer.refundPreference.map(RefundPreference.init(rawValue:))
                        )
                    )
                } catch let error as AppStoreServerAPIError where error.errorCode == .invalidTransactionTypeNotSupported {
                    try await client.sendConsumptionInformationV1(transactionId: request.transactionId, request: Self.v1Body(answer))
                }
            }
            metrics.appleCall(endpoint: "consumption", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
        } catch let error as AppStoreServerAPIError {
            metrics.appleCall(endpoint: "consumption", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            try await ledger.failConsumptionRequest(
                request.id,
                error: "\(error)",
                final: !error.isRetryable,
                retryAfter: .seconds(min(600, 30 << min(request.attempts, 4))),
                now: now
            )
            return false
        }
        let text = String(decoding: try JSONEncoder().encode(answer), as: UTF8.self)
        try await ledger.answerConsumptionRequest(request.id, answer: text)
        logger.info(
            "refund question answered",
            metadata: ["storekeeper.transaction.id": "\(request.transactionId)", "answer": "\(text)"]
        )
        return true
    }

    private func productId(of request: ConsumptionRequestStore.Request) async throws -> String? {
        try await requests.productId(transactionId: request.transactionId)
    }

    static func v1Body(_ answer: ConsumptionAnswer) -> ConsumptionRequestV1 {
        let consumption: ConsumptionStatus
        switch answer.consumptionPercentage {
        case nil: consumption = .undeclared
        case 0?: consumption = .notConsumed
        case 100_000?: consumption = .fullyConsumed
        default: consumption = .partiallyConsumed
        }
        let preference: RefundPreferenceV1
        switch answer.refundPreference {
        case "DECLINE"?: preference = .preferDecline
        case "GRANT_FULL"?, "GRANT_PRORATED"?: preference = .preferGrant
        default: preference = .noPreference
        }
        return ConsumptionRequestV1(
            customerConsented: true,
            consumptionStatus: consumption,
            platform: .apple,
            sampleContentProvided: answer.sampleContentProvided,
            deliveryStatus: answer.deliveryStatus == "DELIVERED" ? .deliveredAndWorkingProperly : .didNotDeliverForOtherReason,
            refundPreference: preference
        )
    }
}

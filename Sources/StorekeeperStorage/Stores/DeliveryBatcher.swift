import Foundation
import StorekeeperCore

/// Groups concurrent delivery requests into shared database transactions.
///
/// Concurrent requests are combined (``BatchCombiner``) into batches of at most `maximumBatch`, each delivered in
/// one transaction. If a batch fails as a whole (a deadlock, one poisoned request), each of its requests is retried
/// alone in its own transaction, so one failure never fails its neighbours.
final class DeliveryBatcher: Sendable {
    private let combiner: BatchCombiner<DeliveryRequest, Result<DeliveryResult, any Error>>

    init(provider: any DatabaseProvider, maximumBatch: Int) {
        combiner = BatchCombiner(maximumBatch: maximumBatch) { batch in await Self.deliver(batch, provider: provider) }
    }

    func deliver(_ request: DeliveryRequest) async throws -> DeliveryResult {
        try await combiner.submit(request).get()
    }

    private static func deliver(_ batch: [DeliveryRequest], provider: any DatabaseProvider) async -> [Result<DeliveryResult, any Error>] {
        let kind = provider.kind
        let now = Date()
        do {
            let results = try await provider.withTransaction { db in
                try await PurchaseLedger.deliverBatch(batch, now: now, kind: kind, on: db)
            }
            return results.map { .success($0) }
        } catch {
            var outcomes: [Result<DeliveryResult, any Error>] = []
            for request in batch {
                do {
                    outcomes.append(
                        .success(
                            try await provider.withTransaction { db in
                                try await PurchaseLedger.deliver(
                                    request.transaction, product: request.product, orderId: request.orderId,
                                    submitter: request.submitter, policy: request.policy, now: now, kind: kind, on: db)
                            }))
                } catch {
                    outcomes.append(.failure(error))
                }
            }
            return outcomes
        }
    }
}

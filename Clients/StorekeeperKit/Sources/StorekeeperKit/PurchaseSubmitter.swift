import Foundation
import OpenAPIRuntime
import StorekeeperAPI

/// Carries journaled entries to the server, and finishes a StoreKit transaction only once the server answered for
/// it for good.
///
/// `delivered` (first time or again) and `rejected` settle an entry: StoreKit's transaction is finished, then the
/// entry leaves the journal — in that order, so a crash between the two finishes again (harmless) rather than never.
/// Anything else keeps it: `retry`, a 5xx, a transport failure, a credential the server did not accept, an answer
/// the document does not list. A kept entry is tried again after ``RetryPolicy``'s delay, and at every launch.
public actor PurchaseSubmitter {
    /// What became of one entry in a pass.
    public enum Settlement: Sendable, Hashable {
        /// The server delivered it (now or before); finished and removed.
        case delivered(alreadyDelivered: Bool)
        /// The server refused it for good (forged, another app's, never deliverable); finished and removed.
        case rejected(code: String)
        /// Not settled; kept for the next attempt.
        case kept(reason: String)

        /// Whether the user has it (delivered now or before).
        public var isDelivered: Bool {
            if case .delivered = self { true } else { false }
        }
    }

    private let journal: PurchaseJournal
    private let api: any APIProtocol
    private let retry: RetryPolicy
    private let finish: @Sendable (_ transactionId: String) async -> Void
    private var inFlight: Set<String> = []

    /// - Parameter finish: finishes the StoreKit transaction with this id (`Transaction.finish()`).
    public init(
        journal: PurchaseJournal,
        api: any APIProtocol,
        retry: RetryPolicy = RetryPolicy(),
        finish: @escaping @Sendable (_ transactionId: String) async -> Void
    ) {
        self.journal = journal
        self.api = api
        self.retry = retry
        self.finish = finish
    }

    /// Submits every entry due at `now` (every entry, backoff or not, with `ignoringBackoff`: a launch tries all at
    /// once), oldest first, one at a time (the server answers a replay the same way, so order only matters for
    /// fairness).
    @discardableResult
    public func submitDue(now: Date = Date(), ignoringBackoff: Bool = false) async throws -> [String: Settlement] {
        var settled: [String: Settlement] = [:]
        let entries = ignoringBackoff ? await journal.all() : await journal.due(at: now)
        for entry in entries where !inFlight.contains(entry.id) {
            // Another pass (a listener's, a purchase's) may be sending it now: one attempt at a time per entry, so
            // a settled transaction is finished once.
            inFlight.insert(entry.id)
            defer { inFlight.remove(entry.id) }
            guard await journal.contains(entry.id) else { continue }
            let settlement = await submit(entry)
            settled[entry.id] = settlement
            switch settlement {
            case .delivered, .rejected:
                if case .purchase = entry.payload { await finish(entry.id) }
                try await journal.remove(entry.id)
            case .kept(let reason):
                let delay = retry.delay(afterAttempt: entry.attempts + 1)
                let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
                try await journal.recordAttempt(entry.id, error: reason, retryAt: now.addingTimeInterval(seconds))
            }
        }
        return settled
    }

    private func submit(_ entry: PurchaseJournal.Entry) async -> Settlement {
        do {
            switch entry.payload {
            case .purchase(let signedTransaction, let orderId):
                return try Self.settlement(
                    of: await api.submitPurchase(body: .json(.init(signedTransaction: signedTransaction, orderId: orderId)))
                )
            case .spend(let amount, let key, let reason):
                return try Self.settlement(
                    of: await api.spendCoins(body: .json(.init(amount: amount, idempotencyKey: key, reason: reason)))
                )
            }
        } catch {
            return .kept(reason: "transport: \(error)")
        }
    }

    static func settlement(of output: Operations.SubmitPurchase.Output) throws -> Settlement {
        switch output {
        case .ok(let ok):
            let answer = try ok.body.json
            switch answer.outcome {
            case .delivered: return .delivered(alreadyDelivered: answer.delivery?.alreadyDelivered ?? false)
            case .rejected: return .rejected(code: answer.code ?? "rejected")
            case .retry: return .kept(reason: answer.code ?? "retry")
            }
        case .accepted(let accepted):
            return .kept(reason: try accepted.body.json.code ?? "unattributed")
        case .badRequest(let refusal): return settlement(of: try refusal.body.json, status: 400)
        case .conflict(let refusal): return settlement(of: try refusal.body.json, status: 409)
        case .unprocessableContent(let refusal): return settlement(of: try refusal.body.json, status: 422)
        case .contentTooLarge(let refusal): return settlement(of: try refusal.body.json, status: 413)
        case .unauthorized: return .kept(reason: "the server did not accept the credentials")
        case .internalServerError: return .kept(reason: "server error")
        case .serviceUnavailable: return .kept(reason: "server unavailable")
        case .undocumented(let status, _): return .kept(reason: "undocumented answer \(status)")
        }
    }

    static func settlement(of output: Operations.SpendCoins.Output) throws -> Settlement {
        switch output {
        case .ok: return .delivered(alreadyDelivered: false)
        case .badRequest(let refusal): return .rejected(code: try refusal.body.json.code)
        case .conflict(let refusal): return .rejected(code: try refusal.body.json.code)
        case .undocumented(let status, _) where (400..<500).contains(status) && status != 401 && status != 408 && status != 429:
            return .rejected(code: "http_\(status)")
        default: return .kept(reason: "not settled")
        }
    }

    /// A refusal settles an entry only when the server says it is final; without an outcome it is kept.
    private static func settlement(of error: Components.Schemas._Error, status: Int) -> Settlement {
        error.outcome == .rejected ? .rejected(code: error.code) : .kept(reason: "\(status) \(error.code)")
    }
}

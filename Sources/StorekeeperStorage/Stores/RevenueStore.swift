import Foundation
import SQLKit
import StorekeeperCore
import Synchronization

/// The read side of the revenue report: delivered transactions in a range of purchase days, each original
/// transaction with its history (a subscription's earlier periods decide its commission), streamed row by row into
/// ``RevenueReportBuilder`` so memory holds one original transaction at a time, not the range.
public struct RevenueStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// The report for purchases in `[from, to)`, and how many transactions were left out (not revenue).
    public func report(from: Date, to: Date, smallBusiness: SmallBusinessProgram) async throws -> (lines: [RevenueLine], skipped: Int) {
        final class Accumulator: Sendable {
            struct State {
                var builder: RevenueReportBuilder
                var original: String?
                var history: [RevenueTransaction] = []
                var failure: (any Error)?
            }
            let state: Mutex<State>
            init(_ builder: RevenueReportBuilder) { state = Mutex(State(builder: builder)) }
        }
        let accumulator = Accumulator(RevenueReportBuilder(from: from, to: to, smallBusiness: smallBusiness))
        try await provider.withSession { db in
            try await db.raw(
                """
                SELECT transaction_id, original_transaction_id, product_id, product_kind, environment, quantity,
                    purchase_date, expires_date, \(unsafeRaw: AppleTransactionsTable.commerceColumns)
                FROM apple_transactions
                WHERE purchase_date < \(bind: to.millis) AND original_transaction_id IN (
                    SELECT original_transaction_id FROM apple_transactions
                    WHERE purchase_date >= \(bind: from.millis) AND purchase_date < \(bind: to.millis))
                ORDER BY original_transaction_id, purchase_date
                """
            ).run { row in
                accumulator.state.withLock { state in
                    guard state.failure == nil else { return }
                    do {
                        let transaction = RevenueTransaction(
                            transactionId: try row.decode(column: "transaction_id", as: String.self),
                            originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
                            productId: try row.decode(column: "product_id", as: String.self),
                            kind: ProductKind(rawValue: try row.decode(column: "product_kind", as: String.self)) ?? .consumable,
                            purchaseDate: Date(millis: try row.decode(column: "purchase_date", as: Int64.self)),
                            expiresDate: try row.decode(column: "expires_date", as: Int64?.self).map(Date.init(millis:)),
                            quantity: Int(try row.decode(column: "quantity", as: Int64.self)),
                            sandbox: try row.decode(column: "environment", as: String.self) != "Production",
                            commerce: try AppleTransactionsTable.commerce(row: row)
                        )
                        if state.original != transaction.originalTransactionId {
                            if !state.history.isEmpty { state.builder.add(history: state.history) }
                            state.history.removeAll(keepingCapacity: true)
                            state.original = transaction.originalTransactionId
                        }
                        state.history.append(transaction)
                    } catch {
                        state.failure = error
                    }
                }
            }
        }
        return try accumulator.state.withLock { state in
            if let failure = state.failure { throw failure }
            if !state.history.isEmpty { state.builder.add(history: state.history) }
            return (state.builder.report, state.builder.skipped)
        }
    }
}

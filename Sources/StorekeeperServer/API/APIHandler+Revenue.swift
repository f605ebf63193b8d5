import Foundation
import StorekeeperCore
import StorekeeperServerAPI
import StorekeeperStorage

extension APIHandler {
    /// A user's transactions with what each earned (``Proceeds``), and totals per currency.
    func adminGetUserRevenue(_ input: Operations.AdminGetUserRevenue.Input) async throws -> Operations.AdminGetUserRevenue.Output {
        let user = try Self.user(input.path.id)
        let transactions = try await accounts.snapshot(of: user, transactionLimit: 10_000).transactions
        let rows = try Self.revenue(of: transactions, smallBusiness: smallBusinessProgram)
        var totals: [String: Components.Schemas.UserRevenue.TotalsPayloadPayload] = [:]
        for row in rows where row.counted {
            guard let currency = row.currency else { continue }
            var total =
                totals[currency]
                ?? .init(
                    currency: currency,
                    transactions: 0,
                    customerPrice: 0,
                    tax: 0,
                    proceeds: 0,
                    refundedPrice: 0,
                    refundedProceeds: 0,
                    netProceeds: 0,
                    exact: true
                )
            // At most 10,000 rows of at most 10^13 each: the sums stay far inside Int64.
            total.transactions += 1
            total.customerPrice += row.customerPrice ?? 0
            total.tax += row.tax ?? 0
            total.proceeds += row.proceeds ?? 0
            total.refundedPrice += row.refundedPrice ?? 0
            total.refundedProceeds += row.refundedProceeds ?? 0
            total.netProceeds += row.netProceeds ?? 0
            total.exact = total.exact && row.exact == true
            totals[currency] = total
        }
        return .ok(
            .init(
                body: .json(
                    .init(userId: user.rawValue, transactions: rows, totals: totals.values.sorted { $0.currency < $1.currency })
                )
            )
        )
    }

    /// Each transaction's estimate; a subscription period's commission depends on the paid service of its
    /// original transaction before it began (its earlier periods in `transactions`).
    static func revenue(
        of transactions: [AccountStore.Transaction],
        smallBusiness: SmallBusinessProgram
    ) throws -> [Components.Schemas.TransactionProceeds] {
        let periods = Dictionary(grouping: transactions.filter { $0.productKind == .autoRenewable }, by: \.originalTransactionId)
            .mapValues { group in
                group.compactMap { transaction -> (start: Date, end: Date, paid: Bool)? in
                    guard let end = transaction.expiresDate, transaction.commerce.revocationType == nil else { return nil }
                    let paid = (transaction.commerce.price ?? 0) > 0 && transaction.commerce.offerDiscountType != "FREE_TRIAL"
                    return (transaction.purchaseDate, end, paid)
                }
            }
        return try transactions.map { transaction in
            let sandbox = transaction.environment != "Production"
            let paidService =
                transaction.productKind == .autoRenewable
                ? Proceeds.paidService(before: transaction.purchaseDate, periods: periods[transaction.originalTransactionId] ?? [])
                : nil
            let estimate = Proceeds.estimate(
                price: transaction.commerce.price,
                currency: transaction.commerce.currency,
                storefront: transaction.commerce.storefront,
                sandbox: sandbox,
                kind: transaction.productKind,
                purchaseDate: transaction.purchaseDate,
                ownershipType: transaction.commerce.ownershipType,
                revocationType: transaction.commerce.revocationType,
                revocationPercentage: transaction.commerce.revocationPercentage,
                paidServiceBefore: paidService ?? 0,
                smallBusiness: smallBusiness
            )
            return Components.Schemas.TransactionProceeds(
                transactionId: transaction.transactionId,
                originalTransactionId: transaction.originalTransactionId,
                productId: transaction.productId,
                productKind: try documented(transaction.productKind.rawValue),
                purchaseDate: transaction.purchaseDate,
                sandbox: sandbox,
                counted: estimate != nil,
                storefront: transaction.commerce.storefront,
                currency: estimate?.currency ?? transaction.commerce.currency,
                customerPrice: estimate?.customerPrice ?? transaction.commerce.price,
                tax: estimate?.tax,
                commissionPermille: estimate?.commissionPermille,
                reason: try estimate.map { try documented($0.reason.rawValue) },
                proceeds: estimate?.proceeds,
                refundedPrice: estimate?.refundedPrice,
                refundedProceeds: estimate?.refundedProceeds,
                netProceeds: estimate?.netProceeds,
                exact: estimate?.exact,
                paidServiceDays: paidService.map { Int($0 / 86_400) }
            )
        }
    }
}

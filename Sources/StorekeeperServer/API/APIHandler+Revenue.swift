import Foundation
import OpenAPIRuntime
import StorekeeperAPI
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
                smallBusiness: smallBusiness,
                store: transaction.store,
                storeFeePermille: transaction.commerce.storeFeePermille
            )?.refunding(seats: transaction.commerce.refundedSeats, of: transaction.quantity)
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

    /// Revenue by day × product × storefront × currency for `[from, to)`, as JSON or CSV.
    /// `GET /v1/admin/reports/retention`: what retention offers kept, attributed to the rules that offered them.
    func adminRetentionReport(_ input: Operations.AdminRetentionReport.Input) async throws -> Operations.AdminRetentionReport.Output {
        let (from, to) = try Self.range(from: input.query.from, to: input.query.to)
        guard let revenue else { throw StorekeeperError(.internal, code: "no_revenue_store", message: "revenue reads are not configured") }
        let report = try await revenue.retentionSaves(from: from, to: to, smallBusiness: smallBusinessProgram)
        return .ok(
            .init(
                body: .json(
                    .init(
                        from: RevenueReportBuilder.day(from),
                        to: RevenueReportBuilder.day(to),
                        lines: report.report.map {
                            .init(
                                productId: $0.productId,
                                offerId: $0.offerId,
                                ruleId: $0.ruleId,
                                currency: $0.currency,
                                saves: $0.saves,
                                renewals: $0.renewals,
                                gross: $0.gross,
                                proceeds: $0.proceeds
                            )
                        }
                    )
                )
            )
        )
    }

    /// `GET /v1/admin/reports/subscription-sources`: Apple's Analytics Reports counts by download source.
    func adminSubscriptionSourcesReport(
        _ input: Operations.AdminSubscriptionSourcesReport.Input
    ) async throws -> Operations.AdminSubscriptionSourcesReport.Output {
        _ = try Self.range(from: input.query.from, to: input.query.to)
        guard let revenue else { throw StorekeeperError(.internal, code: "no_revenue_store", message: "revenue reads are not configured") }
        let report = try await revenue.subscriptionSources(fromDay: input.query.from, toDay: input.query.to)
        return .ok(
            .init(
                body: .json(
                    .init(
                        from: input.query.from,
                        to: input.query.to,
                        days: report.days,
                        lastDay: report.lastDay,
                        lines: report.lines.map {
                            .init(
                                productId: $0.productId,
                                downloadSource: $0.downloadSource,
                                starts: $0.starts,
                                continuations: $0.continuations,
                                conversions: $0.conversions,
                                churn: $0.churn,
                                activeAtEnd: $0.activeAtEnd
                            )
                        }
                    )
                )
            )
        )
    }

    func adminRevenueReport(_ input: Operations.AdminRevenueReport.Input) async throws -> Operations.AdminRevenueReport.Output {
        let (from, to) = try Self.range(from: input.query.from, to: input.query.to)
        guard let revenue else { throw StorekeeperError(.internal, code: "no_revenue_store", message: "revenue reads are not configured") }
        let (lines, skipped) = try await revenue.report(from: from, to: to, smallBusiness: smallBusinessProgram)
        let totals = Self.totals(lines)
        let wantsCSV = input.headers.accept.sorted { $0.quality.doubleValue > $1.quality.doubleValue }.first?.contentType == .csv
        if wantsCSV {
            return .ok(.init(body: .csv(HTTPBody(Self.csv(lines)))))
        }
        let schema = { (line: RevenueLine) in
            Components.Schemas.RevenueLine(
                day: line.day,
                productId: line.productId,
                storefront: line.storefront,
                currency: line.currency,
                units: line.units,
                freeUnits: line.freeUnits,
                gross: line.gross,
                tax: line.tax,
                proceeds: line.proceeds,
                refunds: line.refunds,
                refundedProceeds: line.refundedProceeds,
                net: line.net,
                exact: line.exact
            )
        }
        return .ok(
            .init(
                body: .json(
                    .init(
                        from: RevenueReportBuilder.day(from),
                        to: RevenueReportBuilder.day(to),
                        skipped: skipped,
                        lines: lines.map(schema),
                        totals: totals.map(schema)
                    )
                )
            )
        )
    }

    /// `[from, to)` from two `YYYY-MM-DD` days in UTC: in order, at most 366 days, between 2000 and 2200.
    static func range(from: String, to: String) throws -> (Date, Date) {
        func day(_ text: String) -> Date? {
            guard text.utf8.count == 10, text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) }),
                let date = try? Date(text + "T00:00:00Z", strategy: .iso8601), RevenueReportBuilder.day(date) == text
            else { return nil }
            return date
        }
        let earliest = Date(timeIntervalSince1970: 946_684_800)  // 2000-01-01
        let latest = Date(timeIntervalSince1970: 7_258_118_400)  // 2200-01-01
        guard let start = day(from), let end = day(to), start < end, start >= earliest, end <= latest,
            end.timeIntervalSince(start) <= 366 * 86_400
        else {
            throw StorekeeperError.invalidInput(
                "invalid_range",
                "from and to are YYYY-MM-DD days (UTC), from before to, at most 366 days apart, between 2000 and 2200"
            )
        }
        return (start, end)
    }

    /// The lines summed per currency (day, product and storefront empty).
    static func totals(_ lines: [RevenueLine]) -> [RevenueLine] {
        var totals: [String: RevenueLine] = [:]
        for line in lines {
            var total =
                totals[line.currency]
                ?? RevenueLine(
                    day: "",
                    productId: "",
                    storefront: "",
                    currency: line.currency,
                    units: 0,
                    gross: 0,
                    tax: 0,
                    proceeds: 0,
                    refunds: 0,
                    refundedProceeds: 0,
                    net: 0,
                    exact: true
                )
            total.units = total.units.addingReportingOverflow(line.units).overflow ? .max : total.units + line.units
            total.freeUnits = total.freeUnits.addingReportingOverflow(line.freeUnits).overflow ? .max : total.freeUnits + line.freeUnits
            for keyPath in [\RevenueLine.gross, \.tax, \.proceeds, \.refunds, \.refundedProceeds, \.net] {
                let (sum, overflow) = total[keyPath: keyPath].addingReportingOverflow(line[keyPath: keyPath])
                total[keyPath: keyPath] = overflow ? (line[keyPath: keyPath] > 0 ? .max : .min) : sum
            }
            total.exact = total.exact && line.exact
            totals[line.currency] = total
        }
        return totals.values.sorted { $0.currency < $1.currency }
    }

    /// The lines as CSV (RFC 4180), amounts in milliunits.
    static func csv(_ lines: [RevenueLine]) -> String {
        func field(_ text: String) -> String {
            // A product id is admin input: quote what needs it, and defuse spreadsheet formulas.
            var value = text
            if let first = value.first, "=+-@".contains(first) { value = "'" + value }
            guard value.contains(where: { ",\"\n\r".contains($0) }) else { return value }
            return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        var out = "day,product_id,storefront,currency,units,free_units,gross,tax,proceeds,refunds,refunded_proceeds,net,exact\r\n"
        for line in lines {
            out +=
                [
                    field(line.day), field(line.productId), field(line.storefront), field(line.currency), String(line.units),
                    String(line.freeUnits),
                    String(line.gross), String(line.tax), String(line.proceeds), String(line.refunds),
                    String(line.refundedProceeds), String(line.net), line.exact ? "true" : "false",
                ].joined(separator: ",") + "\r\n"
        }
        return out
    }
}

extension APIHandler {
    /// Subscription analytics for `[from, to)`, as JSON or (the product lines) CSV.
    func adminSubscriptionReport(_ input: Operations.AdminSubscriptionReport.Input) async throws -> Operations.AdminSubscriptionReport.Output {
        let (from, to) = try Self.range(from: input.query.from, to: input.query.to)
        guard let revenue else { throw StorekeeperError(.internal, code: "no_revenue_store", message: "revenue reads are not configured") }
        let report = try await revenue.subscriptionAnalytics(from: from, to: to, lifecycle: StoreMessage.appleLifecycleCounting)
        let wantsCSV = input.headers.accept.sorted { $0.quality.doubleValue > $1.quality.doubleValue }.first?.contentType == .csv
        if wantsCSV {
            var out =
                "product_id,new_subscriptions,renewals,trial_starts,trial_conversions,active_at_end,trials_at_end,voluntary_churn,"
                + "billing_churn,billing_failures,grace_entered,recoveries\n"
            for line in report.productLines {
                out += "\"\(line.productId.replacingOccurrences(of: "\"", with: "\"\""))\","
                out +=
                    [
                        line.newSubscriptions, line.renewals, line.trialStarts, line.trialConversions, line.activeAtEnd, line.trialsAtEnd,
                        line.voluntaryChurn, line.billingChurn, line.billingFailures, line.graceEntered, line.recoveries,
                    ].map(String.init).joined(separator: ",") + "\n"
            }
            return .ok(.init(body: .csv(HTTPBody(out))))
        }
        return .ok(
            .init(
                body: .json(
                    .init(
                        from: RevenueReportBuilder.day(from),
                        to: RevenueReportBuilder.day(to),
                        products: report.productLines.map {
                            .init(
                                productId: $0.productId,
                                newSubscriptions: $0.newSubscriptions,
                                renewals: $0.renewals,
                                trialStarts: $0.trialStarts,
                                trialConversions: $0.trialConversions,
                                activeAtEnd: $0.activeAtEnd,
                                trialsAtEnd: $0.trialsAtEnd,
                                voluntaryChurn: $0.voluntaryChurn,
                                billingChurn: $0.billingChurn,
                                billingFailures: $0.billingFailures,
                                graceEntered: $0.graceEntered,
                                recoveries: $0.recoveries
                            )
                        },
                        recurring: report.recurringRevenue.map {
                            .init(productId: $0.productId, currency: $0.currency, subscribers: $0.subscribers, monthly: $0.monthly)
                        },
                        cohorts: report.cohortLines.map {
                            .init(
                                month: $0.month,
                                currency: $0.currency,
                                subscribers: $0.subscribers,
                                activeAtEnd: $0.activeAtEnd,
                                paidPeriods: $0.paidPeriods,
                                gross: $0.gross,
                                refunded: $0.refunded
                            )
                        }
                    )
                )
            )
        )
    }
}

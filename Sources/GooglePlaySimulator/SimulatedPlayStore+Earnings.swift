import Foundation
import GooglePlayWire

/// The simulator's books: every charge Google takes and every refund it gives (license testers' purchases are
/// free and left out), each with Google's service fee, as the lines of Google Play's monthly earnings reports. A
/// month's report is published in the developer account's bucket once the simulated clock has left the month, as
/// Google publishes it in the first days of the next.
extension SimulatedPlayStore {
    /// The developer account's number: the reports bucket is `pubsite_prod_rev_<number>`.
    public static let developerAccount = "07051234567890123456"
    public static let reportsBucket = "pubsite_prod_rev_\(developerAccount)"

    /// Books a charge of `amount` milliunits for `orderId` now: a `Charge` line and its `Google fee`.
    func bookCharge(
        orderId: String,
        sku: String,
        subscription: Bool,
        amount: Int64,
        currency: String,
        region: String,
        basePlanId: String? = nil,
        offerId: String? = nil
    ) {
        guard amount > 0 else { return }
        book(
            orderId: orderId,
            sku: sku,
            subscription: subscription,
            amount: amount,
            currency: currency,
            region: region,
            refund: false,
            basePlanId: basePlanId,
            offerId: offerId
        )
    }

    /// Books a refund of `amount` milliunits of `orderId` now (`Charge refund` and `Google fee refund`), at most what
    /// the order still holds; returns what was refunded.
    @discardableResult
    func bookRefund(orderId: String, amount: Int64? = nil) -> Int64 {
        let lines = earningsLedger.filter { $0.orderId == orderId }
        guard let charge = lines.first(where: { $0.type == .charge }) else { return 0 }
        let held = lines.filter { $0.type == .charge || $0.type == .chargeRefund }.reduce(0) { $0 + $1.buyerAmount }
        let refunded = min(amount ?? held, held)
        guard refunded > 0 else { return 0 }
        book(
            orderId: orderId,
            sku: charge.sku,
            subscription: charge.productType == 2,
            amount: refunded,
            currency: charge.buyerCurrency,
            region: charge.buyerCountry,
            refund: true,
            basePlanId: charge.basePlanId,
            offerId: charge.offerId,
            whole: refunded == held
        )
        return refunded
    }

    private func book(
        orderId: String,
        sku: String,
        subscription: Bool,
        amount: Int64,
        currency: String,
        region: String,
        refund: Bool,
        basePlanId: String?,
        offerId: String?,
        whole: Bool = true
    ) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
        let (year, month, day) = (parts.year ?? 2000, parts.month ?? 1, parts.day ?? 1)
        let date = String(format: "%04d-%02d-%02d", year, month, day)
        // The tier: a refund goes back at its charge's rate; a charge is in the first million while the year's sales
        // (in US dollars) before it are under the threshold, and subscriptions pay 15 % either way.
        let eligible: Bool
        if refund {
            eligible = feePermille(orderId: orderId) == Self.serviceFeePermille
        } else {
            let sold = earningsLedger.filter {
                $0.date.hasPrefix("\(year)-") && $0.buyerCurrency == "USD" && ($0.type == .charge || $0.type == .chargeRefund)
            }
            .reduce(0) { $0 + $1.buyerAmount }
            eligible = sold < feeTierThreshold
        }
        let fee = amount * (eligible || subscription ? Self.serviceFeePermille : Self.upperServiceFeePermille) / 1000
        let hour = parts.hour ?? 0
        let time = String(
            format: "%d:%02d:%02d %@ UTC",
            hour % 12 == 0 ? 12 : hour % 12,
            parts.minute ?? 0,
            parts.second ?? 0,
            hour < 12 ? "AM" : "PM"
        )
        func line(_ type: PlayEarningsReport.TransactionType, _ value: Int64) -> PlayEarningsReport.Row {
            PlayEarningsReport.Row(
                orderId: orderId,
                date: date,
                time: time,
                type: type,
                refundType: refund ? (whole ? "Full refund" : "Partial refund") : nil,
                productTitle: sku,
                packageName: catalog.packageName,
                productType: subscription ? 2 : 1,
                sku: sku,
                buyerCountry: region,
                buyerCurrency: currency,
                buyerAmount: value,
                merchantCurrency: currency,
                merchantAmount: value,
                basePlanId: basePlanId,
                offerId: offerId,
                firstMillionEligible: eligible
            )
        }
        if refund {
            earningsLedger.append(line(.chargeRefund, -amount))
            earningsLedger.append(line(.googleFeeRefund, fee))
        } else {
            earningsLedger.append(line(.charge, amount))
            earningsLedger.append(line(.googleFee, -fee))
        }
    }

    /// `orders.get` for a subscription's order (its first, or a renewal `<first>..N`): what Google charged for it as
    /// booked (nothing for a free trial, or a plan change paid by the old plan's unused time), less refunds, the
    /// developer's revenue after the 15 % fee.
    func subscriptionOrder(_ orderId: String) throws -> PlayOrder {
        let notFound = PlayStoreError(404, "notFound", "The order was not found.")
        let first = orderId.components(separatedBy: "..").first ?? orderId
        guard let record = subscriptions.values.first(where: { $0.firstOrderId == first }), let plan = catalog.subscription(record.productId)
        else { throw notFound }
        let issued = orderId == first || (0..<record.renewals).contains { "\(first)..\($0)" == orderId } || orderId == record.pendingOrderId
        guard issued else { throw notFound }
        let lines = earningsLedger.filter { $0.orderId == orderId }
        let charged = lines.filter { $0.type == .charge }.reduce(0) { $0 + $1.buyerAmount }
        let refunded = -lines.filter { $0.type == .chargeRefund }.reduce(0) { $0 + $1.buyerAmount }
        let state =
            orderId == record.pendingOrderId
            ? "PENDING" : refunded == 0 ? "PROCESSED" : refunded >= charged ? "REFUNDED" : "PARTIALLY_REFUNDED"
        func money(_ milliunits: Int64) -> Money { Money(currencyCode: plan.currency, milliunits: milliunits) }
        let kept = charged - refunded
        return PlayOrder(
            orderId: orderId,
            purchaseToken: record.token,
            state: state,
            createTime: orderId == first ? record.startTime : nil,
            lineItems: [
                .init(
                    productId: record.productId,
                    listingPrice: money(plan.price),
                    total: money(charged),
                    tax: money(0),
                    subscriptionDetails: .init(basePlanId: record.basePlanId, offerId: orderId == first ? record.offerId : nil)
                )
            ],
            total: money(charged),
            tax: money(0),
            developerRevenueInBuyerCurrency: money(kept - kept * feePermille(orderId: orderId) / 1000),
            buyerAddress: .init(buyerCountry: record.regionCode),
            orderDetails: .init(taxInclusive: false)
        )
    }

    /// The service fee Google took on `orderId`'s charge, in thousandths (15 % when nothing was charged).
    func feePermille(orderId: String) -> Int64 {
        let lines = earningsLedger.filter { $0.orderId == orderId }
        guard let charge = lines.first(where: { $0.type == .charge }), charge.buyerAmount > 0,
            let fee = lines.first(where: { $0.type == .googleFee })
        else { return Self.serviceFeePermille }
        return (-fee.buyerAmount * 1000 + charge.buyerAmount / 2) / charge.buyerAmount >= 250 ? Self.upperServiceFeePermille : Self.serviceFeePermille
    }

    /// Every line booked so far, in order: the ground truth the earnings reports are cut from.
    public func allEarnings() -> [PlayEarningsReport.Row] { earningsLedger }

    /// The earnings report of `month` (`YYYY-MM`, UTC), published or not.
    public func earningsReport(month: String) -> PlayEarningsReport {
        PlayEarningsReport(rows: earningsLedger.filter { $0.date.hasPrefix(month + "-") })
    }

    /// The months whose earnings report is published: those with lines that the clock has left.
    public func publishedEarningsMonths() -> [String] {
        let current = String(Self.isoDay(now).prefix(7))
        return Set(earningsLedger.map { String($0.date.prefix(7)) }).filter { $0 < current }.sorted()
    }

    /// Cloud Storage's object list of the reports bucket under `prefix`.
    public func reportObjects(bucket: String, prefix: String) throws -> [(name: String, size: Int)] {
        guard bucket == Self.reportsBucket else { throw PlayStoreError(404, "notFound", "The specified bucket does not exist.") }
        return publishedEarningsMonths().map { month in
            (PlayEarningsReport.objectName(month: month, account: Self.developerAccount), reportArchive(month: month).count)
        }.filter { $0.0.hasPrefix(prefix) }
    }

    /// One object of the reports bucket: a published month's report, zipped as Google zips it.
    public func reportObject(bucket: String, name: String) throws -> [UInt8] {
        guard bucket == Self.reportsBucket else { throw PlayStoreError(404, "notFound", "The specified bucket does not exist.") }
        guard let month = publishedEarningsMonths().first(where: { PlayEarningsReport.objectName(month: $0, account: Self.developerAccount) == name })
        else { throw PlayStoreError(404, "notFound", "No such object: \(bucket)/\(name)") }
        return reportArchive(month: month)
    }

    private func reportArchive(month: String) -> [UInt8] {
        let name = "earnings_\(month.replacingOccurrences(of: "-", with: ""))_\(Self.developerAccount).csv"
        return ZipArchive.archive([ZipArchive.Entry(name: name, bytes: earningsReport(month: month).csv())])
    }

    static func isoDay(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 2000, parts.month ?? 1, parts.day ?? 1)
    }
}

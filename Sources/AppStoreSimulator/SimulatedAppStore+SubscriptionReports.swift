import AppStoreWire
import Foundation

/// App Store Connect's Subscription and Subscription Event reports, written from the simulator's own record: the
/// subscriptions active at the end of a report day (by offer, and those in billing retry or grace), and the day's
/// lifecycle events. Production only; family members' shared copies left out. Subscriptions are named as Apple
/// names them: by name (the simulator's product id) and Apple ID (``SimulatorCatalog/Product/reportAppleId``).
extension SimulatedAppStore {
    /// The Subscription Report of `day` (`YYYY-MM-DD`, a Pacific Time day): the state at the day's end.
    public func dailySubscriptionReport(day: String, delayHours: Int = 0) throws -> ReportAnswer {
        guard let parsed = ReportCalendar.Day(day) else { throw SimulatorError.notAllowed("reportDate must be YYYY-MM-DD") }
        let interval = reportCalendar.interval(of: parsed)
        guard now >= interval.end.addingTimeInterval(Double(delayHours) * 3_600) else { return .notYetAvailable }
        guard environment == .production else { return .noSales }
        let at = interval.end
        struct LineKey: Hashable, Comparable {
            var productId: String
            var country: String
            var currency: String
            var price: Int64
            static func < (a: Self, b: Self) -> Bool { (a.productId, a.country, a.currency, a.price) < (b.productId, b.country, b.currency, b.price) }
        }
        var lines: [LineKey: SubscriptionReportRow] = [:]
        func line(_ transaction: JWSTransactionDecodedPayload, price: Int64) -> (LineKey, SubscriptionReportRow)? {
            guard let productId = transaction.productId, let product = catalog.product(productId), let currency = transaction.currency,
                let storefront = transaction.storefront, let country = StorefrontCountry.alpha2(storefront)
            else { return nil }
            let key = LineKey(productId: productId, country: country, currency: currency, price: price)
            let tax = catalog.storefronts.first { $0.code == storefront }?.taxPermille ?? 0
            let row =
                lines[key]
                ?? SubscriptionReportRow(
                    appName: catalog.bundleId,
                    appAppleId: String(catalog.appAppleId),
                    subscriptionName: productId,
                    subscriptionAppleId: String(product.reportAppleId),
                    subscriptionGroupId: product.groupId,
                    standardDuration: product.period.map(Self.durationText),
                    customerPrice: price,
                    customerCurrency: currency,
                    developerProceeds: Self.proceeds(
                        price: price,
                        taxPermille: tax,
                        afterOneYear: transaction.purchaseDate.map { catalog.inSmallBusinessProgram(at: $0) } ?? false
                    ),
                    proceedsCurrency: currency,
                    country: country
                )
            return (key, row)
        }
        for (original, periods) in subscriptionPeriods(before: at) {
            if let current = periods.last(where: { ($0.purchaseDate ?? .distantFuture) < at && ($0.expiresDate ?? .distantPast) > at }),
                current.revocationDate.map({ $0 > at }) ?? true
            {
                guard var (key, row) = line(current, price: current.price ?? 0) else { continue }
                let discount = current.offerDiscountType ?? ((current.price ?? 0) == 0 ? .freeTrial : .payAsYouGo)
                switch (current.offerType, discount) {
                case (nil, _): row.activeStandardPrice += 1
                case (.introductory, .freeTrial): row.activeFreeTrialIntroductory += 1
                case (.introductory, .payUpFront): row.activePayUpFrontIntroductory += 1
                case (.introductory, _): row.activePayAsYouGoIntroductory += 1
                case (.promotional, .freeTrial): row.freeTrialPromotional += 1
                case (.promotional, .payUpFront): row.payUpFrontPromotional += 1
                case (.promotional, _): row.payAsYouGoPromotional += 1
                case (.offerCode, .freeTrial): row.freeTrialOfferCode += 1
                case (.offerCode, .payUpFront): row.payUpFrontOfferCode += 1
                case (.offerCode, _): row.payAsYouGoOfferCode += 1
                case (_, .freeTrial): row.freeTrialWinBack += 1
                case (_, .payUpFront): row.payUpFrontWinBack += 1
                default: row.payAsYouGoWinBack += 1
                }
                lines[key] = row
            } else if let state = billingState(of: original, at: at), let latest = periods.last {
                let price = latest.productId.flatMap { catalog.product($0)?.price } ?? latest.price ?? 0
                guard var (key, row) = line(latest, price: price) else { continue }
                if state == .gracePeriod { row.gracePeriod += 1 } else { row.billingRetry += 1 }
                lines[key] = row
            }
        }
        guard !lines.isEmpty else { return .noSales }
        return .report(ReportTable.tsv(columns: SubscriptionReportRow.columns, rows: lines.sorted { $0.key < $1.key }.map(\.value.fields)))
    }

    /// The Subscription Event Report of `day`: starts, renewals, conversions, upgrades, downgrades and crossgrades,
    /// reactivations, refunds, cancellations and entries into billing retry, counted per subscription and country.
    public func dailySubscriptionEventReport(day: String, delayHours: Int = 0) throws -> ReportAnswer {
        guard let parsed = ReportCalendar.Day(day) else { throw SimulatorError.notAllowed("reportDate must be YYYY-MM-DD") }
        let interval = reportCalendar.interval(of: parsed)
        guard now >= interval.end.addingTimeInterval(Double(delayHours) * 3_600) else { return .notYetAvailable }
        guard environment == .production else { return .noSales }
        let (start, end) = (interval.start, interval.end)
        struct EventKey: Hashable, Comparable {
            var event: String
            var productId: String
            var country: String
            var offerType: String
            var previous: String
            static func < (a: Self, b: Self) -> Bool {
                (a.event, a.productId, a.country, a.offerType, a.previous) < (b.event, b.productId, b.country, b.offerType, b.previous)
            }
        }
        var counts: [EventKey: Int] = [:]
        func count(_ event: String, _ transaction: JWSTransactionDecodedPayload, previous: String = "") {
            guard let productId = transaction.productId, let storefront = transaction.storefront,
                let country = StorefrontCountry.alpha2(storefront)
            else { return }
            let offer: String =
                switch (transaction.offerType, transaction.offerDiscountType) {
                case (nil, _): ""
                case (_, .some(.freeTrial)): "Free Trial"
                case (_, .some(.payUpFront)): "Pay Up Front"
                default: "Pay As You Go"
                }
            counts[EventKey(event: event, productId: productId, country: country, offerType: offer, previous: previous), default: 0] += 1
        }
        let history = subscriptionPeriods(before: end)
        for (original, periods) in history {
            for (index, period) in periods.enumerated() {
                if let revoked = period.revocationDate, revoked >= start, revoked < end, period.isUpgraded != true,
                    period.revocationType != .familyRevoke
                {
                    count("Refund", period)
                }
                guard let purchased = period.purchaseDate, purchased >= start, purchased < end else { continue }
                guard index > 0 else {
                    switch period.offerType {
                    case .some(.introductory): count("Start Introductory Offer", period)
                    case .some(.offerCode): count("Start Offer Code", period)
                    case .some(.promotional): count("Start Promotional Offer", period)
                    default: count("Subscribe", period)
                    }
                    continue
                }
                let before = periods[index - 1]
                let previousProduct = before.productId ?? ""
                if let productId = period.productId, productId != previousProduct {
                    let level = catalog.product(productId)?.level ?? 0
                    let previousLevel = catalog.product(previousProduct)?.level ?? 0
                    // Level 1 is the highest service.
                    let event = level < previousLevel ? "Upgrade" : level > previousLevel ? "Downgrade" : "Crossgrade"
                    count(event, period, previous: previousProduct)
                } else if let ended = before.expiresDate, purchased.timeIntervalSince(ended) > 1 {
                    count(
                        billingState(of: original, at: purchased.addingTimeInterval(-1)) == nil ? "Reactivate" : "Renewal from Billing Retry",
                        period
                    )
                } else if before.offerType == .introductory && period.offerType == nil {
                    count("Paid Subscription from Introductory Offer", period)
                } else {
                    count("Renew", period)
                }
            }
        }
        for notification in notifications {
            guard let signed = notification.payload.signedDate, signed >= start, signed < end,
                [.expired, .didFailToRenew].contains(notification.type),
                let transaction = notificationTransactionIds[notification.notificationUUID]?.lazy.compactMap({ self.transactions[$0] }).first,
                transaction.type == .autoRenewable, transaction.inAppOwnershipType != .familyShared
            else { continue }
            let periods = transaction.originalTransactionId.flatMap { history[$0] } ?? []
            let latest = periods.last ?? transaction
            switch (notification.type, notification.subtype) {
            case (.expired, .some(.billingRetry)): count("Canceled from Billing Retry", latest)
            case (.expired, _): count("Cancel", latest)
            case (_, .some(.gracePeriod)): count("Grace Period from Paid Subscription", latest)
            default: count("Billing Retry from Paid Subscription", latest)
            }
        }
        guard !counts.isEmpty else { return .noSales }
        let rows = counts.sorted { $0.key < $1.key }.map { key, quantity in
            let product = catalog.product(key.productId)
            return SubscriptionEventReportRow(
                eventDate: parsed.description,
                event: key.event,
                appName: catalog.bundleId,
                appAppleId: String(catalog.appAppleId),
                subscriptionName: key.productId,
                subscriptionAppleId: String(product?.reportAppleId ?? 0),
                subscriptionGroupId: product?.groupId,
                standardDuration: product?.period.map(Self.durationText),
                offerType: key.offerType.isEmpty ? nil : key.offerType,
                country: key.country,
                previousSubscriptionName: key.previous.isEmpty ? nil : key.previous,
                previousSubscriptionAppleId: key.previous.isEmpty ? nil : catalog.product(key.previous).map { String($0.reportAppleId) },
                quantity: quantity
            )
            .fields
        }
        return .report(ReportTable.tsv(columns: SubscriptionEventReportRow.columns, rows: rows))
    }

    /// Each subscription's paid and free periods that began before `date`, oldest first, by original transaction
    /// (family members' shared copies left out).
    func subscriptionPeriods(before date: Date) -> [String: [JWSTransactionDecodedPayload]] {
        var periods: [String: [JWSTransactionDecodedPayload]] = [:]
        for transaction in transactions.values where transaction.type == .autoRenewable && transaction.inAppOwnershipType != .familyShared {
            guard let original = transaction.originalTransactionId, let purchased = transaction.purchaseDate, purchased < date else { continue }
            periods[original, default: []].append(transaction)
        }
        for key in periods.keys {
            periods[key]!.sort { ($0.purchaseDate!, $0.transactionId ?? "") < ($1.purchaseDate!, $1.transactionId ?? "") }
        }
        return periods
    }

    /// Whether the subscription was in billing retry or grace at `date`, from the notifications sent about it: a
    /// failure to renew opens the state; a renewal, an expiry or a refund closes it.
    func billingState(of original: String, at date: Date) -> SimulatedSubscriptionState? {
        var state: SimulatedSubscriptionState?
        for notification in notifications {
            guard let signed = notification.payload.signedDate, signed <= date else { continue }
            guard let ids = notificationTransactionIds[notification.notificationUUID], ids.contains(original) else { continue }
            switch (notification.type, notification.subtype) {
            case (.didFailToRenew, .some(.gracePeriod)): state = .gracePeriod
            // Grace ending leaves the subscription in billing retry, not out of its billing trouble: a recovery after it
            // is a Renewal from Billing Retry, not a Reactivate.
            case (.didFailToRenew, _), (.gracePeriodExpired, _): state = .billingRetry
            case (.didRenew, _), (.expired, _), (.refund, _), (.subscribed, _): state = nil
            default: break
            }
        }
        return state
    }

    /// Apple's `Standard Subscription Duration` text.
    static func durationText(_ period: SubscriptionPeriod) -> String {
        let text = period.description
        switch text {
        case "P1W": return "7 Days"
        case "P1M": return "1 Month"
        case "P2M": return "2 Months"
        case "P3M": return "3 Months"
        case "P6M": return "6 Months"
        case "P1Y": return "1 Year"
        default: return text
        }
    }
}

import AppStoreWire
import Foundation

/// Auto-renewable subscriptions: first purchase, resubscription, level changes, renewals and billing failures.
extension SimulatedAppStore {
    /// The first subscription in a group: `SUBSCRIBED` / `INITIAL_BUY`, with the introductory offer when eligible.
    func subscribe(product: SimulatorCatalog.Product, account: inout SimulatedAccount, token: String?) throws
        -> SimulatedPurchase
    {
        let id = newTransactionId()
        let (expires, offer, price, discounted) = firstPeriod(product: product, account: &account)
        let transaction = makeTransaction(
            id: id, originalId: id, product: product, account: account, purchaseDate: now, originalPurchaseDate: now,
            expiresDate: expires, reason: .purchase, token: token, price: price, offer: offer)
        accounts[account.id] = account
        let subscription = SubscriptionRecord(
            originalTransactionId: id, accountId: account.id, groupId: product.groupId!, productId: product.id,
            autoRenewProductId: product.id, autoRenew: true, state: .active, expiresDate: expires,
            latestTransactionId: id, appAccountToken: token, expirationIntent: nil, billingRetryStart: nil,
            nextBillingCheck: nil, graceExpires: nil, renewals: 0, discountedPeriodsLeft: discounted,
            offer: offer?.1)
        subscriptions[id] = subscription
        let purchase = try record(transaction, account: account.id)
        try notify(.subscribed, .initialBuy, transaction: transaction, renewal: renewalInfo(subscription), status: .active)
        return purchase
    }

    /// Buying again in a group whose subscription lapsed: same original transaction, `SUBSCRIBED` / `RESUBSCRIBE`.
    func resubscribe(
        _ originalId: String, to product: SimulatorCatalog.Product, account: inout SimulatedAccount, token: String?
    ) throws -> SimulatedPurchase {
        guard var subscription = subscriptions[originalId], let original = transactions[originalId] else {
            throw SimulatorError.unknownTransaction(originalId)
        }
        let id = newTransactionId()
        let (expires, offer, price, discounted) = firstPeriod(product: product, account: &account)
        let transaction = makeTransaction(
            id: id, originalId: originalId, product: product, account: account, purchaseDate: now,
            originalPurchaseDate: original.originalPurchaseDate ?? now, expiresDate: expires, reason: .purchase,
            token: token ?? subscription.appAccountToken, price: price, offer: offer)
        accounts[account.id] = account
        subscription.productId = product.id
        subscription.autoRenewProductId = product.id
        subscription.autoRenew = true
        subscription.state = .active
        subscription.expiresDate = expires
        subscription.latestTransactionId = id
        subscription.expirationIntent = nil
        subscription.billingRetryStart = nil
        subscription.nextBillingCheck = nil
        subscription.graceExpires = nil
        subscription.discountedPeriodsLeft = discounted
        subscription.offer = offer?.1
        if let token { subscription.appAccountToken = token }
        subscriptions[originalId] = subscription
        let purchase = try record(transaction, account: account.id)
        try notify(.subscribed, .resubscribe, transaction: transaction, renewal: renewalInfo(subscription), status: .active)
        return purchase
    }

    /// A purchase of another product in a group with a live subscription (reference §10): an upgrade, or a
    /// crossgrade to the same duration, takes effect now; a downgrade, or a crossgrade to another duration, at
    /// the next renewal.
    func change(_ originalId: String, to product: SimulatorCatalog.Product, token: String?) throws -> SimulatedPurchase {
        guard var subscription = subscriptions[originalId], let current = catalog.product(subscription.productId),
            let latest = transactions[subscription.latestTransactionId], let account = accounts[subscription.accountId]
        else { throw SimulatorError.unknownTransaction(originalId) }
        guard product.id != subscription.productId else {
            throw SimulatorError.notAllowed("already subscribed to \(product.id)")
        }
        let newLevel = product.level!, currentLevel = current.level!
        let immediate = newLevel < currentLevel || (newLevel == currentLevel && product.period == current.period)
        if !immediate {
            subscription.autoRenewProductId = product.id
            subscriptions[originalId] = subscription
            try notify(
                .didChangeRenewalPref, .downgrade, transaction: latest, renewal: renewalInfo(subscription),
                status: subscription.state.status)
            // StoreKit hands the app the current transaction: nothing new is charged until the renewal.
            return SimulatedPurchase(transaction: latest, signedTransaction: try signer.sign(latest))
        }
        // The replaced transaction is marked upgraded and refunded pro rata by Apple.
        var replaced = latest
        replaced.isUpgraded = true
        transactions[subscription.latestTransactionId] = replaced
        let id = newTransactionId()
        let expires = product.period!.advance(now)
        let transaction = makeTransaction(
            id: id, originalId: originalId, product: product, account: account, purchaseDate: now,
            originalPurchaseDate: latest.originalPurchaseDate ?? now, expiresDate: expires, reason: .purchase,
            token: token ?? subscription.appAccountToken, price: product.price)
        subscription.productId = product.id
        subscription.autoRenewProductId = product.id
        subscription.expiresDate = expires
        subscription.latestTransactionId = id
        subscription.discountedPeriodsLeft = 0
        subscription.offer = nil
        subscriptions[originalId] = subscription
        let purchase = try record(transaction, account: account.id)
        try notify(.didChangeRenewalPref, .upgrade, transaction: transaction, renewal: renewalInfo(subscription), status: .active)
        return purchase
    }

    /// Turns auto-renew off (cancel in Settings) or back on: `DID_CHANGE_RENEWAL_STATUS`.
    public func setAutoRenew(_ enabled: Bool, originalTransactionId: String) throws {
        guard var subscription = subscriptions[originalTransactionId], let latest = transactions[subscription.latestTransactionId]
        else { throw SimulatorError.unknownTransaction(originalTransactionId) }
        guard subscription.autoRenew != enabled else { return }
        subscription.autoRenew = enabled
        subscription.expirationIntent = enabled ? nil : .customerCancelled
        subscriptions[originalTransactionId] = subscription
        try notify(
            .didChangeRenewalStatus, enabled ? .autoRenewEnabled : .autoRenewDisabled, transaction: latest,
            renewal: renewalInfo(subscription), status: subscription.state.status)
    }

    /// The first period of a (re)subscription: the introductory offer once per group and account.
    func firstPeriod(product: SimulatorCatalog.Product, account: inout SimulatedAccount)
        -> (expires: Date, offer: (OfferType, SimulatorCatalog.Offer)?, price: Int64, discountedPeriodsLeft: Int)
    {
        let groupId = product.groupId!
        guard let intro = product.introductoryOffer, !account.introductoryOfferGroupsUsed.contains(groupId) else {
            return (product.period!.advance(now), nil, product.price, 0)
        }
        account.introductoryOfferGroupsUsed.insert(groupId)
        let count = intro.periodCount ?? 1
        if intro.discountType == .payAsYouGo {
            // Each of the first `count` periods is charged at the offer price.
            return (intro.period.advance(now), (.introductory, intro), intro.price, count - 1)
        }
        return (intro.period.advance(now, times: count), (.introductory, intro), intro.price, 0)
    }

    // MARK: Time-driven events

    /// The subscription with the earliest event due at or before `limit`.
    func nextDueSubscription(before limit: Date) -> (Date, String)? {
        var best: (Date, String)?
        for (id, subscription) in subscriptions {
            guard let due = dueDate(subscription), due <= limit else { continue }
            // Ties resolve by id so runs are reproducible.
            if best == nil || due < best!.0 || (due == best!.0 && id < best!.1) { best = (due, id) }
        }
        return best
    }

    func dueDate(_ subscription: SubscriptionRecord) -> Date? {
        switch subscription.state {
        case .active: return subscription.expiresDate
        case .billingRetry, .gracePeriod:
            var dates = [subscription.nextBillingCheck, subscription.billingRetryStart.map { $0 + Self.billingRetryLimit }]
            if subscription.state == .gracePeriod { dates.append(subscription.graceExpires) }
            return dates.compactMap { $0 }.min()
        case .expired, .revoked: return nil
        }
    }

    func process(subscription id: String) throws {
        guard var subscription = subscriptions[id], let account = accounts[subscription.accountId],
            let latest = transactions[subscription.latestTransactionId]
        else { return }
        switch subscription.state {
        case .active:
            guard subscription.autoRenew else {
                subscription.state = .expired
                subscription.expirationIntent = .customerCancelled
                subscriptions[id] = subscription
                try notify(.expired, .voluntary, transaction: latest, renewal: renewalInfo(subscription), status: .expired)
                return
            }
            if account.billingFails {
                subscription.billingRetryStart = subscription.expiresDate
                subscription.nextBillingCheck = subscription.expiresDate + Self.billingRetryInterval
                subscription.expirationIntent = .billingError
                if let days = catalog.group(subscription.groupId)?.gracePeriodDays {
                    subscription.state = .gracePeriod
                    subscription.graceExpires = subscription.expiresDate + Double(days) * 86_400
                    subscriptions[id] = subscription
                    try notify(
                        .didFailToRenew, .gracePeriod, transaction: latest, renewal: renewalInfo(subscription),
                        status: .billingGracePeriod)
                } else {
                    subscription.state = .billingRetry
                    subscriptions[id] = subscription
                    try notify(.didFailToRenew, nil, transaction: latest, renewal: renewalInfo(subscription), status: .billingRetry)
                }
                return
            }
            try renew(&subscription, from: subscription.expiresDate, recovery: false)

        case .billingRetry, .gracePeriod:
            let giveUp = subscription.billingRetryStart.map { $0 + Self.billingRetryLimit } ?? now
            if subscription.state == .gracePeriod, let grace = subscription.graceExpires, grace <= now,
                grace <= (subscription.nextBillingCheck ?? .distantFuture), account.billingFails
            {
                subscription.state = .billingRetry
                subscriptions[id] = subscription
                try notify(.gracePeriodExpired, nil, transaction: latest, renewal: renewalInfo(subscription), status: .billingRetry)
                return
            }
            if !account.billingFails {
                // Recovered within grace: service continues from the missed renewal date; otherwise from now.
                let start = subscription.state == .gracePeriod ? subscription.expiresDate : now
                try renew(&subscription, from: start, recovery: true)
                return
            }
            if now >= giveUp {
                subscription.state = .expired
                subscription.expirationIntent = .billingError
                subscriptions[id] = subscription
                try notify(.expired, .billingRetry, transaction: latest, renewal: renewalInfo(subscription), status: .expired)
                return
            }
            subscription.nextBillingCheck = now + Self.billingRetryInterval
            subscriptions[id] = subscription
        case .expired, .revoked:
            return
        }
    }

    /// Charges the next period (the auto-renew product, so a pending downgrade takes effect): `DID_RENEW`.
    func renew(_ subscription: inout SubscriptionRecord, from start: Date, recovery: Bool) throws {
        guard let product = catalog.product(subscription.autoRenewProductId), let account = accounts[subscription.accountId],
            let latest = transactions[subscription.latestTransactionId]
        else { return }
        let id = newTransactionId()
        var offer: (OfferType, SimulatorCatalog.Offer)?
        var price = product.price
        if subscription.discountedPeriodsLeft > 0, let current = subscription.offer {
            offer = (.introductory, current)
            price = current.price
            subscription.discountedPeriodsLeft -= 1
        } else {
            subscription.offer = nil
        }
        let expires = product.period!.advance(start)
        let transaction = makeTransaction(
            id: id, originalId: subscription.originalTransactionId, product: product, account: account,
            purchaseDate: start, originalPurchaseDate: latest.originalPurchaseDate ?? start, expiresDate: expires,
            reason: .renewal, token: subscription.appAccountToken, price: price, offer: offer)
        subscription.productId = product.id
        subscription.state = .active
        subscription.expiresDate = expires
        subscription.latestTransactionId = id
        subscription.renewals += 1
        subscription.expirationIntent = nil
        subscription.billingRetryStart = nil
        subscription.nextBillingCheck = nil
        subscription.graceExpires = nil
        subscriptions[subscription.originalTransactionId] = subscription
        _ = try record(transaction, account: account.id)
        try notify(
            .didRenew, recovery ? .billingRecovery : nil, transaction: transaction, renewal: renewalInfo(subscription),
            status: .active)
    }
}

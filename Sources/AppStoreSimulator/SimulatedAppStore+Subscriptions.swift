import AppStoreTestSigning
import AppStoreWire
import Foundation

/// Auto-renewable subscriptions: first purchase, resubscription, level changes, offers, renewals and billing
/// failures.
extension SimulatedAppStore {
    /// The first subscription in a group: `SUBSCRIBED` / `INITIAL_BUY`, with the introductory offer when eligible.
    func subscribe(
        product: SimulatorCatalog.Product,
        account: inout SimulatedAccount,
        token: String?,
        offer requested: OfferRedemption?,
        introEligible: Bool? = nil,
        monthly: Bool = false,
        seats: Int? = nil
    ) throws -> SimulatedPurchase {
        let id = newTransactionId()
        let commitment = monthly ? newCommitment(product, from: now) : nil
        let first =
            try commitment.map { (expires: advance(Self.month, from: now), offer: nil, price: $0.monthlyPrice, discountedPeriodsLeft: 0) }
            ?? firstPeriod(
                product: product,
                account: &account,
                requested: requested,
                lapsed: false,
                introEligible: introEligible
            )
        var transaction = makeTransaction(
            id: id,
            originalId: id,
            product: product,
            account: account,
            purchaseDate: now,
            originalPurchaseDate: now,
            expiresDate: first.expires,
            reason: .purchase,
            token: token,
            price: first.price,
            offer: first.offer
        )
        bill(&transaction, under: commitment)
        bill(&transaction, seats: seats, product: product)
        accounts[account.id] = account
        var subscription = SubscriptionRecord(
            originalTransactionId: id,
            accountId: account.id,
            groupId: product.groupId!,
            productId: product.id,
            autoRenewProductId: product.id,
            autoRenew: true,
            state: .active,
            expiresDate: first.expires,
            latestTransactionId: id,
            appAccountToken: token,
            expirationIntent: nil,
            billingRetryStart: nil,
            nextBillingCheck: nil,
            graceExpires: nil,
            renewals: 0,
            discountedPeriodsLeft: first.discountedPeriodsLeft,
            offer: first.offer?.1,
            offerType: first.offer?.0,
            recentStart: now
        )
        subscription.commitment = commitment
        subscription.billingAnchor = billingAnchor(commitment == nil ? first.offer?.1.period ?? product.period! : Self.month, from: now)
        subscription.seats = product.multiSeat == nil ? nil : seats
        subscriptions[id] = subscription
        let purchase = try record(transaction, account: account.id)
        try notify(.subscribed, .initialBuy, transaction: transaction, renewal: renewalInfo(subscription), status: .active)
        if product.familyShareable == true { try shareWithFamily(transaction, purchaser: account) }
        return purchase
    }

    /// Buying again in a group whose subscription lapsed: same original transaction, `SUBSCRIBED` / `RESUBSCRIBE`.
    func resubscribe(
        _ originalId: String,
        to product: SimulatorCatalog.Product,
        account: inout SimulatedAccount,
        token: String?,
        offer requested: OfferRedemption?,
        introEligible: Bool? = nil,
        monthly: Bool = false
    ) throws -> SimulatedPurchase {
        guard var subscription = subscriptions[originalId], let original = transactions[originalId] else {
            throw SimulatorError.unknownTransaction(originalId)
        }
        let id = newTransactionId()
        let commitment = monthly ? newCommitment(product, from: now) : nil
        let first =
            try commitment.map { (expires: advance(Self.month, from: now), offer: nil, price: $0.monthlyPrice, discountedPeriodsLeft: 0) }
            ?? firstPeriod(
                product: product,
                account: &account,
                requested: requested,
                lapsed: true,
                introEligible: introEligible
            )
        var transaction = makeTransaction(
            id: id,
            originalId: originalId,
            product: product,
            account: account,
            purchaseDate: now,
            originalPurchaseDate: original.originalPurchaseDate ?? now,
            expiresDate: first.expires,
            reason: .purchase,
            token: token ?? subscription.appAccountToken,
            price: first.price,
            offer: first.offer
        )
        bill(&transaction, under: commitment)
        accounts[account.id] = account
        // Coming back within 60 days of the end of service continues the run; later starts a new one.
        if now.timeIntervalSince(subscription.expiresDate) > scaled(Self.continuityGap) || subscription.recentStart == nil {
            subscription.recentStart = now
        }
        subscription.productId = product.id
        subscription.autoRenewProductId = product.id
        subscription.autoRenew = true
        subscription.state = .active
        subscription.expiresDate = first.expires
        subscription.latestTransactionId = id
        subscription.expirationIntent = nil
        subscription.billingRetryStart = nil
        subscription.nextBillingCheck = nil
        subscription.graceExpires = nil
        subscription.discountedPeriodsLeft = first.discountedPeriodsLeft
        subscription.offer = first.offer?.1
        subscription.offerType = first.offer?.0
        subscription.offerIsForPendingChange = false
        subscription.priceIncreasePending = false
        subscription.commitment = commitment
        subscription.billingAnchor = billingAnchor(commitment == nil ? first.offer?.1.period ?? product.period! : Self.month, from: now)
        if let token { subscription.appAccountToken = token }
        subscriptions[originalId] = subscription
        let purchase = try record(transaction, account: account.id)
        try notify(.subscribed, .resubscribe, transaction: transaction, renewal: renewalInfo(subscription), status: .active)
        return purchase
    }

    /// A purchase in a group with a live subscription (reference §10): an upgrade, or a crossgrade to the same
    /// duration, takes effect now; a downgrade, or a crossgrade to another duration, at the next renewal. An offer
    /// redeemed on the way makes it `OFFER_REDEEMED` instead of `DID_CHANGE_RENEWAL_PREF`.
    func change(
        _ originalId: String,
        to product: SimulatorCatalog.Product,
        token: String?,
        offer requested: OfferRedemption?
    )
        throws -> SimulatedPurchase
    {
        guard var subscription = subscriptions[originalId], let current = catalog.product(subscription.productId),
            let latest = transactions[subscription.latestTransactionId], let account = accounts[subscription.accountId]
        else { throw SimulatorError.unknownTransaction(originalId) }
        if case .winBack = requested { throw SimulatorError.notAllowed("win-back offers are for lapsed subscribers") }
        let redeemed = try requested.map { try resolve($0, product: product) }

        if product.id == subscription.productId {
            let changePending = subscription.autoRenewProductId != product.id
            guard let redeemed else {
                guard changePending else { throw SimulatorError.notAllowed("already subscribed to \(product.id)") }
                // Choosing the current plan again while a downgrade waits for the renewal cancels the downgrade:
                // DID_CHANGE_RENEWAL_PREF without subtype, renewing into the current product again (reference §3).
                subscription.autoRenewProductId = product.id
                if subscription.offerIsForPendingChange {
                    subscription.offer = nil
                    subscription.offerType = nil
                    subscription.discountedPeriodsLeft = 0
                    subscription.offerIsForPendingChange = false
                }
                subscriptions[originalId] = subscription
                try notify(
                    .didChangeRenewalPref,
                    nil,
                    transaction: latest,
                    renewal: renewalInfo(subscription),
                    status: subscription.state.status
                )
                return SimulatedPurchase(transaction: latest, signedTransaction: try signer.sign(latest))
            }
            // An offer on the current product applies from the next renewal (and cancels a pending downgrade).
            subscription.autoRenewProductId = product.id
            subscription.offer = redeemed.1
            subscription.offerType = redeemed.0
            subscription.discountedPeriodsLeft = redeemed.1.periodCount ?? 1
            subscription.offerIsForPendingChange = false
            subscriptions[originalId] = subscription
            try notify(.offerRedeemed, nil, transaction: latest, renewal: renewalInfo(subscription), status: subscription.state.status)
            return SimulatedPurchase(transaction: latest, signedTransaction: try signer.sign(latest))
        }

        let newLevel = product.level!
        let currentLevel = current.level!
        let immediate = newLevel < currentLevel || (newLevel == currentLevel && product.period == current.period)
        if !immediate {
            subscription.autoRenewProductId = product.id
            if let redeemed {
                subscription.offer = redeemed.1
                subscription.offerType = redeemed.0
                subscription.discountedPeriodsLeft = redeemed.1.periodCount ?? 1
                subscription.offerIsForPendingChange = true
            }
            subscriptions[originalId] = subscription
            try notify(
                redeemed == nil ? .didChangeRenewalPref : .offerRedeemed,
                .downgrade,
                transaction: latest,
                renewal: renewalInfo(subscription),
                status: subscription.state.status
            )
            // StoreKit hands the app the current transaction: nothing new is charged until the renewal.
            return SimulatedPurchase(transaction: latest, signedTransaction: try signer.sign(latest))
        }
        // The replaced transaction is marked upgraded; Apple refunds its unused part pro rata.
        var replaced = latest
        replaced.isUpgraded = true
        transactions[subscription.latestTransactionId] = replaced
        modified(subscription.latestTransactionId)
        let id = newTransactionId()
        let expires = redeemed.map { advance($0.1.period, from: now) } ?? advance(product.period!, from: now)
        let transaction = makeTransaction(
            id: id,
            originalId: originalId,
            product: product,
            account: account,
            purchaseDate: now,
            originalPurchaseDate: latest.originalPurchaseDate ?? now,
            expiresDate: expires,
            reason: .purchase,
            token: token ?? subscription.appAccountToken,
            price: redeemed?.1.price ?? product.price,
            offer: redeemed
        )
        subscription.productId = product.id
        subscription.autoRenewProductId = product.id
        subscription.expiresDate = expires
        subscription.billingAnchor = billingAnchor(redeemed?.1.period ?? product.period!, from: now)
        subscription.latestTransactionId = id
        subscription.discountedPeriodsLeft = redeemed.map { ($0.1.periodCount ?? 1) - 1 } ?? 0
        subscription.offer = redeemed?.1
        subscription.offerType = redeemed?.0
        subscription.offerIsForPendingChange = false
        subscriptions[originalId] = subscription
        let purchase = try record(transaction, account: account.id)
        try notify(
            redeemed == nil ? .didChangeRenewalPref : .offerRedeemed,
            .upgrade,
            transaction: transaction,
            renewal: renewalInfo(subscription),
            status: .active
        )
        return purchase
    }

    /// Turns auto-renew off (cancel in Settings) or back on: `DID_CHANGE_RENEWAL_STATUS`.
    public func setAutoRenew(_ enabled: Bool, originalTransactionId: String) throws {
        guard var subscription = subscriptions[originalTransactionId],
            let latest = transactions[subscription.latestTransactionId]
        else { throw SimulatorError.unknownTransaction(originalTransactionId) }
        guard subscription.autoRenew != enabled else { return }
        subscription.autoRenew = enabled
        subscription.expirationIntent = enabled ? nil : .customerCancelled
        subscriptions[originalTransactionId] = subscription
        try notify(
            .didChangeRenewalStatus,
            enabled ? .autoRenewEnabled : .autoRenewDisabled,
            transaction: latest,
            renewal: renewalInfo(subscription),
            status: subscription.state.status
        )
    }

    /// Looks a requested offer up in the catalog.
    func resolve(_ requested: OfferRedemption, product: SimulatorCatalog.Product) throws -> (OfferType, SimulatorCatalog.Offer) {
        switch requested {
        case .promotional(let id):
            guard let offer = product.promotionalOffers?.first(where: { $0.id == id }) else {
                throw SimulatorError.notAllowed("\(product.id) has no promotional offer \(id)")
            }
            return (.promotional, offer)
        case .winBack(let id):
            guard let offer = product.winBackOffers?.first(where: { $0.id == id }) else {
                throw SimulatorError.notAllowed("\(product.id) has no win-back offer \(id)")
            }
            return (.winBack, offer)
        case .offerCode(let name):
            guard let offer = product.offerCodes?.first(where: { $0.id == name }) else {
                throw SimulatorError.notAllowed("\(product.id) has no offer code \(name)")
            }
            return (.offerCode, offer)
        }
    }

    /// The first period of a (re)subscription: a requested offer, else the introductory offer once per group.
    func firstPeriod(
        product: SimulatorCatalog.Product,
        account: inout SimulatedAccount,
        requested: OfferRedemption?,
        lapsed: Bool,
        introEligible: Bool? = nil
    ) throws -> (expires: Date, offer: (OfferType, SimulatorCatalog.Offer)?, price: Int64, discountedPeriodsLeft: Int) {
        let groupId = product.groupId!
        var chosen: (OfferType, SimulatorCatalog.Offer)?
        if let requested {
            if case .winBack = requested, !lapsed {
                throw SimulatorError.notAllowed("win-back offers are for lapsed subscribers")
            }
            chosen = try resolve(requested, product: product)
        } else if let intro = product.introductoryOffer,
            introEligible ?? !account.introductoryOfferGroupsUsed.contains(groupId)
        {
            // The developer's signed eligibility decision, when given, replaces Apple's once-per-group rule.
            chosen = (.introductory, intro)
        }
        guard let chosen else { return (advance(product.period!, from: now), nil, product.price, 0) }
        if chosen.0 == .introductory || product.introductoryOffer != nil {
            // Any offer redeemed in a group uses up its introductory offer, as Apple's eligibility rule counts it.
            account.introductoryOfferGroupsUsed.insert(groupId)
        }
        let count = chosen.1.periodCount ?? 1
        if chosen.1.discountType == .payAsYouGo {
            // Each of the first `count` periods is charged at the offer price.
            return (advance(chosen.1.period, from: now), chosen, chosen.1.price, count - 1)
        }
        return (advance(chosen.1.period, from: now, times: count), chosen, chosen.1.price, 0)
    }

    // MARK: Time-driven events

    /// The subscription with the earliest event due at or before `limit`.
    func nextDueSubscription(among candidates: [String], before limit: Date) -> (Date, String)? {
        var best: (Date, String)?
        for id in candidates {
            guard let subscription = subscriptions[id], subscription.sharedFrom == nil, let due = dueDate(subscription), due <= limit
            else { continue }
            // Ties resolve by id so runs are reproducible.
            if best == nil || due < best!.0 || (due == best!.0 && id < best!.1) { best = (due, id) }
        }
        return best
    }

    func dueDate(_ subscription: SubscriptionRecord) -> Date? {
        switch subscription.state {
        case .active: return subscription.expiresDate
        case .billingRetry, .gracePeriod:
            var dates = [subscription.nextBillingCheck, subscription.billingRetryStart.map { $0 + billingRetryLimit }]
            if subscription.state == .gracePeriod { dates.append(subscription.graceExpires) }
            return dates.compactMap { $0 }.min()
        case .expired, .revoked: return nil
        }
    }

    func expire(_ subscription: inout SubscriptionRecord, intent: ExpirationIntent, subtype: Subtype) throws {
        guard let latest = transactions[subscription.latestTransactionId] else { return }
        subscription.state = .expired
        subscription.expirationIntent = intent
        subscription.autoRenew = false
        subscriptions[subscription.originalTransactionId] = subscription
        if subscription.sharedFrom == nil {
            expirations.append((subscription.originalTransactionId, now, subtype == .billingRetry))
        }
        try notify(.expired, subtype, transaction: latest, renewal: renewalInfo(subscription), status: .expired)
        try mirrorToFamily(subscription)
    }

    func process(subscription id: String) throws {
        guard var subscription = subscriptions[id], let account = accounts[subscription.accountId],
            let latest = transactions[subscription.latestTransactionId]
        else { return }
        switch subscription.state {
        case .active:
            // A group member's copy ends with the purchaser's subscription.
            if let group = subscription.groupPurchase,
                !(subscriptions[group].map { $0.autoRenew && [.active, .gracePeriod, .billingRetry].contains($0.state) } ?? false)
            {
                return try expire(&subscription, intent: .customerCancelled, subtype: .voluntary)
            }
            // Turning auto-renew off during a 12-month commitment stops the renewal after it, not the payments left.
            let committed = subscription.commitment.map { $0.periodNumber < $0.totalPeriods } ?? false
            if !subscription.autoRenew && !committed {
                return try expire(&subscription, intent: .customerCancelled, subtype: .voluntary)
            }
            if notForSale.contains(subscription.autoRenewProductId) {
                return try expire(&subscription, intent: .productNotAvailable, subtype: .productNotForSale)
            }
            if subscription.priceIncreasePending {
                return try expire(&subscription, intent: .customerDidNotConsentToPriceIncrease, subtype: .priceIncrease)
            }
            if account.billingFails {
                subscription.billingRetryStart = subscription.expiresDate
                subscription.nextBillingCheck = subscription.expiresDate + billingRetryInterval
                subscription.expirationIntent = .billingError
                if let days = catalog.group(subscription.groupId)?.gracePeriodDays {
                    subscription.state = .gracePeriod
                    subscription.graceExpires = subscription.expiresDate + scaled(Double(days) * 86_400)
                    graceWindows[id, default: []].append((subscription.expiresDate, subscription.graceExpires!))
                    subscriptions[id] = subscription
                    try notify(
                        .didFailToRenew,
                        .gracePeriod,
                        transaction: latest,
                        renewal: renewalInfo(subscription),
                        status: .billingGracePeriod
                    )
                } else {
                    subscription.state = .billingRetry
                    subscriptions[id] = subscription
                    try notify(.didFailToRenew, nil, transaction: latest, renewal: renewalInfo(subscription), status: .billingRetry)
                }
                return
            }
            try renew(&subscription, from: subscription.expiresDate, recovery: false)

        case .billingRetry, .gracePeriod:
            let giveUp = subscription.billingRetryStart.map { $0 + billingRetryLimit } ?? now
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
                if subscription.state == .gracePeriod, var windows = graceWindows[id], !windows.isEmpty {
                    windows[windows.count - 1].end = now
                    graceWindows[id] = windows
                }
                try renew(&subscription, from: start, recovery: true)
                return
            }
            if now >= giveUp {
                return try expire(&subscription, intent: .billingError, subtype: .billingRetry)
            }
            subscription.nextBillingCheck = now + billingRetryInterval
            subscriptions[id] = subscription
        case .expired, .revoked:
            return
        }
    }

    /// Refunds `count` seats of a multiseat subscription's current period: the purchaser's transaction records them
    /// (`revokedSeatQuantity`), the subscription stays for the seats left, and the next renewal bills only those
    /// (`REFUND` / `SEATS`).
    public func refundSeats(originalTransactionId: String, count: Int) throws {
        guard var subscription = subscriptions[originalTransactionId], let seats = subscription.seats,
            var latest = transactions[subscription.latestTransactionId]
        else { throw SimulatorError.notAllowed("\(originalTransactionId) is not a multiseat subscription") }
        let refunded = Int(latest.multiSeatInfo?.revokedSeatQuantity ?? 0)
        let bought = Int(latest.quantity ?? 1)
        guard count >= 1, refunded + count < bought, count < seats else {
            throw SimulatorError.notAllowed("a seat refund leaves at least one seat (\(bought - refunded) left)")
        }
        latest.multiSeatInfo?.revokedSeatQuantity = Int32(refunded + count)
        latest.signedDate = now
        transactions[subscription.latestTransactionId] = latest
        modified(subscription.latestTransactionId)
        subscription.seats = seats - count
        subscriptions[originalTransactionId] = subscription
        try notify(.refund, .seats, transaction: latest, renewal: renewalInfo(subscription), status: subscription.state.status)
        // More claims than seats left: the newest claims go, as Apple unclaims seats itself (`UNCLAIM_SEATS`); an
        // APPLE-hosted group loses its newest members' copies (`REVOKE`).
        let left = bought - refunded - count
        if let claims = seatClaims[originalTransactionId], claims.order.count > left {
            try appleUnclaimsSeats(originalTransactionId: originalTransactionId, seatClaimIds: Array(claims.order.suffix(claims.order.count - left)))
        }
        let members = groupMembers(originalTransactionId: originalTransactionId)
        for member in members.suffix(max(0, members.count - left)).reversed() {
            try revokeAssignment(transactionId: member)
        }
    }

    /// `start` when a period of `period` begins a billing cycle counted in calendar months, else nil.
    func billingAnchor(_ period: SubscriptionPeriod, from start: Date) -> Date? { period.isMonthly ? start : nil }

    /// Charges the next period (the auto-renew product, so a pending downgrade takes effect): `DID_RENEW`.
    func renew(_ subscription: inout SubscriptionRecord, from start: Date, recovery: Bool) throws {
        guard let product = catalog.product(subscription.autoRenewProductId), let account = accounts[subscription.accountId],
            let latest = transactions[subscription.latestTransactionId]
        else { return }
        let id = newTransactionId()
        var offer: (OfferType, SimulatorCatalog.Offer)?
        var price = product.price
        if subscription.discountedPeriodsLeft > 0, let current = subscription.offer {
            offer = (subscription.offerType ?? .introductory, current)
            price = current.price
            subscription.discountedPeriodsLeft -= 1
        } else {
            subscription.offer = nil
            subscription.offerType = nil
        }
        // A monthly plan bills the next month of its commitment, or starts the next commitment when it ended.
        if var commitment = subscription.commitment {
            if commitment.periodNumber < commitment.totalPeriods {
                commitment.periodNumber += 1
                subscription.commitment = commitment
            } else {
                subscription.commitment = newCommitment(product, from: start)
            }
        }
        if let commitment = subscription.commitment { price = commitment.monthlyPrice }
        let period = subscription.commitment == nil ? product.period! : Self.month
        // Renewing on time keeps the cycle's billing day; service restarted later (billing recovered) starts a new one.
        let anchor = (start == subscription.expiresDate ? subscription.billingAnchor : nil) ?? start
        let expires = advance(period, from: start, keepingDayOf: anchor)
        subscription.billingAnchor = billingAnchor(period, from: anchor)
        var transaction = makeTransaction(
            id: id,
            originalId: subscription.originalTransactionId,
            product: product,
            account: account,
            purchaseDate: start,
            originalPurchaseDate: latest.originalPurchaseDate ?? start,
            expiresDate: expires,
            reason: .renewal,
            token: subscription.appAccountToken,
            price: price,
            offer: offer
        )
        bill(&transaction, under: subscription.commitment)
        bill(&transaction, seats: subscription.seats, product: product)
        // An organization's assignment renews as an assignment.
        if latest.inAppOwnershipType == .assigned { transaction.inAppOwnershipType = .assigned }
        subscription.productId = product.id
        subscription.state = .active
        subscription.expiresDate = expires
        subscription.latestTransactionId = id
        subscription.renewals += 1
        subscription.offerIsForPendingChange = false
        subscription.expirationIntent = nil
        subscription.billingRetryStart = nil
        subscription.nextBillingCheck = nil
        subscription.graceExpires = nil
        subscription.priceIncreaseAccepted = false
        if let limit = renewalLimit, subscription.renewals >= limit {
            // Apple's sandbox stops renewing after its cap; the subscription then lapses like a cancellation.
            subscription.autoRenew = false
        }
        subscriptions[subscription.originalTransactionId] = subscription
        _ = try record(transaction, account: account.id)
        try notify(
            .didRenew,
            recovery ? .billingRecovery : nil,
            transaction: transaction,
            renewal: renewalInfo(subscription),
            status: .active
        )
        try mirrorToFamily(subscription)
    }
}

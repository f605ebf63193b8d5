import Foundation
import GooglePlayWire

extension SimulatedPlayStore {
    /// One subscription purchase (one purchase token), the simulator's ground truth.
    public struct SubscriptionRecord: Sendable, Hashable {
        public var token: String
        public var productId: String
        public var basePlanId: String
        public var offerId: String?
        public var accountId: String
        public var obfuscatedAccountId: String?
        public var firstOrderId: String
        /// Orders after the first: renewals are `<first>..0`, `<first>..1`, …
        public var renewals: Int
        public var latestOrderId: String
        public var startTime: Date
        public var expiryTime: Date
        /// The billing anchor's day: months are added to the start, not to the last expiry, so 31 Jan → 28 Feb → 31 Mar.
        public var periodsPaid: Int
        public var anchor: Date
        public var inTrial: Bool
        public var autoRenew: Bool
        public var state: SubscriptionState
        public var acknowledged: Bool
        public var isTest: Bool
        public var regionCode: String
        public var graceEnds: Date?
        public var holdEnds: Date?
        public var canceledBy: String?
        public var canceledAt: Date?
        public var pendingOrderId: String?
        /// The token this purchase replaced (a plan change), and how.
        public var linkedPurchaseToken: String?
        public var replaced: (productId: String, basePlanId: String, mode: ReplacementMode)?
        /// A pause the user scheduled: it starts at the next renewal and lasts this many months.
        public var pauseMonths: Int?
        /// While paused: when the subscription resumes (and is charged again).
        public var resumesAt: Date?
        /// The price this subscriber renews at (nil: the plan's), and a price change on its way to them.
        public var price: Int64?
        public var priceChange: PriceChange?
        /// The promo code redeemed at signup: its first period is free.
        public var promoCode: String?
        /// Bought in the Play Store's subscriptions center after this expired subscription (no app, no account id).
        public var resubscribedFrom: (token: String, obfuscatedAccountId: String?)?

        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.token == rhs.token && lhs.hashValue == rhs.hashValue }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(token)
            hasher.combine(state)
            hasher.combine(resumesAt)
            hasher.combine(price)
            hasher.combine(priceChange)
            hasher.combine(expiryTime)
            hasher.combine(latestOrderId)
            hasher.combine(acknowledged)
            hasher.combine(linkedPurchaseToken)
        }
    }

    /// Whether the account's payment method is declined from now on (renewals fail until it is fixed).
    /// A change of a base plan's price as it reaches one subscriber: Google's `priceChangeDetails`.
    public struct PriceChange: Sendable, Hashable {
        public enum Mode: String, Sendable, Hashable {
            /// Applies at the next renewal, nothing asked.
            case decrease = "PRICE_DECREASE"
            /// The subscriber must accept, or the subscription ends at the renewal.
            case increase = "PRICE_INCREASE"
            /// The subscriber is told and charged unless they cancel.
            case optOutIncrease = "OPT_OUT_PRICE_INCREASE"
        }
        public var newPrice: Int64
        public var mode: Mode
        /// `OUTSTANDING` (awaiting the subscriber), `CONFIRMED`, `APPLIED` or `CANCELED`.
        public var state: String
    }

    /// The developer changes `productId`'s price for existing subscribers (legacy price cohorts in Play Console): each
    /// active subscription is told (`SUBSCRIPTION_PRICE_CHANGE_UPDATED`) and renews at `newPrice` from its next
    /// renewal — an increase only once the subscriber accepts (``acceptPriceChange(token:)``), or the subscription ends
    /// then; returns how many subscriptions it reached.
    @discardableResult
    public func changePrice(productId: String, to newPrice: Int64, optOut: Bool = false) throws -> Int {
        guard let plan = catalog.subscription(productId), newPrice > 0 else { throw PlayStoreError.invalid("no subscription \(productId)") }
        var reached = 0
        for token in subscriptions.keys.sorted() {
            guard var record = subscriptions[token], record.productId == productId, record.state.grantsAccess || record.state == .paused else {
                continue
            }
            let current = record.price ?? plan.price
            guard newPrice != current else { continue }
            let mode: PriceChange.Mode = newPrice < current ? .decrease : optOut ? .optOutIncrease : .increase
            record.priceChange = PriceChange(newPrice: newPrice, mode: mode, state: mode == .increase ? "OUTSTANDING" : "CONFIRMED")
            subscriptions[token] = record
            publish(subscription: record, .priceChangeUpdated)
            reached += 1
        }
        return reached
    }

    /// The subscriber accepts an outstanding price increase in the Play Store.
    public func acceptPriceChange(token: String) throws {
        guard var record = subscriptions[token], var change = record.priceChange, change.state == "OUTSTANDING" else {
            throw PlayStoreError.invalid("no price change awaits this subscriber")
        }
        change.state = "CONFIRMED"
        record.priceChange = change
        subscriptions[token] = record
        publish(subscription: record, .priceChangeUpdated)
    }

    /// A top-up of a prepaid plan (`BillingFlowParams` with the current token): charged the full price now, a new
    /// purchase token linked to the current one, access extended by one more period from the current end.
    public func topUp(_ token: String) throws -> SubscriptionRecord {
        guard var old = subscriptions[token], old.state == .active, let plan = catalog.subscription(old.productId), plan.prepaid else {
            throw PlayStoreError.invalid("only an active prepaid plan is topped up")
        }
        let expiry = periodEnd(months: plan.months, periods: 1, from: max(old.expiryTime, now), test: old.isTest)
        old.state = .expired
        old.expiryTime = now
        old.canceledBy = "replacement"
        old.canceledAt = now
        subscriptions[token] = old
        let first = nextOrderId()
        var record = old
        record.token = newPurchaseToken()
        record.firstOrderId = first
        record.latestOrderId = first
        record.renewals = 0
        record.startTime = now
        record.expiryTime = expiry
        record.anchor = now
        record.periodsPaid = 1
        record.state = .active
        record.acknowledged = false
        record.canceledBy = nil
        record.canceledAt = nil
        record.linkedPurchaseToken = token
        record.resubscribedFrom = nil
        subscriptions[record.token] = record
        bookCharge(record, amount: plan.price)
        publish(subscription: record, .purchased)
        return record
    }

    /// The user re-subscribes in the Play Store's subscriptions center after `expiredToken`'s subscription expired:
    /// a new purchase token with no link to the old one and no account id from an app, only
    /// `outOfAppPurchaseContext` naming the expired token (until it is acknowledged).
    public func resubscribe(after expiredToken: String) throws -> SubscriptionRecord {
        guard let expired = subscriptions[expiredToken], expired.state == .expired else {
            throw PlayStoreError.invalid("only an expired subscription is re-bought in the subscriptions center")
        }
        var record = try subscribe(productId: expired.productId, account: expired.accountId)
        record.resubscribedFrom = (expiredToken, expired.obfuscatedAccountId)
        subscriptions[record.token] = record
        return record
    }

    /// The subscriber schedules a pause of one to three months in the Play Store: it starts at the next renewal
    /// (`SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED` now, `SUBSCRIPTION_PAUSED` then).
    public func schedulePause(token: String, months: Int) throws {
        guard var record = subscriptions[token], record.state == .active, record.autoRenew, !record.inTrial, (1...3).contains(months) else {
            throw PlayStoreError.invalid("only an active, renewing, paid subscription pauses, for 1 to 3 months")
        }
        record.pauseMonths = months
        subscriptions[token] = record
        publish(subscription: record, .pauseScheduleChanged)
    }

    /// The subscriber resumes a paused subscription before its time: charged now, a new period from now.
    public func resume(token: String) throws {
        guard var record = subscriptions[token], record.state == .paused else { throw PlayStoreError.invalid("the subscription is not paused") }
        record.resumesAt = now
        subscriptions[token] = record
        runSubscriptionEvent(token)
    }

    public func setBillingFails(_ fails: Bool, account: String) {
        if fails { decliningAccounts.insert(account) } else { decliningAccounts.remove(account) }
    }

    /// The device's purchase of a subscription's base plan, with its free trial when `trial` and the plan has one.
    public func subscribe(
        productId: String,
        account accountId: String,
        obfuscatedAccountId: String? = nil,
        trial: Bool = false,
        promoCode: String? = nil
    ) throws -> SubscriptionRecord {
        guard let plan = catalog.subscription(productId) else { throw PlayStoreError.invalid("no subscription \(productId)") }
        guard let account = account(accountId) else { throw PlayStoreError.invalid("no account \(accountId)") }
        if let obfuscatedAccountId, obfuscatedAccountId.utf8.count > 64 { throw PlayStoreError.invalid("obfuscated ids are at most 64 characters") }
        if subscriptions.values.contains(where: { $0.accountId == accountId && $0.productId == productId && $0.state.grantsAccess }) {
            throw PlayStoreError(400, "itemAlreadyOwned", "\(productId) is already subscribed")
        }
        let useTrial = trial && plan.freeTrial != nil
        let expiry =
            useTrial
            ? now.addingTimeInterval(TimeInterval(plan.freeTrial!.days) * 86_400)
            : periodEnd(months: plan.months, periods: 1, from: now, test: account.isLicenseTester)
        let record = SubscriptionRecord(
            token: newPurchaseToken(),
            productId: productId,
            basePlanId: plan.basePlanId,
            offerId: useTrial ? plan.freeTrial?.offerId : nil,
            accountId: accountId,
            obfuscatedAccountId: obfuscatedAccountId,
            firstOrderId: nextOrderId(),
            renewals: 0,
            latestOrderId: "",
            startTime: now,
            expiryTime: expiry,
            periodsPaid: useTrial ? 0 : 1,
            // Paid periods count from the purchase; a trial's from its end.
            anchor: useTrial ? expiry : now,
            inTrial: useTrial,
            // A prepaid plan is paid once; it never renews.
            autoRenew: !plan.prepaid,
            state: .active,
            acknowledged: false,
            isTest: account.isLicenseTester,
            regionCode: account.regionCode
        )
        var stored = record
        stored.latestOrderId = record.firstOrderId
        if let promoCode, !useTrial, !plan.prepaid {
            // A promo code's offer: the first period free, then the plan's price.
            stored.promoCode = promoCode
            stored.inTrial = true
            stored.anchor = stored.expiryTime
            stored.periodsPaid = 0
        }
        subscriptions[stored.token] = stored
        if !useTrial && stored.promoCode == nil { bookCharge(stored, amount: plan.price) }
        publish(subscription: stored, .purchased)
        return stored
    }

    /// The user cancels in the Play Store: no more renewals; access until the expiry.
    public func cancelSubscription(token: String, by whom: String = "user") throws {
        guard var record = subscriptions[token], record.state == .active || record.state == .inGracePeriod else {
            throw PlayStoreError.invalid("the subscription is not active")
        }
        record.autoRenew = false
        record.state = .canceled
        record.canceledBy = whom
        record.canceledAt = now
        subscriptions[token] = record
        publish(subscription: record, .canceled)
    }

    /// The user restores a canceled subscription before it expires.
    public func restoreSubscription(token: String) throws {
        guard var record = subscriptions[token], record.state == .canceled, record.expiryTime > now else {
            throw PlayStoreError.invalid("nothing to restore")
        }
        record.autoRenew = true
        record.state = .active
        record.canceledBy = nil
        record.canceledAt = nil
        subscriptions[token] = record
        publish(subscription: record, .restarted)
    }

    public func subscription(_ token: String) -> SubscriptionRecord? { subscriptions[token] }

    /// Every subscription purchase (each purchase token), oldest first.
    public func allSubscriptions() -> [SubscriptionRecord] {
        subscriptions.values.sorted { ($0.startTime, $0.token) < ($1.startTime, $1.token) }
    }

    /// The user changes plan from the subscription `oldToken` (`BillingFlowParams.SubscriptionUpdateParams`): a new
    /// purchase token linked to the old one (`linkedPurchaseToken`), which ends now with a replacement cancellation.
    /// `withTimeProration` credits the old plan's unused time at the new price; `chargeProratedPrice` and
    /// `withoutProration` keep the old billing date; `chargeFullPrice` starts a full period now. `deferred` (the new
    /// plan from the old one's renewal) is not simulated yet.
    public func changePlan(from oldToken: String, to productId: String, mode: ReplacementMode) throws -> SubscriptionRecord {
        guard var old = subscriptions[oldToken], old.state.grantsAccess else {
            throw PlayStoreError.invalid("oldPurchaseToken is not an active subscription")
        }
        guard let oldPlan = catalog.subscription(old.productId), let plan = catalog.subscription(productId), productId != old.productId else {
            throw PlayStoreError.invalid("no other subscription \(productId)")
        }
        let expiry: Date
        switch mode {
        case .chargeFullPrice:
            expiry = periodEnd(months: plan.months, periods: 1, from: now, test: old.isTest)
        case .chargeProratedPrice, .withoutProration:
            expiry = old.expiryTime
        case .withTimeProration:
            let unused = max(0, old.expiryTime.timeIntervalSince(now))
            // The unused time's value at the old plan's monthly rate buys time at the new plan's monthly rate.
            let rate = (Double(oldPlan.price) / Double(oldPlan.months)) / (Double(max(1, plan.price)) / Double(plan.months))
            expiry = now.addingTimeInterval(old.inTrial ? unused : unused * rate)
        default:
            throw PlayStoreError.invalid("replacement mode \(mode.rawValue) is not simulated")
        }
        old.state = .expired
        old.autoRenew = false
        old.expiryTime = now
        old.canceledBy = "replacement"
        old.canceledAt = now
        subscriptions[oldToken] = old
        let first = nextOrderId()
        let record = SubscriptionRecord(
            token: newPurchaseToken(),
            productId: productId,
            basePlanId: plan.basePlanId,
            offerId: nil,
            accountId: old.accountId,
            obfuscatedAccountId: old.obfuscatedAccountId,
            firstOrderId: first,
            renewals: 0,
            latestOrderId: first,
            startTime: now,
            expiryTime: expiry,
            // The period bought now runs to `expiry`; renewals count months from it.
            periodsPaid: 0,
            anchor: expiry,
            inTrial: false,
            autoRenew: true,
            state: .active,
            acknowledged: false,
            isTest: old.isTest,
            regionCode: old.regionCode,
            linkedPurchaseToken: oldToken,
            replaced: (old.productId, old.basePlanId, mode)
        )
        subscriptions[record.token] = record
        switch mode {
        case .chargeFullPrice:
            bookCharge(record, amount: plan.price)
        case .chargeProratedPrice:
            // The difference in monthly price for the months left, to the cent.
            let months = max(0, old.expiryTime.timeIntervalSince(now)) / (30 * 86_400)
            let difference = max(0, plan.price / Int64(plan.months) - oldPlan.price / Int64(oldPlan.months))
            bookCharge(record, amount: Int64(Double(difference) * months / 10) * 10)
        default:
            // Nothing is charged until the renewal: the unused time pays for the new plan.
            break
        }
        publish(subscription: record, .purchased)
        return record
    }

    // MARK: The API

    public func subscriptionPurchase(packageName: String, token: String) throws -> SubscriptionPurchaseV2 {
        guard let record = subscriptions[token] else { throw PlayStoreError.tokenNotFound() }
        guard packageName == catalog.packageName else { throw PlayStoreError.wrongPackage() }
        let plan = catalog.subscription(record.productId)
        var canceled: CanceledStateContext?
        if record.state == .canceled || record.state == .expired {
            switch record.canceledBy {
            case "user": canceled = .init(userInitiatedCancellation: .init(cancelTime: record.canceledAt))
            case "developer": canceled = .init(developerInitiatedCancellation: PlayPresence())
            case "replacement": canceled = .init(replacementCancellation: PlayPresence())
            case "system", nil: canceled = record.state == .expired ? .init(systemInitiatedCancellation: PlayPresence()) : nil
            default: canceled = nil
            }
        }
        let declined = record.pendingOrderId.map { RenewalDeclinedContext(renewalDeclined: .init(pendingOrderId: $0)) }
        return SubscriptionPurchaseV2(
            regionCode: record.regionCode,
            startTime: record.startTime,
            subscriptionState: record.state,
            lineItems: [
                SubscriptionPurchaseLineItem(
                    productId: record.productId,
                    expiryTime: record.expiryTime,
                    latestSuccessfulOrderId: record.latestOrderId,
                    autoRenewingPlan: plan?.prepaid == true
                        ? nil
                        : AutoRenewingPlan(
                            autoRenewEnabled: record.autoRenew,
                            recurringPrice: plan.map { Money(currencyCode: $0.currency, milliunits: record.price ?? $0.price) },
                            priceChangeDetails: record.priceChange.flatMap { change in
                                plan.map {
                                    PriceChangeDetails(
                                        newPrice: Money(currencyCode: $0.currency, milliunits: change.newPrice),
                                        priceChangeMode: change.mode.rawValue,
                                        priceChangeState: change.state,
                                        expectedNewPriceChargeTime: change.state == "APPLIED" || change.state == "CANCELED"
                                            ? nil : record.resumesAt ?? record.expiryTime
                                    )
                                }
                            }
                        ),
                    // Top-ups are allowed at once (Play Console lets a plan require waiting first).
                    prepaidPlan: plan?.prepaid == true ? PrepaidPlan(allowExtendAfterTime: record.startTime) : nil,
                    offerDetails: OfferDetails(
                        basePlanId: record.basePlanId,
                        offerId: record.inTrial ? record.promoCode.map { _ in "promo" } ?? record.offerId : nil
                    ),
                    offerPhase: record.inTrial ? OfferPhase(freeTrial: PlayPresence()) : OfferPhase(basePrice: PlayPresence()),
                    // Google shows what an item replaced for 60 days after the purchase.
                    itemReplacement: record.replaced.flatMap { replaced in
                        now.timeIntervalSince(record.startTime) <= 60 * 86_400
                            ? ItemReplacement(productId: replaced.productId, basePlanId: replaced.basePlanId, replacementMode: replaced.mode)
                            : nil
                    },
                    signupPromotion: record.promoCode.map { SignupPromotion(vanityCode: .init(promotionCode: $0)) }
                )
            ],
            linkedPurchaseToken: record.linkedPurchaseToken,
            acknowledgementState: record.acknowledged ? .acknowledged : .pending,
            externalAccountIdentifiers: record.obfuscatedAccountId.map { ExternalAccountIdentifiers(obfuscatedExternalAccountId: $0) },
            testPurchase: record.isTest ? PlayPresence() : nil,
            pausedStateContext: record.state == .paused ? PausedStateContext(autoResumeTime: record.resumesAt) : nil,
            canceledStateContext: canceled,
            inGracePeriodStateContext: record.state == .inGracePeriod ? declined : nil,
            onHoldStateContext: record.state == .onHold ? declined : nil,
            // Google drops the context once the purchase is acknowledged.
            outOfAppPurchaseContext: record.acknowledged
                ? nil
                : record.resubscribedFrom.map {
                    OutOfAppPurchaseContext(
                        expiredExternalAccountIdentifiers: $0.obfuscatedAccountId.map { ExternalAccountIdentifiers(obfuscatedExternalAccountId: $0) },
                        expiredPurchaseToken: $0.token
                    )
                },
            etag: "\(record.latestOrderId):\(Int(record.expiryTime.timeIntervalSince1970))"
        )
    }

    public func acknowledgeSubscription(packageName: String, token: String) throws {
        guard var record = subscriptions[token] else { throw PlayStoreError.tokenNotFound() }
        guard packageName == catalog.packageName else { throw PlayStoreError.wrongPackage() }
        guard record.state != .expired else {
            throw PlayStoreError(410, "subscriptionPurchaseNoLongerAvailable", "The subscription purchase is no longer available.")
        }
        record.acknowledged = true
        subscriptions[token] = record
    }

    /// `subscriptionsv2.revoke`: access ends now and the latest charge is refunded (voided, source developer).
    public func revokeSubscription(packageName: String, token: String) throws {
        guard var record = subscriptions[token] else { throw PlayStoreError.tokenNotFound() }
        guard packageName == catalog.packageName else { throw PlayStoreError.wrongPackage() }
        guard record.state != .expired else { throw PlayStoreError.invalid("the subscription has expired") }
        end(&record, reason: .developer)
        subscriptions[token] = record
        bookRefund(orderId: record.latestOrderId)
        publish(subscription: record, .revoked)
        recordVoided(
            token: record.token,
            orderId: record.latestOrderId,
            purchasedAt: record.startTime,
            source: .developer,
            reason: .other,
            subscription: true
        )
    }

    /// Legacy `subscriptions.defer`: moves the expiry from `expected` (which must be the current one) to `desired`.
    public func deferSubscription(packageName: String, token: String, expected: Date, desired: Date) throws -> Date {
        guard var record = subscriptions[token] else { throw PlayStoreError.tokenNotFound() }
        guard packageName == catalog.packageName else { throw PlayStoreError.wrongPackage() }
        guard record.state == .active || record.state == .canceled else { throw PlayStoreError.invalid("the subscription is not active") }
        guard abs(expected.timeIntervalSince(record.expiryTime)) < 0.001, desired > record.expiryTime,
            desired.timeIntervalSince(record.expiryTime) <= 365 * 86_400
        else { throw PlayStoreError.invalid("deferralInfo") }
        record.expiryTime = desired
        record.anchor = desired
        record.periodsPaid = 0
        subscriptions[token] = record
        publish(subscription: record, .deferred)
        return desired
    }

    // MARK: The clock

    /// The next subscription event due at or before `target`, if any.
    func nextSubscriptionEvent(before target: Date) -> (Date, String)? {
        var next: (Date, String)?
        for record in subscriptions.values {
            let due: Date? =
                switch record.state {
                case .active where !record.acknowledged:
                    min(record.startTime.addingTimeInterval(Self.acknowledgementWindow), record.expiryTime)
                case .active, .canceled: record.expiryTime
                case .paused: record.resumesAt
                case .inGracePeriod, .onHold:
                    min(
                        nextRetry(record),
                        record.state == .inGracePeriod ? record.graceEnds ?? record.expiryTime : record.holdEnds ?? record.expiryTime
                    )
                default: nil
                }
            guard let due, due <= target else { continue }
            if next == nil || (due, record.token) < next! { next = (due, record.token) }
        }
        return next
    }

    /// Applies the event due now for one subscription: the acknowledgement deadline, a renewal (paid, or declined into
    /// the grace period), a daily retry, the end of grace (on hold) or of the hold (expired), or an expiry.
    func runSubscriptionEvent(_ token: String) {
        guard var record = subscriptions[token], let plan = catalog.subscription(record.productId) else { return }
        if record.state == .active, !record.acknowledged, now >= record.startTime.addingTimeInterval(Self.acknowledgementWindow) {
            // Google refunds and revokes a purchase not acknowledged in three days.
            end(&record, reason: .google)
            subscriptions[token] = record
            bookRefund(orderId: record.latestOrderId)
            publish(subscription: record, .revoked)
            recordVoided(
                token: token,
                orderId: record.latestOrderId,
                purchasedAt: record.startTime,
                source: .google,
                reason: .unacknowledgedPurchase,
                subscription: true
            )
            return
        }
        switch record.state {
        case .active where now >= record.expiryTime && record.pauseMonths != nil:
            // The scheduled pause starts where the paid period ends: no access, nothing charged, until it resumes.
            record.state = .paused
            record.resumesAt = addMonths(record.pauseMonths ?? 1, to: record.expiryTime)
            record.pauseMonths = nil
            subscriptions[token] = record
            publish(subscription: record, .paused)
        case .paused where now >= record.resumesAt ?? now:
            // Resuming is a renewal from the resume date (declined: into grace, as any renewal).
            record.state = .active
            record.expiryTime = record.resumesAt ?? now
            record.resumesAt = nil
            subscriptions[token] = record
            runSubscriptionEvent(token)
        case .active where now >= record.expiryTime && record.priceChange?.state == "OUTSTANDING":
            // An increase the subscriber never accepted ends the subscription at the renewal.
            record.priceChange?.state = "CANCELED"
            record.state = .expired
            record.autoRenew = false
            record.canceledBy = "system"
            record.canceledAt = now
            subscriptions[token] = record
            publish(subscription: record, .expired)
        case .active where now >= record.expiryTime && !record.autoRenew:
            // A prepaid plan's period ran out without a top-up.
            record.state = .expired
            record.canceledBy = "system"
            subscriptions[token] = record
            publish(subscription: record, .expired)
        case .active where now >= record.expiryTime && record.isTest && record.renewals >= Self.testRenewalLimit:
            // A license tester's accelerated subscription stops after six renewals.
            record.state = .expired
            record.autoRenew = false
            record.canceledBy = "system"
            record.canceledAt = now
            subscriptions[token] = record
            publish(subscription: record, .expired)
        case .active where now >= record.expiryTime:
            if decliningAccounts.contains(record.accountId) {
                record.state = .inGracePeriod
                record.pendingOrderId = orderId(record, renewal: record.renewals)
                record.graceEnds = record.expiryTime.addingTimeInterval(
                    record.isTest ? (plan.gracePeriodDays > 0 ? 300 : 0) : TimeInterval(plan.gracePeriodDays) * 86_400
                )
                record.expiryTime = record.graceEnds!
                subscriptions[token] = record
                publish(subscription: record, plan.gracePeriodDays > 0 ? .inGracePeriod : .onHold)
            } else {
                renew(&record, plan: plan, from: record.expiryTime)
                subscriptions[token] = record
                publish(subscription: record, .renewed)
            }
        case .canceled where now >= record.expiryTime:
            record.state = .expired
            subscriptions[token] = record
            publish(subscription: record, .expired)
        case .inGracePeriod, .onHold:
            if !decliningAccounts.contains(record.accountId), now < (record.state == .inGracePeriod ? record.graceEnds! : record.holdEnds!) {
                let recovered = record.state == .onHold
                // From grace the billing day stays; from hold the new period starts at the recovery.
                renew(&record, plan: plan, from: recovered ? now : record.anchor)
                subscriptions[token] = record
                publish(subscription: record, recovered ? .recovered : .renewed)
            } else if record.state == .inGracePeriod, now >= record.graceEnds! {
                record.state = .onHold
                record.holdEnds = now.addingTimeInterval(record.isTest ? 600 : TimeInterval(plan.accountHoldDays) * 86_400)
                record.expiryTime = record.graceEnds!
                subscriptions[token] = record
                publish(subscription: record, .onHold)
            } else if record.state == .onHold, now >= record.holdEnds! {
                record.state = .expired
                record.canceledBy = "system"
                subscriptions[token] = record
                publish(subscription: record, .expired)
            } else {
                subscriptions[token] = record
            }
        default:
            break
        }
    }

    /// Google retries a declined renewal about once a day (a license tester's every minute).
    private func nextRetry(_ record: SubscriptionRecord) -> Date {
        let since = record.anchor
        let step: TimeInterval = record.isTest ? 60 : 86_400
        let steps = (now.timeIntervalSince(since) / step).rounded(.down) + 1
        return since.addingTimeInterval(max(1, steps) * step)
    }

    /// A license tester's subscription renews at most this many times.
    public static let testRenewalLimit = 6

    /// Where `periods` periods of a `months`-month plan from `start` end: calendar months, or for a license tester's
    /// accelerated subscription 5 minutes a month-or-shorter period, 10 for 3 months, 15 for 6, 30 for a year.
    func periodEnd(months: Int, periods: Int, from start: Date, test: Bool) -> Date {
        guard test else { return addMonths(months * periods, to: start) }
        let minutes: Double =
            switch months {
            case ...1: 5
            case 2...3: 10
            case 4...6: 15
            default: 30
            }
        return start.addingTimeInterval(minutes * 60 * Double(periods))
    }

    private func renew(_ record: inout SubscriptionRecord, plan: PlayCatalog.Subscription, from start: Date) {
        record.latestOrderId = orderId(record, renewal: record.renewals)
        record.renewals += 1
        if record.inTrial || start != record.anchor {
            record.anchor = start
            record.periodsPaid = 0
        }
        record.inTrial = false
        record.periodsPaid += 1
        record.expiryTime = periodEnd(months: plan.months, periods: record.periodsPaid, from: record.anchor, test: record.isTest)
        record.state = record.autoRenew ? .active : .canceled
        record.graceEnds = nil
        record.holdEnds = nil
        record.pendingOrderId = nil
        if var change = record.priceChange, change.state == "CONFIRMED" {
            record.price = change.newPrice
            change.state = "APPLIED"
            record.priceChange = change
        }
        bookCharge(record, amount: record.price ?? plan.price)
    }

    /// Books a subscription order's charge (a license tester pays nothing).
    private func bookCharge(_ record: SubscriptionRecord, amount: Int64) {
        guard !record.isTest, let plan = catalog.subscription(record.productId) else { return }
        bookCharge(
            orderId: record.latestOrderId,
            sku: record.productId,
            subscription: true,
            amount: amount,
            currency: plan.currency,
            region: record.regionCode,
            basePlanId: record.basePlanId,
            offerId: record.offerId
        )
    }

    private func end(_ record: inout SubscriptionRecord, reason: VoidedSource) {
        record.state = .expired
        record.autoRenew = false
        record.expiryTime = min(record.expiryTime, now)
        record.canceledBy = reason == .developer ? "developer" : "system"
        record.canceledAt = now
    }

    private func orderId(_ record: SubscriptionRecord, renewal: Int) -> String { "\(record.firstOrderId)..\(renewal)" }

    func addMonths(_ months: Int, to date: Date) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar.date(byAdding: .month, value: months, to: date) ?? date.addingTimeInterval(TimeInterval(months) * 30 * 86_400)
    }

    private func publish(subscription record: SubscriptionRecord, _ type: SubscriptionNotificationType) {
        publish(
            DeveloperNotification(
                packageName: catalog.packageName,
                eventTimeMillis: PlayInt64(millis: now),
                subscriptionNotification: SubscriptionNotification(notificationType: type, purchaseToken: record.token)
            )
        )
    }
}

import AppStoreTestSigning
import AppStoreWire
import Crypto
import Foundation
import X509

/// The simulated App Store: sells a catalog to sandbox accounts on a virtual clock and produces exactly the signed
/// transactions, renewal infos and notifications Apple would.
///
/// Everything is deterministic for a given seed, catalog and sequence of calls. Time moves only through
/// ``advance(by:)``, which runs renewals, billing retries, grace periods and expiries in order.
public actor SimulatedAppStore {
    public internal(set) var catalog: SimulatorCatalog
    public let environment: AppStoreEnvironment
    let signer: JWSSigner
    /// The root certificate a verifier must pin to accept this store's data.
    public let signingRoot: Certificate
    var generator: DeterministicGenerator
    var now: Date
    var accounts: [String: SimulatedAccount] = [:]
    var accountOrder: [String] = []
    var transactions: [String: JWSTransactionDecodedPayload] = [:]
    var transactionOrder: [String] = []
    var transactionAccount: [String: String] = [:]
    var subscriptions: [String: SubscriptionRecord] = [:]
    /// A purchaser's original transaction id → its family members' copies (original ids), in the order they were made.
    var familyCopies: [String: [String]] = [:]
    var notifications: [SimulatedNotification] = []
    /// Every subscription that ended for want of renewal: when, and whether billing retry gave up (analytics truth).
    var expirations: [(originalTransactionId: String, at: Date, involuntary: Bool)] = []
    var nextTransactionNumber: Int64 = 1
    var notForSale: Set<String> = []
    /// A family member's transaction id → the purchaser's original transaction id it was shared from.
    var sharedCopies: [String: String] = [:]
    var massExtensions: [String: MassExtensionStatus] = [:]
    /// Billing grace periods each subscription went through (start = the missed renewal, end = recovery or expiry).
    var graceWindows: [String: [(start: Date, end: Date)]] = [:]
    /// Delivery state per notification UUID (present only while a delivery target is configured).
    var deliveries: [String: DeliveryRecord] = [:]
    var deliveryFaults = DeliveryFaults()
    /// Whether notifications are queued for sending (a webhook target is configured).
    public var deliversNotifications = false
    /// The transaction ids each notification concerns (its transaction and original), for history filtering.
    var notificationTransactionIds: [String: Set<String>] = [:]
    /// Transaction ids, oldest modification first (a refund or an upgrade moves a transaction to the end).
    var modificationOrder: [String] = []
    /// Order id (the customer's invoice) → its transaction ids.
    var orders: [String: [String]] = [:]
    var nextOrderNumber = 1
    /// Consumables the app finished (they leave receipts and history v1).
    var finished: Set<String> = []
    /// Transactions the app finished on the device (`Transaction.finish()`).
    var finishedOnDevice: Set<String> = []
    var retention = RetentionMessagingState()
    /// Seats claimed on multiseat purchases whose developer manages invitations, by original transaction id.
    var seatClaims: [String: SeatClaims] = [:]
    /// Analytics Reports API requests, by id.
    var analyticsRequests: [String: AnalyticsRequestRecord] = [:]
    /// The most rows one Analytics Reports segment holds (an instance with more is split, as Apple splits large ones).
    public var analyticsSegmentRows = 1_000
    /// Signs Analytics Reports download URLs (a new key per run: links do not outlive the simulator).
    let analyticsURLKey = SymmetricKey(size: .bits256)
    var consumptionAnswers: [String: ConsumptionRequest] = [:]
    /// Every accepted Send Consumption Information request (v1 and v2), as received.
    var consumptionLog: [ConsumptionAnswer] = []
    /// Test notification token → notification UUID.
    var testNotifications: [String: String] = [:]
    /// Ask to Buy requests waiting for the family organizer, by request id.
    var pendingAskToBuy: [String: (productId: String, accountId: String, options: PurchaseOptions)] = [:]
    /// Subscriptions stop renewing after this many renewals (Apple's sandbox stops at 12); nil for no limit.
    public var renewalLimit: Int?
    /// Version 2 of Send Consumption Information refuses non-renewing subscriptions (4000047), as Apple's did in
    /// April 2026; off by default (late 2026: version 2 takes every product type).
    public var consumptionV2RefusesNonRenewing = false
    /// How subscription time passes: calendar periods, or Apple's sandbox renewal rate (1 month = 5 minutes).
    public enum TimeScale: Sendable, Hashable {
        case calendar
        case sandboxRate
    }
    public private(set) var timeScale: TimeScale = .calendar
    /// The days and fiscal months App Store Connect's reports are cut by (Apple's: Pacific Time).
    public var reportCalendar = ReportCalendar.apple
    /// Billing retries are attempted once a (scaled) day until Apple gives up after 60 (scaled) days.
    var billingRetryInterval: TimeInterval { scaled(86_400) }
    var billingRetryLimit: TimeInterval { scaled(60 * 86_400) }

    public init(
        catalog: SimulatorCatalog,
        signingChain: AppStoreSigningChain,
        seed: UInt64 = 1,
        start: Date = Date(timeIntervalSince1970: 1_767_225_600),
        environment: AppStoreEnvironment = .sandbox
    ) throws {
        try catalog.validate()
        self.catalog = catalog
        self.signer = try signingChain.signer()
        self.signingRoot = signingChain.root
        self.generator = DeterministicGenerator(seed: seed)
        // Whole milliseconds, as Apple's dates are.
        self.now = Date(timeIntervalSince1970: (start.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        self.environment = environment
    }

    // MARK: Clock

    /// The simulator's current time.
    public var currentDate: Date { now }

    /// Moves the clock forward, processing every renewal, retry and expiry due on the way, in time order.
    public func advance(by interval: TimeInterval) throws {
        precondition(interval >= 0, "the simulated clock only moves forward")
        let target = now.addingTimeInterval(interval)
        // Processing a subscription changes only its own dates (and its family members' copies, which follow it and
        // are never due themselves), so what falls due on the way is among what is due by the target now: a year of
        // ten thousand subscribers scans those few, not every subscription at each renewal.
        let candidates = subscriptions.compactMap { id, subscription in
            subscription.sharedFrom == nil && (dueDate(subscription).map { $0 <= target } ?? false) ? id : nil
        }
        while let (date, id) = nextDueSubscription(among: candidates, before: target) {
            now = max(now, date)
            try process(subscription: id)
        }
        now = target
    }

    // MARK: Accounts

    /// Creates a sandbox tester in `storefront` (the catalog's first storefront by default), who gets the app now.
    public func createAccount(storefront: String? = nil) throws -> SimulatedAccount {
        let code = storefront ?? catalog.storefronts[0].code
        guard catalog.storefronts.contains(where: { $0.code == code }) else {
            throw SimulatorError.notAllowed("storefront \(code) is not in the catalog")
        }
        let account = SimulatedAccount(
            id: "sandbox-\(accounts.count + 1)@storekeeper.test",
            appTransactionId: String(704_000_000_000_000_000 + Int64(accounts.count + 1)),
            originalAppPurchaseDate: now,
            storefront: code,
            billingFails: false,
            introductoryOfferGroupsUsed: [],
            familyId: nil
        )
        accounts[account.id] = account
        accountOrder.append(account.id)
        return account
    }

    /// Makes every later charge on the account fail (or succeed again).
    public func setBillingFails(_ fails: Bool, account accountId: String) throws {
        guard accounts[accountId] != nil else { throw SimulatorError.unknownAccount(accountId) }
        accounts[accountId]?.billingFails = fails
    }

    // MARK: Purchases

    /// Buys `productId` for `account`, as StoreKit's `purchase(options:)` would.
    public func purchase(
        productId: String,
        account accountId: String,
        appAccountToken: UUID? = nil
    ) throws
        -> SimulatedPurchase
    {
        try purchase(productId: productId, account: accountId, options: PurchaseOptions(appAccountToken: appAccountToken))
    }

    /// Buys `productId` for `account` with StoreKit purchase options (token, offer, quantity).
    public func purchase(
        productId: String,
        account accountId: String,
        options: PurchaseOptions
    ) throws
        -> SimulatedPurchase
    {
        guard let product = catalog.product(productId) else { throw SimulatorError.unknownProduct(productId) }
        guard var account = accounts[accountId] else { throw SimulatorError.unknownAccount(accountId) }
        guard !notForSale.contains(productId) else { throw SimulatorError.notAllowed("\(productId) is not for sale") }
        guard !account.billingFails else { throw SimulatorError.notAllowed("the account's payment method was declined") }
        if let plan = product.multiSeat {
            guard (1...(plan.maximumSeats ?? 100)).contains(options.quantity) else {
                throw SimulatorError.notAllowed("seats must be 1–\(plan.maximumSeats ?? 100)")
            }
        } else {
            guard (1...10).contains(options.quantity), options.quantity == 1 || product.kind == .consumable else {
                throw SimulatorError.notAllowed("quantity must be 1, or 1–10 for a consumable")
            }
        }
        let token = options.appAccountToken?.uuidString.lowercased()

        switch product.kind {
        case .consumable, .nonConsumable, .nonRenewing:
            guard options.offer == nil else { throw SimulatorError.notAllowed("offers apply to subscriptions only") }
            if product.kind == .nonConsumable,
                transactions.values.contains(where: {
                    $0.productId == productId && transactionAccount[$0.transactionId ?? ""] == accountId
                        && $0.revocationDate == nil
                })
            {
                throw SimulatorError.notAllowed("\(productId) is already owned; restore instead")
            }
            let id = newTransactionId()
            var transaction = makeTransaction(
                id: id,
                originalId: id,
                product: product,
                account: account,
                purchaseDate: now,
                originalPurchaseDate: now,
                expiresDate: nil,
                reason: .purchase,
                token: token,
                price: product.price * Int64(options.quantity)
            )
            transaction.quantity = Int32(options.quantity)
            let purchase = try record(transaction, account: accountId)
            try notify(.oneTimeCharge, nil, transaction: transaction, renewal: nil, status: nil)
            if product.familyShareable == true, product.kind == .nonConsumable {
                try shareWithFamily(transaction, purchaser: account)
            }
            return purchase

        case .autoRenewable:
            let groupId = product.groupId!
            let monthly = options.billingPlan == .monthly
            if monthly {
                guard let price = product.monthlyCommitmentPrice, product.period == SubscriptionPeriod(value: 1, unit: .year) else {
                    throw SimulatorError.notAllowed("\(productId) offers no monthly billing plan with a 12-month commitment")
                }
                guard options.offer == nil else {
                    throw SimulatorError.notAllowed("the monthly billing plan is sold without offers here")
                }
                if let existing = subscriptions.values.first(where: { $0.accountId == accountId && $0.groupId == groupId && $0.sharedFrom == nil }),
                    existing.state != .expired && existing.state != .revoked
                {
                    throw SimulatorError.notAllowed("a live subscription changes plan at its next renewal, not by a new purchase")
                }
                _ = price
            }
            if let existing = subscriptions.values.first(where: {
                $0.accountId == accountId && $0.groupId == groupId && $0.sharedFrom == nil
            }) {
                if existing.state == .expired || existing.state == .revoked {
                    return try resubscribe(
                        existing.originalTransactionId,
                        to: product,
                        account: &account,
                        token: token,
                        offer: options.offer,
                        introEligible: options.introductoryOfferEligible,
                        monthly: monthly
                    )
                }
                return try change(existing.originalTransactionId, to: product, token: token, offer: options.offer)
            }
            if case .winBack = options.offer {
                throw SimulatorError.notAllowed("win-back offers are for lapsed subscribers")
            }
            if case .promotional = options.offer {
                throw SimulatorError.notAllowed("promotional offers are for current or lapsed subscribers")
            }
            return try subscribe(
                product: product,
                account: &account,
                token: token,
                offer: options.offer,
                introEligible: options.introductoryOfferEligible,
                monthly: monthly,
                seats: product.multiSeat == nil ? nil : options.quantity
            )
        }
    }

    /// Takes a product off sale (new purchases refused; subscriptions to it expire at renewal) or back on.
    public func setForSale(_ forSale: Bool, productId: String) throws {
        guard catalog.product(productId) != nil else { throw SimulatorError.unknownProduct(productId) }
        if forSale { notForSale.remove(productId) } else { notForSale.insert(productId) }
    }

    // MARK: Reading

    /// The signed transactions of an account, oldest first (what `Transaction.all` would hold).
    public func transactions(account accountId: String) -> [JWSTransactionDecodedPayload] {
        transactionOrder.compactMap { transactions[$0] }.filter { transactionAccount[$0.transactionId ?? ""] == accountId }
    }

    /// One transaction by id.
    public func transaction(_ id: String) throws -> JWSTransactionDecodedPayload {
        guard let transaction = transactions[id] else { throw SimulatorError.unknownTransaction(id) }
        return transaction
    }

    /// Signs a transaction again as Apple would serve it now (Get Transaction Info).
    public func signedTransaction(_ id: String) throws -> String {
        var transaction = try transaction(id)
        transaction.signedDate = now
        return try signer.sign(transaction)
    }

    /// Every notification sent so far, in order.
    public func sentNotifications() -> [SimulatedNotification] { notifications }

    /// The subscription state of an original transaction.
    public func subscriptionState(_ originalTransactionId: String) throws -> SimulatedSubscriptionState {
        guard let record = subscriptions[originalTransactionId] else {
            throw SimulatorError.unknownTransaction(originalTransactionId)
        }
        return record.state
    }

    /// The signed renewal info of a subscription as Apple would serve it now.
    public func signedRenewalInfo(_ originalTransactionId: String) throws -> String {
        guard let record = subscriptions[originalTransactionId] else {
            throw SimulatorError.unknownTransaction(originalTransactionId)
        }
        return try signer.sign(renewalInfo(record))
    }

    // MARK: Building blocks

    func newTransactionId() -> String {
        defer { nextTransactionNumber += 1 }
        return String(2_000_000_000_000_000 + nextTransactionNumber)
    }

    func storefront(of account: SimulatedAccount) -> SimulatorCatalog.Storefront {
        catalog.storefronts.first { $0.code == account.storefront } ?? catalog.storefronts[0]
    }

    func makeTransaction(
        id: String,
        originalId: String,
        product: SimulatorCatalog.Product,
        account: SimulatedAccount,
        purchaseDate: Date,
        originalPurchaseDate: Date,
        expiresDate: Date?,
        reason: TransactionReason,
        token: String?,
        price: Int64,
        offer: (OfferType, SimulatorCatalog.Offer)? = nil
    ) -> JWSTransactionDecodedPayload {
        let storefront = storefront(of: account)
        return JWSTransactionDecodedPayload(
            transactionId: id,
            originalTransactionId: originalId,
            webOrderLineItemId: product.kind == .autoRenewable ? String(Int64(id)! - 1_000_000_000_000_000) : nil,
            bundleId: catalog.bundleId,
            productId: product.id,
            subscriptionGroupIdentifier: product.groupId,
            purchaseDate: purchaseDate,
            originalPurchaseDate: originalPurchaseDate,
            expiresDate: expiresDate,
            quantity: 1,
            type: product.kind.productType,
            appAccountToken: token,
            inAppOwnershipType: .purchased,
            signedDate: now,
            offerType: offer?.0,
            offerIdentifier: offer.flatMap { $0.0 == .introductory ? nil : $0.1.id },
            offerDiscountType: offer?.1.discountType,
            offerPeriod: offer.map { offerPeriod($0.1) },
            environment: environment,
            storefront: storefront.code,
            storefrontId: storefront.id,
            transactionReason: reason,
            price: price,
            currency: storefront.currency,
            appTransactionId: account.appTransactionId
        )
    }

    func offerPeriod(_ offer: SimulatorCatalog.Offer) -> String {
        SubscriptionPeriod(value: offer.period.value * (offer.periodCount ?? 1), unit: offer.period.unit).description
    }

    func record(_ transaction: JWSTransactionDecodedPayload, account accountId: String) throws -> SimulatedPurchase {
        let id = transaction.transactionId!
        if transactions[id] == nil {
            transactionOrder.append(id)
            // Each charge is its own invoice, as each renewal's receipt email is.
            orders[String(format: "MK%08X", nextOrderNumber)] = [id]
            nextOrderNumber += 1
        } else {
            // Only a changed transaction (a refund, a revocation) moves; scanning for a new one made a run of n
            // purchases cost n² string comparisons (13% of `bench-purchases`' CPU at 20,000).
            modificationOrder.removeAll { $0 == id }
        }
        transactions[id] = transaction
        modificationOrder.append(id)
        transactionAccount[id] = accountId
        return SimulatedPurchase(transaction: transaction, signedTransaction: try signer.sign(transaction))
    }

    func renewalInfo(_ record: SubscriptionRecord) -> JWSRenewalInfoDecodedPayload {
        let product = catalog.product(record.autoRenewProductId)
        let account = accounts[record.accountId]
        return JWSRenewalInfoDecodedPayload(
            originalTransactionId: record.originalTransactionId,
            productId: record.productId,
            autoRenewProductId: record.autoRenewProductId,
            autoRenewStatus: record.autoRenew ? .on : .off,
            expirationIntent: record.expirationIntent,
            isInBillingRetryPeriod: record.state == .billingRetry || record.state == .gracePeriod,
            gracePeriodExpiresDate: record.state == .gracePeriod ? record.graceExpires : nil,
            priceIncreaseStatus: record.priceIncreasePending ? 0 : (record.priceIncreaseAccepted ? 1 : nil),
            offerType: record.discountedPeriodsLeft > 0 ? record.offerType : nil,
            offerIdentifier: record.discountedPeriodsLeft > 0 && record.offerType != .introductory ? record.offer?.id : nil,
            offerDiscountType: record.discountedPeriodsLeft > 0 ? record.offer?.discountType : nil,
            offerPeriod: record.discountedPeriodsLeft > 0 ? record.offer.map(offerPeriod) : nil,
            signedDate: now,
            environment: environment,
            recentSubscriptionStartDate: record.recentStart,
            renewalDate: record.expiresDate,
            renewalPrice: record.commitment?.monthlyPrice ?? seatPrice(product, seats: record.seats) ?? product?.price,
            currency: account.map { storefront(of: $0).currency },
            eligibleWinBackOfferIds: eligibleWinBackOffers(record),
            appAccountToken: record.appAccountToken,
            appTransactionId: account?.appTransactionId,
            renewalBillingPlanType: record.commitment == nil ? nil : .monthly,
            commitmentInfo: record.commitment.map { commitment in
                // What happens when the commitment ends: another 12 months, paid monthly, if auto-renew is on.
                RenewalCommitmentInfo(
                    commitmentAutoRenewProductId: record.autoRenewProductId,
                    commitmentAutoRenewStatus: record.autoRenew ? .on : .off,
                    commitmentRenewalBillingPlanType: .monthly,
                    commitmentRenewalDate: commitment.expires,
                    commitmentRenewalPrice: product?.monthlyCommitmentPrice ?? commitment.monthlyPrice
                )
            },
            multiSeatInfo: record.seats.flatMap { seats in
                product?.multiSeat.map { RenewalMultiSeatInfo(renewalPriceTiers: $0.priceTiers(seats: seats)) }
            },
            renewalQuantity: record.seats.map(Int32.init)
        )
    }

    /// Marks `transaction` as one payment of `commitment` (API 1.21's `billingPlanType` and `commitmentInfo`).
    func bill(_ transaction: inout JWSTransactionDecodedPayload, under commitment: Commitment?) {
        guard let commitment else { return }
        transaction.billingPlanType = .monthly
        transaction.commitmentInfo = CommitmentInfo(
            billingPeriodNumber: Int32(commitment.periodNumber),
            totalBillingPeriods: Int32(commitment.totalPeriods),
            commitmentExpiresDate: commitment.expires,
            commitmentPrice: commitment.totalPrice
        )
    }

    /// A multiseat period's seats on `transaction`: the count as `quantity`, the tiers, and the average per seat as
    /// `price`, as Apple reports them.
    func bill(_ transaction: inout JWSTransactionDecodedPayload, seats: Int?, product: SimulatorCatalog.Product) {
        guard let seats, let plan = product.multiSeat else { return }
        transaction.quantity = Int32(seats)
        transaction.multiSeatInfo = TransactionMultiSeatInfo(
            invitationManagement: InvitationManagement(rawValue: plan.invitationManagement),
            priceTiers: plan.priceTiers(seats: seats)
        )
        transaction.price = seatPrice(product, seats: seats)
    }

    /// The average price of a seat when `seats` are bought (Apple's `price` on a multiseat transaction).
    func seatPrice(_ product: SimulatorCatalog.Product?, seats: Int?) -> Int64? {
        guard let seats, seats > 0, let plan = product?.multiSeat else { return nil }
        return plan.totalPrice(seats: seats) / Int64(seats)
    }

    /// A new 12-month commitment starting at `start`, paid monthly at `product`'s monthly price.
    func newCommitment(_ product: SimulatorCatalog.Product, from start: Date) -> Commitment? {
        guard let price = product.monthlyCommitmentPrice, product.period == SubscriptionPeriod(value: 1, unit: .year) else { return nil }
        return Commitment(
            periodNumber: 1,
            totalPeriods: 12,
            expires: advance(SubscriptionPeriod(value: 1, unit: .year), from: start),
            monthlyPrice: price
        )
    }

    static let month = SubscriptionPeriod(value: 1, unit: .month)

    /// Lapses up to this long (60 days, scaled like every other duration) keep a run of service continuous.
    static let continuityGap: TimeInterval = 60 * 86_400

    /// The win-back offers a lapsed subscriber may redeem, best first: those of the product they left, then those
    /// of the group's other products by level, in catalog order, less any the customer already redeemed in the
    /// group. `nil` (the field absent) for live or revoked subscriptions and when there is none.
    func eligibleWinBackOffers(_ record: SubscriptionRecord) -> [String]? {
        guard record.state == .expired, record.sharedFrom == nil else { return nil }
        let group = catalog.products.filter { $0.groupId == record.groupId }
        let ordered =
            group.filter { $0.id == record.productId }
            + group.filter { $0.id != record.productId }.sorted { ($0.level ?? 0, $0.id) < ($1.level ?? 0, $1.id) }
        var candidates: [String] = []
        for product in ordered {
            for offer in product.winBackOffers ?? [] where !candidates.contains(offer.id) { candidates.append(offer.id) }
        }
        // Most catalogs declare none: skip the scan of the customer's transactions then.
        guard !candidates.isEmpty else { return nil }
        let redeemed = Set(
            transactionOrder.compactMap { transactions[$0] }.filter {
                transactionAccount[$0.transactionId ?? ""] == record.accountId && $0.subscriptionGroupIdentifier == record.groupId
                    && $0.offerType == .winBack
            }.compactMap(\.offerIdentifier)
        )
        let ids = candidates.filter { !redeemed.contains($0) }
        return ids.isEmpty ? nil : ids
    }

    func notify(
        _ type: NotificationTypeV2,
        _ subtype: Subtype?,
        transaction: JWSTransactionDecodedPayload?,
        renewal: JWSRenewalInfoDecodedPayload?,
        status: SubscriptionStatus?,
        consumptionRequestReason: ConsumptionRequestReason? = nil,
        unclaimInfo: UnclaimInfo? = nil
    ) throws {
        var renewal = renewal
        var status = status
        if transaction?.type == .autoRenewable, let originalId = transaction?.originalTransactionId,
            let record = subscriptions[originalId]
        {
            // Every V2 notification about an auto-renewable carries the subscription's status and renewal info at
            // signedDate (reference §3), whatever the event: REFUND_DECLINED and a refund of an older period too.
            if renewal == nil { renewal = renewalInfo(record) }
            if status == nil { status = record.state.status }
        }
        var signedTransaction: String?
        if var transaction {
            transaction.signedDate = now
            signedTransaction = try signer.sign(transaction)
        }
        var signedRenewal: String?
        if var renewal {
            renewal.signedDate = now
            signedRenewal = try signer.sign(renewal)
        }
        let payload = ResponseBodyV2DecodedPayload(
            notificationType: type,
            subtype: subtype,
            notificationUUID: generator.uuid().uuidString.lowercased(),
            version: "2.0",
            signedDate: now,
            data: NotificationData(
                appAppleId: environment == .production ? catalog.appAppleId : nil,
                bundleId: catalog.bundleId,
                bundleVersion: "1",
                environment: environment,
                signedTransactionInfo: signedTransaction,
                signedRenewalInfo: signedRenewal,
                status: status,
                consumptionRequestReason: consumptionRequestReason
            ),
            unclaimInfo: unclaimInfo
        )
        append(SimulatedNotification(payload: payload, signedPayload: try signer.sign(payload)), transaction: transaction)
    }

    /// Records a sent notification and, when delivering, queues its first send for now.
    func append(_ notification: SimulatedNotification, transaction: JWSTransactionDecodedPayload?) {
        notifications.append(notification)
        let uuid = notification.notificationUUID
        notificationTransactionIds[uuid] = Set([transaction?.transactionId, transaction?.originalTransactionId].compactMap { $0 })
        if deliversNotifications { deliveries[uuid] = DeliveryRecord(nextAttempt: now) }
    }

    /// Switches between calendar time and Apple's sandbox renewal rate.
    public func setTimeScale(_ scale: TimeScale) { timeScale = scale }

    /// `date` moved on by `period` on the current time scale.
    func advance(_ period: SubscriptionPeriod, from date: Date, times: Int = 1, keepingDayOf anchor: Date? = nil) -> Date {
        switch timeScale {
        case .calendar: period.advance(date, times: times, keepingDayOf: anchor)
        case .sandboxRate: date + period.sandboxDuration * Double(times)
        }
    }

    /// A real-world duration on the current time scale (the sandbox also compresses grace periods, retries and
    /// extensions, at its monthly rate: 30 days = 5 minutes).
    func scaled(_ interval: TimeInterval) -> TimeInterval {
        switch timeScale {
        case .calendar: interval
        case .sandboxRate: interval * (5 * 60) / (30 * 86_400)
        }
    }

    /// Moves a transaction to the end of the modification order (history is sorted by last modification).
    func modified(_ id: String) {
        modificationOrder.removeAll { $0 == id }
        modificationOrder.append(id)
    }

    /// Turns queuing of notification sends on (a webhook target is configured) or off.
    public func setDeliversNotifications(_ enabled: Bool) { deliversNotifications = enabled }
}

extension SimulatedAppStore {
    /// Every transaction of an account, signed as Apple would serve it now (StoreKit 2's `Transaction.all`).
    public func signedTransactions(account accountId: String) throws -> [String] {
        guard accounts[accountId] != nil else { throw SimulatorError.unknownAccount(accountId) }
        return try transactions(account: accountId).compactMap(\.transactionId).map { try signedTransaction($0) }
    }
}

extension SimulatedAppStore {
    /// Every account id, in creation order.
    public func accountIds() -> [String] { accountOrder }
}

extension SimulatedAppStore {
    /// One account.
    public func account(_ id: String) -> SimulatedAccount? { accounts[id] }
}

extension SimulatedAppStore {
    /// What a restore gives back (StoreKit 2's `Transaction.currentEntitlements` after `AppStore.sync()`): owned
    /// non-consumables, non-renewing passes, and the latest transaction of each live subscription, signed now.
    public func restore(account accountId: String) throws -> [String] {
        guard accounts[accountId] != nil else { throw SimulatorError.unknownAccount(accountId) }
        var ids: [String] = []
        for transaction in transactions(account: accountId) where transaction.revocationDate == nil {
            guard let id = transaction.transactionId else { continue }
            switch transaction.type {
            case .nonConsumable?, .nonRenewing?:
                ids.append(id)
            case .autoRenewable?:
                if let subscription = subscriptions[transaction.originalTransactionId ?? ""], subscription.latestTransactionId == id,
                    subscription.state != .expired, subscription.state != .revoked
                {
                    ids.append(id)
                }
            default:
                continue
            }
        }
        return try ids.map { try signedTransaction($0) }
    }
}

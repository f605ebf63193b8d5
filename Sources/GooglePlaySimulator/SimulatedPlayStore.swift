import Foundation
import GooglePlayWire
import WebTokens
import _CryptoExtras

/// The simulated Google Play: sells a catalog's one-time products to accounts on a virtual clock and serves what
/// the Play Developer API serves about them — purchases (pending, purchased, canceled), acknowledgement and
/// consumption with Google's three-day rule (an unacknowledged purchase is refunded and revoked), refunds whole or by
/// quantity, and the voided purchases they leave. Access to the API is by service account, as at Google.
public actor SimulatedPlayStore {
    /// One one-time purchase, the simulator's ground truth.
    public struct OneTimePurchase: Sendable, Hashable {
        public var token: String
        public var orderId: String
        public var productId: String
        public var accountId: String
        public var obfuscatedAccountId: String?
        public var obfuscatedProfileId: String?
        public var quantity: Int32
        public var refundableQuantity: Int32
        public var state: PurchaseState
        /// When the user bought it (a pending purchase: when it was started).
        public var purchasedAt: Date
        /// When it became purchased: the three-day acknowledgement window starts here.
        public var completedAt: Date?
        public var acknowledged: Bool
        public var consumed: Bool
        public var developerPayload: String?
        public var isTest: Bool
        public var regionCode: String
        /// The promo code redeemed for it (free: nothing charged), if any.
        public var promoCode: String?
    }

    /// One entry of the voided purchases list, with when Google's systems saw it (what the list's window filters on).
    public struct Voided: Sendable, Hashable {
        public var purchase: VoidedPurchase
        public var recordedAt: Date
        /// Quantity-based partial refunds appear only when the caller asks for them.
        public var isPartial: Bool
        /// Subscriptions appear only with `type=1`.
        public var isSubscription: Bool
    }

    public struct Account: Sendable, Hashable {
        public var id: String
        public var isLicenseTester: Bool
        public var regionCode: String
    }

    /// How long after completion an unacknowledged purchase is refunded and revoked.
    public static let acknowledgementWindow: TimeInterval = 3 * 86_400
    /// How far back the voided purchases list looks.
    public static let voidedLookBack: TimeInterval = 30 * 86_400

    public let catalog: PlayCatalog
    public private(set) var now: Date
    private var accounts: [String: Account] = [:]
    var subscriptions: [String: SubscriptionRecord] = [:]
    var decliningAccounts: Set<String> = []
    private var purchases: [String: OneTimePurchase] = [:]
    /// Every charge, fee and refund booked (see ``allEarnings()``).
    var earningsLedger: [PlayEarningsReport.Row] = []
    /// Google's 15 % covers a developer's first US$1 million of sales a year (milliunits of USD); one-time products
    /// sold past it pay 30 %. Lowered in tests with ``setFeeTierThreshold(_:)``.
    public private(set) var feeTierThreshold: Int64 = 1_000_000_000
    private var voided: [Voided] = []
    private var orderSequence = 0
    private var serviceAccounts: [String: _RSA.Signing.PublicKey] = [:]
    /// Issued access tokens: when each expires and the scopes it was granted.
    private var accessTokens: [String: (expires: Date, scopes: Set<String>)] = [:]
    private var random: SystemRandomNumberGenerator
    private var pushSigning: PlayPushSigning
    private var pushConfiguration: PushConfiguration?
    private var faults: Set<Fault> = []
    private var pushQueue: [PendingPush] = []
    private var messageSequence = 0
    /// Every notification published, in order: the ground truth of what a receiver should have seen.
    public private(set) var published: [DeveloperNotification] = []

    public init(catalog: PlayCatalog = .sample, now: Date = Date(timeIntervalSince1970: 1_790_000_000)) throws {
        self.catalog = catalog
        self.now = now
        random = SystemRandomNumberGenerator()
        pushSigning = try PlayPushSigning()
    }

    // MARK: Accounts and purchases

    public func createAccount(licenseTester: Bool = false, regionCode: String = "US") -> Account {
        let account = Account(id: "play-account-\(accounts.count + 1)", isLicenseTester: licenseTester, regionCode: regionCode)
        accounts[account.id] = account
        return account
    }

    /// The device's purchase of a one-time product. `obfuscatedAccountId` is what the app passed to
    /// `BillingFlowParams.setObfuscatedAccountId` (at most 64 characters, as Google requires); `pending` for slow
    /// payment methods, completed later with ``completePending(_:)``.
    public func buy(
        productId: String,
        account accountId: String,
        quantity: Int32 = 1,
        obfuscatedAccountId: String? = nil,
        obfuscatedProfileId: String? = nil,
        pending: Bool = false,
        promoCode: String? = nil
    ) throws -> OneTimePurchase {
        guard let product = catalog.product(productId) else { throw PlayStoreError.invalid("no product \(productId)") }
        guard let account = accounts[accountId] else { throw PlayStoreError.invalid("no account \(accountId)") }
        guard (1...100).contains(quantity), product.kind == .consumable || quantity == 1 else {
            throw PlayStoreError.invalid("quantity \(quantity)")
        }
        for id in [obfuscatedAccountId, obfuscatedProfileId].compactMap({ $0 }) where id.utf8.count > 64 {
            throw PlayStoreError.invalid("obfuscated ids are at most 64 characters")
        }
        if product.kind == .nonConsumable,
            purchases.values.contains(where: { $0.accountId == accountId && $0.productId == productId && $0.state != .canceled })
        {
            throw PlayStoreError(400, "itemAlreadyOwned", "\(productId) is already owned")
        }
        let purchase = OneTimePurchase(
            token: newToken(),
            orderId: nextOrderId(),
            productId: productId,
            accountId: accountId,
            obfuscatedAccountId: obfuscatedAccountId,
            obfuscatedProfileId: obfuscatedProfileId,
            quantity: quantity,
            refundableQuantity: quantity,
            state: pending ? .pending : .purchased,
            purchasedAt: now,
            completedAt: pending ? nil : now,
            acknowledged: false,
            consumed: false,
            isTest: account.isLicenseTester,
            regionCode: account.regionCode,
            promoCode: promoCode
        )
        purchases[purchase.token] = purchase
        if !pending {
            bookCharge(purchase)
            publish(oneTime: purchase, .purchased)
        }
        return purchase
    }

    /// The slow payment went through: purchased from now, the acknowledgement window starting now.
    public func completePending(_ token: String) throws {
        guard var purchase = purchases[token], purchase.state == .pending else { throw PlayStoreError.invalid("no pending purchase") }
        purchase.state = .purchased
        purchase.completedAt = now
        purchases[token] = purchase
        bookCharge(purchase)
        publish(oneTime: purchase, .purchased)
    }

    /// Books a completed one-time purchase's charge (a license tester pays nothing).
    private func bookCharge(_ purchase: OneTimePurchase) {
        guard !purchase.isTest, purchase.promoCode == nil, let product = catalog.product(purchase.productId) else { return }
        bookCharge(
            orderId: purchase.orderId,
            sku: product.id,
            subscription: false,
            amount: product.price * Int64(purchase.quantity),
            currency: product.currency,
            region: purchase.regionCode
        )
    }

    /// The slow payment failed or the user gave up.
    public func cancelPending(_ token: String) throws {
        guard var purchase = purchases[token], purchase.state == .pending else { throw PlayStoreError.invalid("no pending purchase") }
        purchase.state = .canceled
        purchases[token] = purchase
        publish(oneTime: purchase, .canceled)
    }

    /// The ground truth about a purchase.
    public func purchase(_ token: String) -> OneTimePurchase? { purchases[token] }

    /// Every purchase, oldest first.
    public func allPurchases() -> [OneTimePurchase] { purchases.values.sorted { ($0.purchasedAt, $0.orderId) < ($1.purchasedAt, $1.orderId) } }

    // MARK: The Play Developer API

    public func productPurchase(packageName: String, productId: String, token: String) throws -> ProductPurchase {
        let purchase = try find(packageName: packageName, token: token)
        guard purchase.productId == productId else { throw PlayStoreError.invalid("the token is not a purchase of \(productId)") }
        return ProductPurchase(
            purchaseTimeMillis: PlayInt64(millis: purchase.purchasedAt),
            purchaseState: purchase.state,
            consumptionState: purchase.consumed ? .consumed : .yetToBeConsumed,
            acknowledgementState: purchase.acknowledged || purchase.consumed ? .acknowledged : .yetToBeAcknowledged,
            developerPayload: purchase.developerPayload,
            orderId: purchase.orderId,
            purchaseToken: purchase.token,
            productId: purchase.productId,
            quantity: purchase.quantity,
            refundableQuantity: purchase.refundableQuantity,
            obfuscatedExternalAccountId: purchase.obfuscatedAccountId,
            obfuscatedExternalProfileId: purchase.obfuscatedProfileId,
            regionCode: purchase.regionCode,
            purchaseType: purchase.isTest ? .test : purchase.promoCode != nil ? .promo : nil
        )
    }

    public func productPurchaseV2(packageName: String, token: String) throws -> ProductPurchaseV2 {
        let purchase = try find(packageName: packageName, token: token)
        let state =
            switch purchase.state {
            case .purchased: "PURCHASED"
            case .pending: "PENDING"
            default: "CANCELLED"
            }
        return ProductPurchaseV2(
            productLineItem: [
                .init(
                    productId: purchase.productId,
                    productOfferDetails: .init(
                        purchaseOptionId: "buy",
                        quantity: purchase.quantity,
                        refundableQuantity: purchase.refundableQuantity,
                        consumptionState: purchase.consumed ? "CONSUMPTION_STATE_CONSUMED" : "CONSUMPTION_STATE_YET_TO_BE_CONSUMED"
                    )
                )
            ],
            purchaseStateContext: .init(purchaseState: state),
            testPurchaseContext: purchase.isTest ? .init(fopType: "TEST") : nil,
            orderId: purchase.orderId,
            purchaseCompletionTime: purchase.completedAt,
            acknowledgementState: purchase.acknowledged || purchase.consumed ? .acknowledged : .pending,
            obfuscatedExternalAccountId: purchase.obfuscatedAccountId,
            obfuscatedExternalProfileId: purchase.obfuscatedProfileId,
            regionCode: purchase.regionCode
        )
    }

    /// Acknowledging twice is accepted (Google documents no error for it); a pending or canceled purchase is refused.
    public func acknowledge(packageName: String, productId: String, token: String, developerPayload: String?) throws {
        var purchase = try find(packageName: packageName, token: token)
        guard purchase.productId == productId else { throw PlayStoreError.invalid("the token is not a purchase of \(productId)") }
        guard purchase.state == .purchased else { throw PlayStoreError(400, "productNotOwnedByUser", "The product is not owned by the user.") }
        purchase.acknowledged = true
        if let developerPayload { purchase.developerPayload = String(developerPayload.prefix(1000)) }
        purchases[token] = purchase
    }

    /// Consuming acknowledges too, and lets the user buy the product again.
    public func consume(packageName: String, productId: String, token: String) throws {
        var purchase = try find(packageName: packageName, token: token)
        guard purchase.productId == productId else { throw PlayStoreError.invalid("the token is not a purchase of \(productId)") }
        guard purchase.state == .purchased, !purchase.consumed else {
            throw PlayStoreError(400, "productNotOwnedByUser", "The product is not owned by the user.")
        }
        purchase.consumed = true
        purchases[token] = purchase
    }

    /// `orders.refund`: with `revoke` the purchase is taken back and listed as voided; `quantity` refunds only that
    /// many units (the rest stay refundable). Without `revoke` the money goes back and the user keeps the product.
    public func refund(packageName: String, orderId: String, revoke: Bool, quantity: Int32? = nil, reason: VoidedReason = .other) throws {
        guard packageName == catalog.packageName else { throw PlayStoreError.wrongPackage() }
        guard var purchase = purchases.values.first(where: { $0.orderId == orderId }) else {
            throw PlayStoreError(404, "notFound", "The order was not found.")
        }
        guard purchase.state == .purchased, purchase.refundableQuantity > 0 else {
            throw PlayStoreError(400, "invalid", "The order is not refundable.")
        }
        let units = min(quantity ?? purchase.refundableQuantity, purchase.refundableQuantity)
        guard units > 0 else { throw PlayStoreError.invalid("quantity") }
        purchase.refundableQuantity -= units
        if let product = catalog.product(purchase.productId) { bookRefund(orderId: orderId, amount: product.price * Int64(units)) }
        let whole = purchase.refundableQuantity == 0
        if whole, revoke { purchase.state = .canceled }
        purchases[purchase.token] = purchase
        guard revoke else { return }
        record(purchase, source: .developer, reason: reason, partial: whole ? nil : units)
    }

    /// Google's own decision to refund and revoke (a chargeback, fraud, or the user's refund through Google).
    public func void(token: String, source: VoidedSource, reason: VoidedReason) throws {
        guard var purchase = purchases[token], purchase.state == .purchased else {
            guard var record = subscriptions[token], record.state != .expired else { throw PlayStoreError.tokenNotFound() }
            record.state = .expired
            record.autoRenew = false
            record.expiryTime = min(record.expiryTime, now)
            record.canceledBy = "system"
            subscriptions[token] = record
            bookRefund(orderId: record.latestOrderId)
            publish(
                DeveloperNotification(
                    packageName: catalog.packageName,
                    eventTimeMillis: PlayInt64(millis: now),
                    subscriptionNotification: SubscriptionNotification(notificationType: .revoked, purchaseToken: token)
                )
            )
            recordVoided(
                token: token,
                orderId: record.latestOrderId,
                purchasedAt: record.startTime,
                source: source,
                reason: reason,
                subscription: true
            )
            return
        }
        if let product = catalog.product(purchase.productId) {
            bookRefund(orderId: purchase.orderId, amount: product.price * Int64(purchase.refundableQuantity))
        }
        purchase.state = .canceled
        purchase.refundableQuantity = 0
        purchases[token] = purchase
        record(purchase, source: source, reason: reason, partial: nil)
    }

    /// `voidedpurchases.list`: entries Google saw voided between `startTime` (not older than 30 days) and `endTime`,
    /// oldest first, `maxResults` per page; the page token carries the position.
    public func voidedPurchases(
        packageName: String,
        startTime: Date?,
        endTime: Date?,
        includeSubscriptions: Bool,
        includePartial: Bool,
        maxResults: Int,
        pageToken: String?
    ) throws -> VoidedPurchasesListResponse {
        guard packageName == catalog.packageName else { throw PlayStoreError.wrongPackage() }
        var start = startTime ?? now.addingTimeInterval(-Self.voidedLookBack)
        var end = endTime ?? now
        var offset = 0
        if let pageToken {
            guard let page = Self.page(pageToken) else { throw PlayStoreError.invalid("token") }
            (start, end, offset) = page
        } else {
            guard start >= now.addingTimeInterval(-Self.voidedLookBack - 1) else {
                throw PlayStoreError.invalid("startTime is more than 30 days ago")
            }
            guard end <= now, start <= end else { throw PlayStoreError.invalid("endTime") }
        }
        let pageSize = max(1, min(maxResults, 1000))
        // Google's times are whole milliseconds: an entry voided within the millisecond `endTime` names is listed.
        let (from, to) = (PlayInt64(millis: start).value, PlayInt64(millis: end).value)
        let matching = voided.filter { entry in
            let at = PlayInt64(millis: entry.recordedAt).value
            return at >= from && at <= to && (includePartial || !entry.isPartial)
                && (includeSubscriptions || !entry.isSubscription)
        }
        let slice = Array(matching.dropFirst(offset).prefix(pageSize))
        let next = offset + slice.count < matching.count ? Self.pageToken(start: start, end: end, offset: offset + slice.count) : nil
        return VoidedPurchasesListResponse(
            pageInfo: .init(resultPerPage: Int32(slice.count), startIndex: Int32(offset), totalResults: Int32(matching.count)),
            tokenPagination: next.map { .init(nextPageToken: $0) },
            voidedPurchases: slice.map(\.purchase)
        )
    }

    // MARK: The clock

    /// Moves the clock forward; purchases left unacknowledged past their window are refunded and revoked, as Google
    /// does (voided with reason 8), in the order their deadlines fall.
    /// Google Play's service fee on the simulator's sales, in thousandths (the first-million tier and subscriptions).
    public static let serviceFeePermille: Int64 = 150
    /// … and past the first million, on one-time products.
    public static let upperServiceFeePermille: Int64 = 300

    public func setFeeTierThreshold(_ milliunits: Int64) { feeTierThreshold = max(0, milliunits) }

    /// `orders.get` (a subscription's orders: ``subscriptionOrder(_:)``) for a one-time purchase: the buyer's total (price × quantity, no tax: the simulator sells in the
    /// United States), the developer's revenue after the 15 % fee less what was refunded, and the order's state.
    public func order(packageName: String, orderId: String) throws -> PlayOrder {
        guard packageName == catalog.packageName else { throw PlayStoreError.wrongPackage() }
        guard let purchase = purchases.values.first(where: { $0.orderId == orderId }), let product = catalog.product(purchase.productId) else {
            return try subscriptionOrder(orderId)
        }
        // A promo code's purchase is free.
        let unit = purchase.promoCode == nil ? product.price : 0
        let total = unit * Int64(purchase.quantity)
        let kept = unit * Int64(purchase.refundableQuantity)
        let state: String =
            switch purchase.state {
            case .pending: "PENDING"
            case .canceled where purchase.refundableQuantity == 0: "REFUNDED"
            case .canceled: "CANCELED"
            default: purchase.refundableQuantity < purchase.quantity ? "PARTIALLY_REFUNDED" : "PROCESSED"
            }
        func money(_ milliunits: Int64) -> Money {
            Money(currencyCode: product.currency, units: milliunits / 1000, nanos: Int32((milliunits % 1000) * 1_000_000))
        }
        return PlayOrder(
            orderId: purchase.orderId,
            purchaseToken: purchase.token,
            state: state,
            createTime: purchase.purchasedAt,
            lineItems: [
                .init(
                    productId: product.id,
                    listingPrice: money(product.price),
                    total: money(total),
                    tax: money(0),
                    oneTimePurchaseDetails: .init(quantity: purchase.quantity)
                )
            ],
            total: money(total),
            tax: money(0),
            developerRevenueInBuyerCurrency: money(kept - kept * feePermille(orderId: purchase.orderId) / 1000),
            buyerAddress: .init(buyerCountry: purchase.regionCode),
            orderDetails: .init(taxInclusive: false)
        )
    }

    /// Parts of the Play Developer API that answer 503 (`backendError`) until cleared: an outage to ride out.
    public enum Fault: String, Sendable, Hashable, CaseIterable {
        /// `products.acknowledge` and `subscriptions.acknowledge`.
        case acknowledge
        /// `products.consume`.
        case consume
        /// Every read (`GET`).
        case reads
        /// Cloud Storage (the reports bucket).
        case reports
        /// Everything but the token endpoint.
        case all
    }

    /// Sets the faults in force (empty: none).
    public func setFaults(_ faults: Set<Fault>) { self.faults = faults }

    /// Whether a call of `method` to `path` fails under the faults in force.
    public func isFaulted(method: String, path: String) -> Bool {
        if faults.contains(.all) { return true }
        if faults.contains(.acknowledge), path.hasSuffix(":acknowledge") { return true }
        if faults.contains(.consume), path.hasSuffix(":consume") { return true }
        if faults.contains(.reports), path.hasPrefix("/storage/") { return true }
        return faults.contains(.reads) && method == "GET"
    }

    public func advance(by interval: TimeInterval) {
        precondition(interval >= 0, "the simulated clock only moves forward")
        let target = now.addingTimeInterval(interval)
        // Every deadline, renewal, retry and expiry on the way, in time order (ties: one-time products first).
        for _ in 0..<1_000_000 {
            let oneTime = purchases.values.compactMap { purchase -> (Date, String)? in
                guard purchase.state == .purchased, !purchase.acknowledged, !purchase.consumed, let completed = purchase.completedAt else {
                    return nil
                }
                let deadline = completed.addingTimeInterval(Self.acknowledgementWindow)
                return deadline <= target ? (deadline, purchase.token) : nil
            }.min { $0 < $1 }
            let subscription = nextSubscriptionEvent(before: target)
            if let oneTime, subscription == nil || oneTime.0 <= subscription!.0 {
                now = max(now, oneTime.0)
                try? void(token: oneTime.1, source: .google, reason: .unacknowledgedPurchase)
            } else if let subscription {
                now = max(now, subscription.0)
                runSubscriptionEvent(subscription.1)
            } else {
                break
            }
        }
        now = target
    }

    // MARK: Service accounts and OAuth

    /// Registers a service account the API accepts (the simulator's own key file for it comes from
    /// ``issueServiceAccount(email:tokenURI:)``).
    public func registerServiceAccount(email: String, publicKey: _RSA.Signing.PublicKey) {
        serviceAccounts[email] = publicKey
    }

    /// A new service account and its key file, as Google Cloud would issue one.
    /// Accepts a key this simulator issued in an earlier run (kept in a file, so a server configured with it keeps
    /// working across restarts).
    public func registerServiceAccount(_ key: ServiceAccountKey) { serviceAccounts[key.clientEmail] = key.privateKey.publicKey }

    public func issueServiceAccount(email: String, tokenURI: String) throws -> ServiceAccountKey {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        serviceAccounts[email] = key.publicKey
        return ServiceAccountKey(clientEmail: email, privateKeyId: "sim-\(serviceAccounts.count)", privateKey: key, tokenURI: tokenURI)
    }

    /// The token endpoint's grant: an RS256 assertion from a registered account, for Google's token audience (or
    /// `ownAudience`), at most an hour long and current by the wall clock (clients sign with theirs).
    public func grant(assertion: String, ownAudience: String?, wallClock: Date = Date()) throws -> (token: String, expiresIn: Int) {
        struct Claims: Decodable {
            var iss: String?
            var scope: String?
            var aud: String?
            var iat: Int64?
            var exp: Int64?
        }
        func refuse(_ why: String) -> PlayStoreError { PlayStoreError(400, "invalid_grant", why) }
        guard let token = try? SignedToken(assertion), let claims = try? token.claims(Claims.self) else { throw refuse("Invalid JWT.") }
        guard let issuer = claims.iss, let key = serviceAccounts[issuer], token.isSigned(by: key) else { throw refuse("Invalid JWT Signature.") }
        guard let audience = claims.aud, audience == AccessTokenProvider.googleTokenAudience || audience == ownAudience else {
            throw refuse("Invalid JWT: audience.")
        }
        guard let iat = claims.iat, let exp = claims.exp, exp > iat, exp - iat <= 3600,
            TimeInterval(iat) <= wallClock.timeIntervalSince1970 + 60, TimeInterval(exp) > wallClock.timeIntervalSince1970
        else { throw refuse("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.") }
        let scopes = Set((claims.scope ?? "").split(separator: " ").map(String.init)).intersection(Self.grantableScopes)
        guard !scopes.isEmpty else {
            throw PlayStoreError(400, "invalid_scope", "The androidpublisher or devstorage scope is required.")
        }
        let access = "ya29.sim." + newToken()
        accessTokens[access] = (wallClock.addingTimeInterval(3599), scopes)
        return (access, 3599)
    }

    /// The scopes this simulator grants: the Play Developer API's, and Cloud Storage's for the reports bucket.
    public static let grantableScopes: Set<String> = [
        AccessTokenProvider.androidPublisherScope, PlayReportsClient.storageReadScope, "https://www.googleapis.com/auth/devstorage.full_control",
    ]

    /// Whether a bearer token is one the token endpoint issued, still current, and granted one of `scopes` (Google's
    /// APIs answer 403 `insufficientPermissions` otherwise, which callers see as a refusal all the same).
    public func isAuthorized(
        _ bearer: String,
        scopes: Set<String> = [AccessTokenProvider.androidPublisherScope],
        wallClock: Date = Date()
    ) -> Bool {
        guard let token = accessTokens[bearer] else { return false }
        return token.expires > wallClock && !token.scopes.isDisjoint(with: scopes)
    }

    // MARK: Real-time developer notifications

    /// Where notifications are pushed, as a Pub/Sub push subscription with authentication is configured.
    public struct PushConfiguration: Sendable, Hashable {
        public var endpoint: String
        /// The OIDC token's audience (Pub/Sub's default: the endpoint).
        public var audience: String
        /// The push subscription's service account: the token's `email`.
        public var serviceAccountEmail: String
        public var subscription: String

        public init(
            endpoint: String,
            audience: String? = nil,
            serviceAccountEmail: String,
            subscription: String = "projects/sim/subscriptions/play-rtdn"
        ) {
            self.endpoint = endpoint
            self.audience = audience ?? endpoint
            self.serviceAccountEmail = serviceAccountEmail
            self.subscription = subscription
        }
    }

    /// A message waiting for its endpoint's 2xx, with Pub/Sub's retry state.
    public struct PendingPush: Sendable, Hashable {
        public var messageId: String
        public var data: [UInt8]
        public var publishTime: Date
        public var attempts: Int
        public var nextAttempt: Date
    }

    /// One delivery to make now: the URL, the Pub/Sub envelope and the bearer token.
    public struct PushDelivery: Sendable {
        public var messageId: String
        public var endpoint: String
        public var body: [UInt8]
        public var bearer: String
    }

    public func configurePush(_ configuration: PushConfiguration?) { pushConfiguration = configuration }

    /// Rotates the push-signing key (the previous one stays published).
    public func rotatePushKey() throws { try pushSigning.rotate() }

    /// What `/oauth2/v1/certs` and `/oauth2/v3/certs` publish.
    public func pushCertificates() -> [String: String] { pushSigning.pemMap() }
    public func pushJWKS() throws -> [String: [[String: String]]] { try pushSigning.jwks() }

    /// Messages due by the virtual clock, as deliveries (tokens signed by the wall clock, which receivers check).
    public func duePushes(wallClock: Date = Date()) throws -> [PushDelivery] {
        guard let configuration = pushConfiguration else { return [] }
        let encoder = PlayJSON.makeEncoder()
        return try pushQueue.filter { $0.nextAttempt <= now }.map { pending in
            let envelope = PubSubPushRequest(
                message: .init(data: Data(pending.data).base64EncodedString(), messageId: pending.messageId, publishTime: pending.publishTime),
                subscription: configuration.subscription,
                deliveryAttempt: Int32(pending.attempts + 1)
            )
            return PushDelivery(
                messageId: pending.messageId,
                endpoint: configuration.endpoint,
                body: Array(try encoder.encode(envelope)),
                bearer: try pushSigning.token(
                    audience: configuration.audience,
                    serviceAccountEmail: configuration.serviceAccountEmail,
                    now: wallClock
                )
            )
        }
    }

    /// The endpoint's answer: acknowledged (HTTP 102, 200, 201, 202 or 204) or to be redelivered with Pub/Sub's
    /// default back-off (10 s doubling to 600 s). Pub/Sub keeps a message seven days.
    public func pushAnswered(messageId: String, status: Int?) {
        guard let index = pushQueue.firstIndex(where: { $0.messageId == messageId }) else { return }
        if let status, [102, 200, 201, 202, 204].contains(status) {
            pushQueue.remove(at: index)
            return
        }
        pushQueue[index].attempts += 1
        let backoff = min(600, 10 * pow(2, Double(min(pushQueue[index].attempts - 1, 10))))
        pushQueue[index].nextAttempt = now.addingTimeInterval(backoff)
        if now.timeIntervalSince(pushQueue[index].publishTime) > 7 * 86_400 { pushQueue.remove(at: index) }
    }

    /// Messages not yet acknowledged.
    public func pendingPushes() -> [PendingPush] { pushQueue }

    private func publish(oneTime purchase: OneTimePurchase, _ type: OneTimeProductNotificationType) {
        publish(
            DeveloperNotification(
                packageName: catalog.packageName,
                eventTimeMillis: PlayInt64(millis: now),
                oneTimeProductNotification: OneTimeProductNotification(notificationType: type, purchaseToken: purchase.token, sku: purchase.productId)
            )
        )
    }

    func publish(_ notification: DeveloperNotification) {
        published.append(notification)
        guard pushConfiguration != nil, let data = try? PlayJSON.encode(notification) else { return }
        messageSequence += 1
        pushQueue.append(
            PendingPush(
                messageId: String(2_070_443_601_311_540 + messageSequence),
                data: Array(data),
                publishTime: now,
                attempts: 0,
                nextAttempt: now
            )
        )
    }

    // MARK: Helpers

    private func find(packageName: String, token: String) throws -> OneTimePurchase {
        guard let purchase = purchases[token] else { throw PlayStoreError.tokenNotFound() }
        guard packageName == catalog.packageName else { throw PlayStoreError.wrongPackage() }
        return purchase
    }

    private func record(_ purchase: OneTimePurchase, source: VoidedSource, reason: VoidedReason, partial: Int32?) {
        recordVoided(
            token: purchase.token,
            orderId: purchase.orderId,
            purchasedAt: purchase.purchasedAt,
            source: source,
            reason: reason,
            subscription: false,
            partial: partial
        )
    }

    /// A voided purchase: listed, and announced.
    func recordVoided(
        token: String,
        orderId: String,
        purchasedAt: Date,
        source: VoidedSource,
        reason: VoidedReason,
        subscription: Bool,
        partial: Int32? = nil
    ) {
        voided.append(
            Voided(
                purchase: VoidedPurchase(
                    purchaseToken: token,
                    orderId: orderId,
                    purchaseTimeMillis: PlayInt64(millis: purchasedAt),
                    voidedTimeMillis: PlayInt64(millis: now),
                    voidedSource: source,
                    voidedReason: reason,
                    voidedQuantity: partial
                ),
                recordedAt: now,
                isPartial: partial != nil,
                isSubscription: subscription
            )
        )
        publish(
            DeveloperNotification(
                packageName: catalog.packageName,
                eventTimeMillis: PlayInt64(millis: now),
                voidedPurchaseNotification: VoidedPurchaseNotification(
                    purchaseToken: token,
                    orderId: orderId,
                    productType: subscription ? .subscription : .oneTime,
                    refundType: partial == nil ? .fullRefund : .quantityBasedPartialRefund
                )
            )
        )
    }

    func account(_ id: String) -> Account? { accounts[id] }

    func nextOrderId() -> String {
        orderSequence += 1
        return Self.orderId(orderSequence)
    }

    func newPurchaseToken() -> String { newToken() }

    private func newToken() -> String {
        var bytes = [UInt8](repeating: 0, count: 60)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &random) }
        return Base64URL.encode(bytes)
    }

    /// `GPA.3312-1234-5678-90123`-shaped, unique per order.
    static func orderId(_ sequence: Int) -> String {
        let digits = String(format: "%017d", sequence)
        let chars = Array(digits)
        return "GPA.\(String(chars[0..<4]))-\(String(chars[4..<8]))-\(String(chars[8..<12]))-\(String(chars[12..<17]))"
    }

    static func pageToken(start: Date, end: Date, offset: Int) -> String {
        Base64URL.encode(Array("\(PlayInt64(millis: start).value):\(PlayInt64(millis: end).value):\(offset)".utf8))
    }

    static func page(_ token: String) -> (Date, Date, Int)? {
        guard token.utf8.count <= 200, let bytes = Base64URL.decode(token) else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: ":")
        guard parts.count == 3, let start = Int64(parts[0]), let end = Int64(parts[1]), let offset = Int(parts[2]), offset >= 0 else { return nil }
        return (PlayInt64(start).date, PlayInt64(end).date, offset)
    }
}

import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// AppStoreWire's own clients against the simulator's Apple endpoints, over real sockets.
@Suite struct AppleEndpointTests {
    typealias H = SimulatorHarness
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"

    struct Fixture {
        let store: SimulatedAppStore
        let verifier: SignedDataVerifier
        let apiKey: P256.Signing.PrivateKey
        let faults: AppleEndpointFaults
        let receiptIdentity: ReceiptSigningIdentity
    }

    func withSimulator(
        sharedSecret: String? = nil,
        _ body: @Sendable @escaping (Fixture, Int) async throws -> Void
    ) async throws {
        let catalog = try SimulatorCatalog.load(from: H.catalogURL)
        let chain = try AppStoreSigningChain.generate(.init(name: "Apple Endpoints"))
        let store = try SimulatedAppStore(catalog: catalog, signingChain: chain, seed: 11)
        let apiKey = P256.Signing.PrivateKey()
        let faults = AppleEndpointFaults()
        let receiptIdentity = try ReceiptSigningIdentity.generate()
        let apple = SimulatorServer.AppleSide(
            apiKeys: ["KEY1": apiKey.publicKey],
            issuerId: Self.issuerId,
            receiptIdentity: receiptIdentity,
            sharedSecret: sharedSecret,
            faults: faults
        )
        let app = await SimulatorServer.buildApplication(store: store, rootPEM: try chain.rootPEM(), apple: apple, port: 0)
        let verifier = try SignedDataVerifier(
            configuration: .init(
                bundleId: catalog.bundleId,
                environments: [.sandbox],
                roots: try TrustedRoots.only([chain.root]),
                deployment: .development
            )
        )
        let fixture = Fixture(store: store, verifier: verifier, apiKey: apiKey, faults: faults, receiptIdentity: receiptIdentity)
        try await app.test(.live) { client in try await body(fixture, try #require(client.port)) }
    }

    func apiClient(
        _ fixture: Fixture,
        port: Int,
        key: P256.Signing.PrivateKey? = nil,
        bundleId: String = "com.example.storekeeper"
    )
        throws -> AppStoreServerAPIClient
    {
        AppStoreServerAPIClient(
            httpClient: HTTPClient.shared,
            tokenGenerator: try AppStoreAPITokenGenerator(
                privateKey: key ?? fixture.apiKey,
                keyId: "KEY1",
                issuerId: Self.issuerId,
                bundleId: bundleId
            ),
            baseURL: AppStoreServerAPIBaseURL(url: URL(string: "http://127.0.0.1:\(port)")!, environment: .sandbox),
            retryPolicy: AppStoreServerAPIRetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(10), maxDelay: .seconds(3), jitter: false)
        )
    }

    // MARK: Tests

    @Test func serverAPIAnswersFromTheSimulatorsState() async throws {
        try await withSimulator { f, port in
            let client = try apiClient(f, port: port)
            let account = try await f.store.createAccount()
            var ids: [String] = []
            for _ in 0..<23 {
                ids.append(try await f.store.purchase(productId: "com.example.storekeeper.coins.60", account: account.id).transaction.transactionId!)
            }
            let monthly = try await f.store.purchase(productId: H.monthly, account: account.id)
            let original = try #require(monthly.transaction.originalTransactionId)

            let info = try await client.getTransactionInfo(transactionId: ids[0])
            #expect(try await f.verifier.verifyTransaction(try #require(info.signedTransactionInfo)).transactionId == ids[0])

            // History v2 walks every page (20 per page) with revisions.
            let pages = try await client.getAllTransactionHistory(transactionId: original)
            #expect(pages.count == 2)
            let all = pages.flatMap { $0.signedTransactions ?? [] }
            #expect(all.count == 24)
            let decoded = try await all.asyncMap { try await f.verifier.verifyTransaction($0).transactionId ?? "" }
            #expect(Set(decoded) == Set(ids + [original]))

            let statuses = try await client.getAllSubscriptionStatuses(transactionId: ids[3])
            let last = try #require(statuses.data?.first?.lastTransactions?.first)
            #expect(last.status == .active)
            #expect(last.originalTransactionId == original)
            _ = try await f.verifier.verifyRenewalInfo(try #require(last.signedRenewalInfo))

            let order = try #require(await f.store.orderId(ofTransaction: ids[5]))
            let lookup = try await client.lookUpOrderId(orderId: order)
            #expect(lookup.status == .valid)
            #expect(try await client.lookUpOrderId(orderId: "NOPE").status == .invalid)

            try await f.store.decideRefund(transactionId: ids[1], approve: true)
            let refunds = try await client.getAllRefundHistory(transactionId: original).flatMap { $0.signedTransactions ?? [] }
            #expect(refunds.count == 1)

            try await client.sendConsumptionInformation(
                transactionId: ids[2],
                request: ConsumptionRequest(
                    customerConsented: true,
                    sampleContentProvided: false,
                    deliveryStatus: .delivered,
                    consumptionPercentage: 100_000,
                    refundPreference: .decline
                )
            )
            #expect(await f.store.consumptionInformation(transactionId: ids[2])?.refundPreference == .decline)

            // Apple sends a TEST only to an app with a notification URL, as a delivery service configures.
            await f.store.setDeliversNotifications(true)
            let token = try await client.requestTestNotification()
            let status = try await client.getTestNotificationStatus(testNotificationToken: try #require(token.testNotificationToken))
            #expect(try await f.verifier.verifyNotification(try #require(status.signedPayload)).notificationType == .test)

            let now = await f.store.currentDate
            let history = try await client.getAllNotificationHistory(
                request: NotificationHistoryRequest(startDate: now - 86_400, endDate: now + 1)
            )
            #expect(history.count == (await f.store.sentNotifications()).count)

            try await f.store.advance(by: 30 * H.day)  // a paid period, so it is extendable
            let extended = try await client.extendSubscriptionRenewalDate(
                originalTransactionId: original,
                request: ExtendRenewalDateRequest(extendByDays: 5, extendReasonCode: .customerSatisfaction, requestIdentifier: "x1")
            )
            #expect(extended.success == true)

            let app = try await client.getAppTransactionInfo(transactionId: ids[0])
            #expect(try await f.verifier.verifyAppTransaction(try #require(app.signedAppTransactionInfo)).bundleId == "com.example.storekeeper")
        }
    }

    /// Apple's code for a refused call, or nil when it went through.
    static func refusal(_ call: () async throws -> Void) async -> APIErrorCode? {
        do {
            try await call()
            return nil
        } catch let error as AppStoreServerAPIError {
            return error.errorCode
        } catch {
            return APIErrorCode(rawValue: -1)
        }
    }

    @Test func assignedPurchasesAreRefusedWhereAppleRefusesThem() async throws {
        try await withSimulator { f, port in
            let client = try apiClient(f, port: port)
            let member = try await f.store.createAccount()
            let chapter = try await f.store.assign(productId: "com.example.storekeeper.chapter.2", to: member.id)
            let yearly = try await f.store.assign(productId: H.yearly, to: member.id)
            let chapterId = try #require(chapter.transaction.transactionId)
            let yearlyId = try #require(yearly.transaction.transactionId)
            #expect(try await f.verifier.verifyTransaction(chapter.signedTransaction).inAppOwnershipType == .assigned)
            #expect(try await f.store.groundTruth(account: member.id).isEntitled(to: H.yearly))

            let answer = ConsumptionRequest(customerConsented: true, sampleContentProvided: false, deliveryStatus: .delivered)
            #expect(
                await Self.refusal { try await client.sendConsumptionInformation(transactionId: chapterId, request: answer) }
                    == .invalidAssignedTransactionNotSupported
            )
            let v1 = ConsumptionRequestV1(customerConsented: true, sampleContentProvided: false, deliveryStatus: .deliveredAndWorkingProperly)
            #expect(
                await Self.refusal { try await client.sendConsumptionInformationV1(transactionId: chapterId, request: v1) }
                    == .invalidAssignedTransactionNotSupported
            )
            #expect(
                await Self.refusal { try await client.setAppAccountToken(originalTransactionId: yearlyId, appAccountToken: UUID()) }
                    == .invalidAssignedTransactionNotSupported
            )
            let extend = ExtendRenewalDateRequest(extendByDays: 3, extendReasonCode: .customerSatisfaction, requestIdentifier: "assigned-1")
            #expect(
                await Self.refusal { _ = try await client.extendSubscriptionRenewalDate(originalTransactionId: yearlyId, request: extend) }
                    == .assignedSubscriptionExtensionIneligible
            )

            // Renewals stay assigned; taking the assignment back is REVOKE with ASSIGNMENT_REVOKE.
            try await f.store.advance(by: 370 * H.day)
            let renewed = await f.store.transactions(account: member.id).filter { $0.productId == H.yearly }
            #expect(renewed.count == 2 && renewed.allSatisfy { $0.inAppOwnershipType == .assigned })
            try await f.store.revokeAssignment(transactionId: yearlyId)
            let revoke = try #require(await f.store.sentNotifications().last)
            #expect(revoke.type == .revoke)
            let revoked = try await f.verifier.verifyTransaction(try #require(revoke.payload.data?.signedTransactionInfo))
            #expect(revoked.revocationType == .assignmentRevoke && revoked.transactionId == renewed.last?.transactionId)
            #expect(try await f.store.groundTruth(account: member.id).isEntitled(to: H.yearly) == false)
            #expect(try await f.store.groundTruth(account: member.id).isEntitled(to: "com.example.storekeeper.chapter.2"))
        }
    }

    @Test func seatsOfADeveloperManagedMultiseatPurchase() async throws {
        try await withSimulator { f, port in
            let client = try apiClient(f, port: port)
            let purchaser = try await f.store.createAccount()
            let ann = try await f.store.createAccount()
            let ben = try await f.store.createAccount()
            let bought = try await f.store.purchase(
                productId: "com.example.storekeeper.teams.monthly",
                account: purchaser.id,
                options: PurchaseOptions(quantity: 2)
            )
            let original = try #require(bought.transaction.originalTransactionId)
            let empty = try await client.getSeatInfo(originalTransactionId: original)
            #expect(empty.totalSeatCount == 2 && empty.availableSeatCount == 2 && empty.assignedSeatClaimIds == [])

            let first = try #require(
                try await client.claimSeat(
                    originalTransactionId: original,
                    request: .init(requestIdentifier: "claim-ann", appTransactionId: ann.appTransactionId)
                ).seatClaimId
            )
            // A retry with the same request id is the same claim, not another seat.
            let again = try await client.claimSeat(
                originalTransactionId: original,
                request: .init(requestIdentifier: "claim-ann", appTransactionId: ann.appTransactionId)
            )
            #expect(again.seatClaimId == first)
            let second = try #require(
                try await client.claimSeat(originalTransactionId: original, request: .init(requestIdentifier: "claim-2")).seatClaimId
            )
            #expect(second != first)
            try await client.associateSeat(
                originalTransactionId: original,
                seatClaimId: second,
                request: .init(appTransactionId: ben.appTransactionId)
            )
            #expect(await f.store.seatMember(originalTransactionId: original, seatClaimId: second) == ben.appTransactionId)
            #expect(
                await Self.refusal { _ = try await client.claimSeat(originalTransactionId: original, request: .init(requestIdentifier: "claim-3")) }
                    == .noAvailableSeats
            )
            #expect(
                await Self.refusal { try await client.unclaimSeat(originalTransactionId: original, seatClaimId: "no-such-claim") }
                    == .seatClaimIdNotFound
            )
            #expect(
                await Self.refusal {
                    try await client.associateSeat(originalTransactionId: original, seatClaimId: second, request: .init(appTransactionId: "999"))
                } == .appTransactionIdNotFound
            )

            try await client.unclaimSeat(originalTransactionId: original, seatClaimId: first)
            let after = try await client.getSeatInfo(originalTransactionId: original)
            #expect(after.availableSeatCount == 1 && after.assignedSeatClaimIds == [second])

            // Apple releases a seat itself: UNCLAIM_SEATS names the claim.
            try await f.store.appleUnclaimsSeats(originalTransactionId: original, seatClaimIds: [second])
            let unclaimed = try #require(await f.store.sentNotifications().last)
            let verified = try await f.verifier.verifyNotification(unclaimed.signedPayload)
            #expect(verified.notificationType == .unclaimSeats && verified.unclaimInfo?.unclaimSeatIds == [second])
            #expect(try await client.getSeatInfo(originalTransactionId: original).availableSeatCount == 2)

            // A subscription of one has no seats to manage.
            let single = try await f.store.purchase(productId: H.yearly, account: ann.id)
            let singleId = try #require(single.transaction.originalTransactionId)
            #expect(await Self.refusal { _ = try await client.getSeatInfo(originalTransactionId: singleId) } == .transactionNotDevManagedGroup)
        }
    }

    @Test func consumptionVersionTwoFollowsApplesLateTwentySixRules() async throws {
        try await withSimulator { f, port in
            let client = try apiClient(f, port: port)
            let account = try await f.store.createAccount()
            let yearly = try #require(try await f.store.purchase(productId: H.yearly, account: account.id).transaction.transactionId)
            let pass = try #require(
                try await f.store.purchase(productId: "com.example.storekeeper.pass.month", account: account.id).transaction.transactionId
            )
            // A consumed share is refused for an auto-renewable; taken without one.
            let withShare = ConsumptionRequest(
                customerConsented: true,
                sampleContentProvided: false,
                deliveryStatus: .delivered,
                consumptionPercentage: 50_000,
                refundPreference: .grantProrated
            )
            #expect(
                await Self.refusal { try await client.sendConsumptionInformation(transactionId: yearly, request: withShare) }
                    == .consumptionPercentageNotAllowed
            )
            var plain = withShare
            plain.consumptionPercentage = nil
            plain.refundPreference = .decline
            #expect(await Self.refusal { try await client.sendConsumptionInformation(transactionId: yearly, request: plain) } == nil)
            // Every product type: a non-renewing pass goes through version 2 …
            #expect(await Self.refusal { try await client.sendConsumptionInformation(transactionId: pass, request: withShare) } == nil)
            // … an undelivered one was consumed 0, and GRANT_PRORATED needs a share strictly inside 0-100000.
            var undelivered = withShare
            undelivered.deliveryStatus = .undeliveredOther
            #expect(
                await Self.refusal { try await client.sendConsumptionInformation(transactionId: pass, request: undelivered) } == .generalBadRequest
            )
            var whole = withShare
            whole.consumptionPercentage = 100_000
            #expect(await Self.refusal { try await client.sendConsumptionInformation(transactionId: pass, request: whole) } == .generalBadRequest)
            // … unless the simulator rehearses April 2026, when version 2 refused it (4000047).
            await f.store.setConsumptionV2RefusesNonRenewing(true)
            #expect(
                await Self.refusal { try await client.sendConsumptionInformation(transactionId: pass, request: withShare) }
                    == .invalidTransactionTypeNotSupported
            )
        }
    }

    @Test func unknownIdsGetApplesErrorCodes() async throws {
        try await withSimulator { f, port in
            let client = try apiClient(f, port: port)
            do {
                _ = try await client.getTransactionInfo(transactionId: "9999")
                Issue.record("unknown transaction answered")
            } catch let error as AppStoreServerAPIError {
                #expect(error.httpStatus == 404)
                #expect(error.errorCode == .transactionIdNotFound)
            }
        }
    }

    @Test func badTokensAreRefusedWith401() async throws {
        try await withSimulator { f, port in
            let account = try await f.store.createAccount()
            let id = try await f.store.purchase(productId: "com.example.storekeeper.coins.60", account: account.id).transaction.transactionId!
            for client in [
                try apiClient(f, port: port, key: P256.Signing.PrivateKey()),
                try apiClient(f, port: port, bundleId: "com.example.other"),
            ] {
                do {
                    _ = try await client.getTransactionInfo(transactionId: id)
                    Issue.record("a bad token was accepted")
                } catch let error as AppStoreServerAPIError {
                    #expect(error.httpStatus == 401)
                    #expect(error.errorCode == nil)
                }
            }
        }
    }

    @Test func injectedRateLimitsAndServerErrorsAreRetriedByTheClient() async throws {
        try await withSimulator { f, port in
            let client = try apiClient(f, port: port)
            let account = try await f.store.createAccount()
            let id = try await f.store.purchase(productId: "com.example.storekeeper.coins.60", account: account.id).transaction.transactionId!
            f.faults.settings = .init(serverErrorNext: 1, rateLimitNext: 1, retryAfterSeconds: 1)
            let info = try await client.getTransactionInfo(transactionId: id)
            #expect(info.signedTransactionInfo != nil)
            #expect(f.faults.settings.rateLimitNext == 0 && f.faults.settings.serverErrorNext == 0)
        }
    }

    @Test func verifyReceiptRoutesSandboxReceiptsAndChecksTheSecret() async throws {
        try await withSimulator(sharedSecret: "s3cret") { f, port in
            let account = try await f.store.createAccount()
            _ = try await f.store.purchase(productId: H.monthly, account: account.id)
            try await f.store.advance(by: 8 * H.day)
            let receipt = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/device/accounts/\(account.id)/receipt"),
                timeout: .seconds(60)
            )
            let object = try JSONSerialization.jsonObject(with: Data((try await receipt.body.collect(upTo: 1 << 20)).readableBytesView))
            let receiptData = try #require((object as? [String: String])?["receiptData"])
            // The receipt is real PKCS#7 signed by the simulator's receipt chain.
            let parsed = try await AppReceiptSignatureVerifier(
                trustedRoots: [f.receiptIdentity.root],
                bundleId: "com.example.storekeeper"
            ).verify(base64Encoded: receiptData)
            #expect(parsed.inAppPurchases.count == 2)

            func verifier(secret: String?) -> ReceiptVerificationClient {
                ReceiptVerificationClient(
                    httpClient: HTTPClient.shared,
                    configuration: .init(
                        bundleId: "com.example.storekeeper",
                        productionURL: URL(string: "http://127.0.0.1:\(port)/verifyReceipt")!,
                        sandboxURL: URL(string: "http://127.0.0.1:\(port)/sandbox/verifyReceipt")!,
                        sharedSecret: secret
                    )
                )
            }
            // Production first, 21007, then sandbox: valid.
            guard case .valid(let response) = await verifier(secret: "s3cret").verify(receiptData: receiptData) else {
                Issue.record("expected a valid receipt")
                return
            }
            #expect(response.environment == .sandbox)
            #expect(response.latestReceiptInfo?.count == 2)
            #expect(response.pendingRenewalInfo?.first?.autoRenewProductId == H.monthly)
            guard case .invalid(let status, _) = await verifier(secret: "wrong").verify(receiptData: receiptData) else {
                Issue.record("expected the wrong shared secret to be refused")
                return
            }
            #expect(status == 21004)
            f.faults.settings = .init(verifyReceiptStatuses: [21005, 21005])
            guard case .retryLater = await verifier(secret: "s3cret").verify(receiptData: receiptData) else {
                Issue.record("expected an injected 21005 to be retry-later")
                return
            }
        }
    }
}

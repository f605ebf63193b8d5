import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import AsyncHTTPClient
import Crypto
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import Testing

/// Issue 31, item 5: subscriptions reconciled against App Store Connect's Analytics Reports (Subscription Event and
/// Subscription State, requested ONGOING by Storekeeper itself, downloaded in gzip segments) — starts, renewals,
/// conversions, churn and subscribers agreeing over a month with the simulator's record, and a conversion Storekeeper
/// never heard of found as exactly that, on SQLite and PostgreSQL.
@Suite("Reconciliation against Analytics Reports")
struct AnalyticsReportsTests {
    static let appAppleId = "1234567890"

    @Test(
        "a month of trials, conversions, renewals and a cancellation agrees; a lost conversion is found as a conversion and a renewal",
        arguments: TestDatabase.available
    )
    func month(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            // Segments of 2 rows: every report comes in several files, concatenated by Storekeeper.
            await store.setAnalyticsSegmentRows(2)
            let firstDay = ReconciliationTests.day(await server.simulatedNow)
            let first = try #require(ReportCalendar.Day(firstDay))

            // The first reconciliation asks Apple for the reports; days before the request fall back to Sales and Trends.
            let before = try await ReconciliationTests.run(server, from: first.adding(days: -1).description, to: firstDay)
            #expect(before.days.first?.status == .reconciled && before.days.first?.message == nil, "\(before.days)")
            #expect(await store.analyticsRequests(appAppleId: Self.appAppleId, accessType: .ongoing).count == 1)

            // A trial that converts, a member at full price, a member who cancels, and a second trial whose conversion
            // Storekeeper never hears of.
            var originals: [String: String] = [:]
            var accounts: [String: String] = [:]
            for (user, product) in [
                ("trial", PurchaseFlowTests.monthly), ("member", PurchaseFlowTests.standard), ("leaver", PurchaseFlowTests.standard),
            ] {
                let (account, token) = try await server.newCustomer(user, product: product)
                let bought = try await store.purchase(productId: product, account: account, options: PurchaseOptions(appAccountToken: token))
                originals[user] = bought.transaction.originalTransactionId
                accounts[user] = account
            }
            try await store.setAutoRenew(false, originalTransactionId: try #require(originals["leaver"]))
            try await server.deliverAndApply()
            try await store.advance(by: 6 * 3_600)
            let (lostAccount, lostToken) = try await server.newCustomer("unheard", product: PurchaseFlowTests.monthly)
            let lost = try await store.purchase(
                productId: PurchaseFlowTests.monthly,
                account: lostAccount,
                options: PurchaseOptions(appAccountToken: lostToken)
            )
            try await server.deliverAndApply()
            // The first trial converts; the second's conversion (DID_RENEW) is dropped on the way.
            let trialEnd = try #require(lost.transaction.expiresDate)
            try await store.advance(by: trialEnd.timeIntervalSince(await server.simulatedNow) - 3_600)
            try await server.deliverAndApply()
            await store.setDeliveryFaults(DeliveryFaults(dropNext: 1))
            try await store.advance(by: 7_200)
            try await server.deliverAndApply()
            await store.setDeliveryFaults(DeliveryFaults())
            let conversionDay = ReconciliationTests.day(trialEnd)
            // On to the next month: renewals, and the cancelled membership's end.
            let last = first.adding(days: 31)
            while ReportCalendar.apple.day(of: await server.simulatedNow) < last {
                try await store.advance(by: 86_400)
                try await server.deliverAndApply()
            }
            let leaverAccount = try #require(accounts["leaver"])
            let leaverEnd = try #require(await store.transactions(account: leaverAccount).last?.expiresDate)
            #expect(ReportCalendar.apple.day(of: leaverEnd) < last, "the cancellation ends inside the month reconciled")

            let result = try await ReconciliationTests.run(server, from: firstDay, to: last.description)
            #expect(
                result.days.allSatisfy { $0.status == .reconciled && $0.message == nil },
                "\(result.days.map { "\($0.day) \($0.message ?? "")" })"
            )
            let described = result.findings.map { "\($0.day) \($0.kind) \($0.productId): \($0.detail)" }
            // The lost conversion, exactly: on its day Apple counts one renewal and one conversion more than
            // Storekeeper (the other trial converted 6 hours earlier, that day or the one before)...
            let renewals = result.findings.filter { $0.kind == .subscriptionRenewalsDiffer }
            let conversions = result.findings.filter { $0.kind == .subscriptionConversionsDiffer }
            #expect(renewals.count == 1 && renewals.first?.day == conversionDay, "\(described)")
            #expect(renewals.first.map { $0.appleUnits == $0.storekeeperUnits + 1 } == true, "\(described)")
            #expect(conversions.count == 1 && conversions.first?.day == conversionDay, "\(described)")
            #expect(conversions.first.map { $0.appleUnits == $0.storekeeperUnits + 1 } == true, "\(described)")
            #expect(conversions.first?.productId == PurchaseFlowTests.monthly && conversions.first?.storefront == "USA")
            // ... the sales report's paid purchase never delivered, and a subscriber Storekeeper thinks lapsed each day
            // from then on; nothing else (starts, the cancellation's churn, the other renewals agree).
            let lostSale = result.findings.filter { $0.kind == .appleOnly }
            #expect(lostSale.count == 1 && lostSale.first?.day == conversionDay, "\(described)")
            let expected: Set<Components.Schemas.ReconciliationFinding.KindPayload> = [
                .subscriptionRenewalsDiffer, .subscriptionConversionsDiffer, .subscribersDiffer, .appleOnly,
            ]
            let others = result.findings.filter { !expected.contains($0.kind) }
            #expect(others.isEmpty, "\(described)")
            #expect(
                result.findings.filter { $0.kind == .subscribersDiffer }.allSatisfy {
                    $0.day >= conversionDay && $0.appleUnits == $0.storekeeperUnits + 1
                }
            )
            let metrics = MonitoringTests.Exposition(try await server.call(.GET, "/metrics").text)
            #expect((metrics.value("storekeeper_apple_requests_total", ["endpoint": "analyticsReports", "outcome": "ok"]) ?? 0) >= 31)

            // Apple's retry reaches Storekeeper (here, by hand): every day agrees.
            let dropped = try #require(
                await store.sentNotifications().first {
                    $0.type == .didRenew && ReconciliationTests.day($0.payload.signedDate ?? .distantPast) == conversionDay
                        && $0.payload.data?.signedTransactionInfo.map {
                            (try? SignedDataVerifier.decodeUnverifiedPayload($0, as: JWSTransactionDecodedPayload.self))?.originalTransactionId
                        } == lost.transaction.originalTransactionId
                }
            )
            let reply = try await server.call(.POST, "/apple/notifications/v2", json: ["signedPayload": dropped.signedPayload])
            #expect(reply.status == 200, "\(reply.text)")
            try await server.runJob("process-notifications")
            let again = try await ReconciliationTests.run(server, from: firstDay, to: last.description)
            #expect(again.findings.isEmpty, "\(again.findings.map { "\($0.day) \($0.kind): \($0.detail)" })")

            // What Apple counted, kept by download source: two trials that both converted, two memberships of which one
            // churned; at the month's end three subscribers.
            let sources = try await server.api(ServerHarness.adminHeaders).adminSubscriptionSourcesReport(
                query: .init(from: firstDay, to: last.description)
            ).ok.body.json
            #expect(sources.days.count == 31 && sources.lastDay == last.adding(days: -1).description, "\(sources.days)")
            let monthly = try #require(sources.lines.first { $0.productId == PurchaseFlowTests.monthly })
            let standard = try #require(sources.lines.first { $0.productId == PurchaseFlowTests.standard })
            #expect(monthly.downloadSource == "App Store search" && sources.lines.count == 2, "\(sources.lines)")
            #expect(monthly.starts == 2 && monthly.conversions == 2 && monthly.churn == 0 && monthly.activeAtEnd == 2, "\(monthly)")
            #expect(standard.starts == 2 && standard.churn == 1 && standard.activeAtEnd == 1, "\(standard)")
            #expect(standard.continuations >= 1, "the member renewed")
        }
    }

    @Test("segments: a forged or tampered download is refused, a checksum that does not match is malformed")
    func segments() async throws {
        try await ServerHarness.run(.sqlite, environment: .production) { server in
            let store = server.store
            let request = try await store.createAnalyticsRequest(appAppleId: Self.appAppleId, accessType: .ongoing)
            let report = try #require(try await store.analyticsReports(requestId: request.id, name: AnalyticsReports.subscriptionStateStandard).first)
            #expect(try await store.analyticsInstances(reportId: report.id, granularity: "DAILY", processingDate: nil).isEmpty, "today is not over")
            try await store.advance(by: 2 * 86_400)
            let instance = try #require(try await store.analyticsInstances(reportId: report.id, granularity: "DAILY", processingDate: nil).first)
            var segment = try #require(
                try await store.analyticsSegments(instanceId: instance.id, baseURL: "http://127.0.0.1", expiresAt: Date().addingTimeInterval(60))
                    .first
            )
            let url = try #require(segment.attributes?.url)
            let file = try await store.analyticsSegmentFile(
                id: segment.id,
                expires: Int64(try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "expires" }?.value.flatMap(Int64.init))),
                signature: try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "signature" }?.value),
                now: Date()
            )
            #expect(
                try ReportTable(tsv: String(decoding: try Gzip.decompress(file, limit: 1 << 20), as: UTF8.self)).columns
                    == AnalyticsSubscriptionStateRow.columns
            )
            await #expect(throws: SimulatedAppStore.AnalyticsError.self) {
                _ = try await store.analyticsSegmentFile(
                    id: segment.id,
                    expires: Int64(Date().timeIntervalSince1970) + 60,
                    signature: "forged",
                    now: Date()
                )
            }
            await #expect(throws: SimulatedAppStore.AnalyticsError.self) {
                _ = try await store.analyticsSegmentFile(id: segment.id, expires: 1, signature: "x", now: Date())
            }
            await #expect(throws: SimulatedAppStore.AnalyticsError.conflict("the app already has a ONGOING report request")) {
                _ = try await store.createAnalyticsRequest(appAppleId: Self.appAppleId, accessType: .ongoing)
            }
            // Through the client, over HTTP: the right file reads, a wrong checksum does not.
            let client = AnalyticsReportsClient(
                httpClient: .shared,
                tokens: try AppStoreConnectTokenGenerator(
                    privateKeyPEM: SharedIdentities.apiKey.pemRepresentation,
                    keyId: SharedIdentities.apiKeyId,
                    issuerId: SharedIdentities.issuerId
                ),
                baseURL: server.simulatorURL
            )
            let segments = try await client.segments(instanceId: instance.id)
            #expect(segments.count == 1)
            _ = try await client.download(try #require(segments.first))
            segment = try #require(segments.first)
            segment.attributes?.checksum = String(repeating: "0", count: 32)
            let refused = await #expect(throws: AppStoreConnectReportError.self) { _ = try await client.download(segment) }
            #expect(refused?.kind == .malformed && refused?.message.contains("checksum") == true, "\(String(describing: refused))")
        }
    }
}

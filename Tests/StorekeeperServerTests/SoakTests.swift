import AppStoreSimulator
import AppStoreWire
import AsyncHTTPClient
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// A year of random lifecycles for many users with Apple's delivery at its worst (duplicates, reordering, drops):
/// after catch-up every user's entitlements and coins equal the simulator's truth, and each notification is
/// applied once.
@Suite("Soak")
struct SoakTests {
    static let products = [
        "com.example.storekeeper.membership.monthly.standard", "com.example.storekeeper.membership.yearly",
        "com.example.storekeeper.coins.60", "com.example.storekeeper.chapter.2", "com.example.storekeeper.vipA",
    ]

    @Test("1,000 users over a simulated year with duplicate, out-of-order and dropped notifications")
    func yearOfRandomLifecycles() async throws {
        let users = Int(ProcessInfo.processInfo.environment["STOREKEEPER_SOAK_USERS"] ?? "") ?? 1_000
        try await ServerHarness.run(.sqlite, configure: { $0.lifecycle.catchUpLookback = 179 * 86_400 }) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            var random = SystemRandomNumberGenerator()
            var customers: [(user: String, token: UUID, account: String)] = []
            var recovered = 0
            for index in 0..<users {
                let product = Self.products[index % Self.products.count]
                let (account, token) = try await server.newCustomer("soak-\(index)", product: product)
                customers.append(("soak-\(index)", token, account))
                _ = try await store.purchase(productId: product, account: account, appAccountToken: token)
            }
            for month in 0..<12 {
                await store.setDeliveryFaults(
                    DeliveryFaults(duplicate: true, outOfOrder: month % 2 == 0, dropNext: Int.random(in: 0...25, using: &random))
                )
                for (_, token, account) in customers.shuffled(using: &random).prefix(users / 10) {
                    switch Int.random(in: 0..<5, using: &random) {
                    case 0:
                        try await store.setBillingFails(Bool.random(using: &random), account: account)
                    case 1:
                        if let latest = await store.transactions(account: account).last(where: { $0.revocationDate == nil }) {
                            try? await store.decideRefund(transactionId: latest.transactionId!, approve: true)
                        }
                    case 2:
                        _ = try? await store.purchase(productId: "com.example.storekeeper.coins.60", account: account, appAccountToken: token)
                    case 3:
                        if let original = await store.transactions(account: account).last?.originalTransactionId {
                            try? await store.setAutoRenew(false, originalTransactionId: original)
                        }
                    default:
                        _ = try? await store.purchase(productId: "com.example.storekeeper.vipB", account: account, appAccountToken: token)
                    }
                }
                try await store.advance(by: 31 * 86_400)
                try await server.deliverAndApply()
                // Catch-up runs periodically (hourly in production), here once a simulated month.
                recovered += try await server.runJob("catch-up", now: await server.simulatedNow + 60)
                try await server.runJob("process-notifications")
            }
            await store.setDeliveryFaults(DeliveryFaults())
            // Apple has given up on the dropped ones; catch-up finds them in the history.
            recovered += try await server.runJob("catch-up", now: await server.simulatedNow + 120)
            #expect(recovered > 0)
            try await server.runJob("process-notifications")

            let now = await server.simulatedNow
            var mismatches: [String] = []
            for (user, token, _) in customers {
                let me = try await server.me(user, at: now)
                let active = Set(me.entitlements.filter(\.active).map(\.entitlement))
                let truth = await server.truthEntitlements(token: token, at: now)
                let coins = Int(me.wallet.additionalProperties["coins"] ?? 0)
                let truthCoins = 60 * (await store.groundTruth(appAccountToken: token, at: now).consumables["com.example.storekeeper.coins.60"] ?? 0)
                if active != truth || coins != truthCoins {
                    mismatches.append("\(user): \(active.sorted()) vs \(truth.sorted()), coins \(coins) vs \(truthCoins)")
                }
            }
            #expect(mismatches.isEmpty, "\(mismatches.count) users differ: \(mismatches.prefix(5))")
            let summary = try await server.call(.GET, "/v1/admin/notifications/summary", headers: ServerHarness.adminHeaders)
            let counts = summary["counts"] as? [String: Int] ?? [:]
            let sent = await store.sentNotifications().count
            #expect(counts["processed"] == sent, "\(counts) for \(sent) sent")
            #expect(counts["pending"] == nil && counts["dead"] == nil, "\(counts)")
        }
    }
}

#if os(Linux)
// Plays an iPhone through the StoreKit stand-in against a real `storekeeper demo`: Linux only.
import Foundation
import StorekeeperAPI
import Testing

@testable import StorekeeperKit

#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif
extension OnTheDevice {
    /// The app process is killed with SIGKILL after Apple's charge and before the submit — before the journal write
    /// (StoreKit's unfinished transaction carries it) and after it — and launched again: the user is credited exactly
    /// once, and `finish()` is called exactly once, after the server's answer.
    @Suite struct KilledAppTests {
        static let coins = "com.example.storekeeper.coins.60"

        @Test(arguments: ["charged", "journaled"])
        func aPurchaseTheAppWasKilledInIsDeliveredOnceAtNextLaunch(killedAfter step: String) async throws {
            try await DemoServer.run { demo in
                let device = FileManager.default.temporaryDirectory.appendingPathComponent("sk-kit-app-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: device) }
                let account = try await demo.newAccount()
                let guest = try await demo.api().createGuest().created.body.json.token
                let credentials = Credentials.guest(guest)
                // This test process looks at the same device the app plays (StoreKit's state lives on the device).
                try SimulatedDevice.configure(simulatorURL: demo.simulatorURL, account: account, storage: device)

                let app = try AppProcess(
                    demo: demo,
                    account: account,
                    device: device,
                    guest: guest,
                    command: ["buy", Self.coins, "--hold-after", step]
                )
                try await app.waitFor("holding \(step)")
                app.kill()

                let charged = try #require(app.lines.first { $0.hasPrefix("progress charged ") }?.split(separator: " ").last.map(String.init))
                // Apple's ONE_TIME_CHARGE notification may have credited it on the server already (attributed by the
                // order's appAccountToken): never twice, and never finished on the device before the server answered.
                #expect(try await Self.coins(demo, credentials) <= 60)
                #expect(SimulatedDevice.finishCalls().isEmpty)
                #expect(await Self.unfinished() == [charged], "StoreKit keeps the charge unfinished")
                let journaled = try PurchaseJournal(url: device.appendingPathComponent("storekeeper-journal.json"))
                #expect(await journaled.all().map(\.id) == (step == "journaled" ? [charged] : []))

                let relaunch = try await AppProcess(demo: demo, account: account, device: device, guest: guest, command: ["resume"]).finish()
                #expect(relaunch.contains { $0.hasPrefix("resumed \(charged) delivered(") }, "\(relaunch)")
                #expect(try await Self.coins(demo, credentials) == 60)
                #expect(SimulatedDevice.finishCalls() == [UInt64(charged)], "finished once, after the server delivered")
                #expect(await Self.unfinished().isEmpty)
                #expect(try await PurchaseJournal(url: device.appendingPathComponent("storekeeper-journal.json")).all().isEmpty)
                let orders = try await demo.api(credentials).getMe().ok.body.json.orders
                #expect(orders.map(\.status) == [.delivered], "the order the killed launch created is the one delivered")

                // Another launch has nothing left to do.
                let again = try await AppProcess(demo: demo, account: account, device: device, guest: guest, command: ["resume"]).finish()
                #expect(again.filter { $0.hasPrefix("resumed") }.isEmpty)
                #expect(try await Self.coins(demo, credentials) == 60)
                #expect(SimulatedDevice.finishCalls() == [UInt64(charged)])
            }
        }

        static func unfinished() async -> [String] {
            var ids: [String] = []
            for await result in Transaction.unfinished { ids.append(String(result.unsafePayloadValue.id)) }
            return ids
        }

        static func coins(_ demo: DemoServer, _ credentials: Credentials) async throws -> Int64 {
            try await demo.api(credentials).getMe().ok.body.json.wallet.additionalProperties["coins"] ?? 0
        }
    }
}
#endif

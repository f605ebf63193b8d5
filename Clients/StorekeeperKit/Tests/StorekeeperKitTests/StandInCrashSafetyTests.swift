#if os(Linux)
import Foundation
import Testing

@testable import StoreKitStandIn

extension OnTheDevice {
    /// The stand-in keeps the device's transactions as StoreKit does: each change in one atomic write, so a kill at any
    /// point neither lists a transaction twice nor forgets a charged one (issue 30, item 17).
    @Suite struct StandInCrashSafetyTests {
        static func record(_ storage: URL) throws -> SimulatedDevice.Record {
            try JSONDecoder().decode(SimulatedDevice.Record.self, from: Data(contentsOf: storage.appendingPathComponent("device-transactions.json")))
        }

        @Test func aPurchaseAndASyncEachChangeOneFileInOneWrite() async throws {
            try await DemoServer.run { demo in
                let storage = FileManager.default.temporaryDirectory.appendingPathComponent("sk-kit-standin-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: storage) }
                let account = try await demo.newAccount()
                try SimulatedDevice.configure(simulatorURL: demo.simulatorURL, account: account, storage: storage)
                let product = try #require(try await Product.products(for: [ListenerTests.coins]).first)
                guard case .success(let verification) = try await product.purchase() else {
                    Issue.record("the purchase went through")
                    return
                }
                let bought = String(verification.unsafePayloadValue.id)
                // Unfinished and seen, in the one file; nothing else holds transaction state.
                var record = try Self.record(storage)
                #expect(record.unfinished.map { String($0.id) } == [bought])
                #expect(record.known?.contains(bought) == true)
                let files = try FileManager.default.contentsOfDirectory(atPath: storage.path).filter { $0.contains("transactions") }
                #expect(files == ["device-transactions.json"], "\(files)")

                // A charge on another device: the sync keeps it unfinished and seen in the same write.
                let elsewhere = try await demo.buy(ListenerTests.coins, appAccountToken: UUID().uuidString.lowercased(), account: account)
                let new = try await SimulatedDevice.sync()
                #expect(new.map { String($0.id) } == [elsewhere.transactionId])
                record = try Self.record(storage)
                #expect(Set(record.unfinished.map { String($0.id) }) == [bought, elsewhere.transactionId])
                #expect(record.known?.contains(elsewhere.transactionId) == true)
                #expect(try await SimulatedDevice.sync().isEmpty, "seen once")

                // The state a kill between two files used to leave (kept, never marked seen): a sync lists it once.
                record.known?.removeAll { $0 == elsewhere.transactionId }
                try JSONEncoder().encode(record).write(to: storage.appendingPathComponent("device-transactions.json"))
                _ = try await SimulatedDevice.sync()
                let ids = SimulatedDevice.unfinished().map { String($0.id) }
                #expect(ids.filter { $0 == elsewhere.transactionId }.count == 1, "never listed twice: \(ids)")
            }
        }
    }
}
#endif

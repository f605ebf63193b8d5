#if os(Linux)
// Plays an iPhone through the StoreKit stand-in against a real `storekeeper demo`: Linux only.
import Foundation
import StorekeeperAPI
import Testing

@testable import StorekeeperKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif

extension OnTheDevice {
    /// 200 purchases by the example app on four devices while the app is killed (SIGKILL at a step of the purchase,
    /// or after a random delay) and the server is killed and restarted, the App Store simulator running on in its own
    /// process. At the end, against the simulator's ground truth: every coin purchase Apple charged is credited
    /// exactly once, every transaction is finished exactly once, and nothing is left in a journal or unfinished.
    @Suite struct KillRunTests {
        static let coins = "com.example.storekeeper.coins.60"

        /// The simulator and the server as separate processes, so the server can die while the App Store lives.
        final class SplitDemo: @unchecked Sendable {
            let state: URL
            let serverPort: Int
            let simulatorPort: Int
            var simulator: Process?
            var server: Process?

            init() throws {
                state = FileManager.default.temporaryDirectory.appendingPathComponent("sk-kit-killrun-\(UUID().uuidString)")
                serverPort = try DemoServer.freePort()
                simulatorPort = try DemoServer.freePort()
            }

            var demo: DemoServer {
                DemoServer(
                    process: server ?? Process(),
                    serverURL: URL(string: "http://127.0.0.1:\(serverPort)")!,
                    simulatorURL: URL(string: "http://127.0.0.1:\(simulatorPort)")!,
                    state: state
                )
            }

            static func launch(_ arguments: [String]) throws -> Process {
                let process = Process()
                process.executableURL = try DemoServer.executable()
                process.arguments = arguments
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                return process
            }

            func startSimulator() async throws {
                try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
                simulator = try Self.launch([
                    "simulator", "--port", "\(simulatorPort)", "--state-dir", state.path,
                    "--notification-url", "http://127.0.0.1:\(serverPort)/apple/notifications/v2",
                ])
                for _ in 0..<300 {
                    if (try? await URLSession.shared.data(from: demo.simulatorURL.appendingPathComponent("health"))) != nil { return }
                    try await Task.sleep(for: .milliseconds(100))
                }
                throw URLError(.timedOut)
            }

            func startServer() async throws {
                server = try Self.launch([
                    "demo", "--port", "\(serverPort)", "--state-dir", state.path,
                    "--simulator-url", "http://127.0.0.1:\(simulatorPort)",
                ])
                try await demo.waitUntilHealthy()
            }

            func killServer() {
                guard let server else { return }
                kill(server.processIdentifier, SIGKILL)
                server.waitUntilExit()
                self.server = nil
            }

            func stop() {
                for process in [server, simulator].compactMap({ $0 }) where process.isRunning {
                    process.terminate()
                    process.waitUntilExit()
                }
                try? FileManager.default.removeItem(at: state)
            }
        }

        /// A reproducible source of choices (SplitMix64): a failing run is replayed with its seed.
        struct Choices {
            var state: UInt64
            mutating func next(_ bound: Int) -> Int {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return Int((z ^ (z >> 31)) % UInt64(bound))
            }
        }

        struct Device {
            let account: String
            let guest: String
            let storage: URL
        }

        @Test func twoHundredPurchasesThroughKillsLoseNothingAndDoubleNothing() async throws {
            let split = try SplitDemo()
            defer { split.stop() }
            try await split.startSimulator()
            try await split.startServer()
            // `KILL_RUN_SEED` replays a run (the kills land at the same steps; timings still differ).
            let seed = ProcessInfo.processInfo.environment["KILL_RUN_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
            var choices = Choices(state: seed)
            var devices: [Device] = []
            for index in 0..<4 {
                devices.append(
                    Device(
                        account: try await split.demo.newAccount(),
                        guest: try await split.demo.api().createGuest().created.body.json.token,
                        storage: split.state.appendingPathComponent("device-\(index)")
                    )
                )
            }
            var appKills = 0
            var serverKills = 0
            for purchase in 0..<200 {
                let device = devices[purchase % devices.count]
                Self.trace("purchase \(purchase) server \(split.server != nil)")
                // Now and then the server dies (SIGKILL) and stays down for a few purchases.
                if split.server != nil, [50, 110, 170].contains(purchase) || choices.next(40) == 0 {
                    split.killServer()
                    serverKills += 1
                    Self.trace("killed the server")
                } else if split.server == nil, choices.next(3) == 0 {
                    Self.trace("starting the server")
                    try await split.startServer()
                    Self.trace("started the server")
                }
                var command = ["buy", Self.coins]
                let kill = choices.next(4)
                if kill == 1 { command += ["--hold-after", ["ordered", "charged", "journaled"][choices.next(3)]] }
                let app = try AppProcess(
                    demo: split.demo,
                    account: device.account,
                    device: device.storage,
                    guest: device.guest,
                    command: command
                )
                Self.trace("app \(command)")
                switch kill {
                case 1:
                    let step = command.last!
                    // Without a server there is no order to hold after: the app fails fast.
                    for _ in 0..<300 where app.process.isRunning && !app.lines.contains("holding \(step)") {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    app.kill()
                    appKills += 1
                case 2:
                    try await Task.sleep(for: .milliseconds(choices.next(400)))
                    app.kill()
                    appKills += 1
                default:
                    for _ in 0..<600 where app.process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
                    if app.process.isRunning { app.kill() }
                }
            }
            if split.server == nil { try await split.startServer() }

            // Every device launches again with the server up until its journal is empty (a launch that meets the
            // server still settling a restart leaves an entry for the next one, as a real app's next launch would):
            // whatever is left is delivered. Three launches at most.
            for device in devices {
                for launch in 1...3 {
                    let lines = try await AppProcess(
                        demo: split.demo,
                        account: device.account,
                        device: device.storage,
                        guest: device.guest,
                        command: ["resume"]
                    ).finish()
                    #expect(lines.last == "done", "\(lines)")
                    // Opened afresh: a journal reads its file once, when it is opened.
                    let journal = try PurchaseJournal(url: device.storage.appendingPathComponent("storekeeper-journal.json"))
                    if await journal.all().isEmpty { break }
                    print("kill run: seed \(seed): launch \(launch) left the journal non-empty: \(lines.suffix(5))")
                }
            }

            var charged = 0
            for device in devices {
                // Apple's ground truth: the coin purchases charged to this device's account.
                let (data, _) = try await URLSession.shared.data(
                    from: split.demo.simulatorURL.appendingPathComponent("device/accounts/\(device.account)/transactions")
                )
                let signed = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["signedTransactions"] as? [String])
                let ids = try signed.map { try Self.transactionId($0) }
                charged += ids.count
                let coins = try await split.demo.api(.guest(device.guest)).getMe().ok.body.json.wallet.additionalProperties["coins"] ?? 0
                #expect(coins == Int64(60 * ids.count), "seed \(seed): credited exactly once per charge")

                try SimulatedDevice.configure(simulatorURL: split.demo.simulatorURL, account: device.account, storage: device.storage)
                // Every charge finished, nothing else. A kill between `finish()` and the journal's write finishes that
                // transaction once more at the next launch, which StoreKit ignores: the money is checked above.
                #expect(Set(SimulatedDevice.finishCalls().map(String.init)) == Set(ids), "seed \(seed): each charge finished")
                var unfinished = 0
                for await _ in Transaction.unfinished { unfinished += 1 }
                #expect(unfinished == 0, "seed \(seed)")
                #expect(try await PurchaseJournal(url: device.storage.appendingPathComponent("storekeeper-journal.json")).all().isEmpty)
            }
            #expect(charged > 100, "seed \(seed): most purchases were charged (\(charged))")
            #expect(appKills > 20 && serverKills > 0, "seed \(seed): \(appKills) app kills, \(serverKills) server kills")
            print("kill run: seed \(seed), 200 purchases, \(charged) charged, \(appKills) app kills, \(serverKills) server kills")
        }

        /// With `KILL_RUN_TRACE=path`, each step is appended there (the test's own output is shown only at its end).
        static func trace(_ line: String) {
            guard let path = ProcessInfo.processInfo.environment["KILL_RUN_TRACE"] else { return }
            if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
            guard let handle = FileHandle(forWritingAtPath: path) else { return }
            handle.seekToEndOfFile()
            handle.write(Data((line + "\n").utf8))
            handle.closeFile()
        }

        static func transactionId(_ jws: String) throws -> String {
            let payload = try #require(jws.split(separator: ".").dropFirst().first)
            var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            let decoded = try #require(Data(base64Encoded: base64))
            let claims = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
            return try #require(claims["transactionId"] as? String)
        }
    }
}
#endif

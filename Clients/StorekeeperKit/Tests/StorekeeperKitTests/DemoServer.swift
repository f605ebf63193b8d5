#if os(Linux)
// Plays an iPhone through the StoreKit stand-in against a real `storekeeper demo`: Linux only.
import Foundation
import StorekeeperAPI
import StorekeeperKit
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `storekeeper demo` (server on SQLite plus the App Store simulator) for the SDK's tests. The executable is
/// `STOREKEEPER_BIN` when set, else the repository's debug build (built when missing).
struct DemoServer {
    let process: Process
    let serverURL: URL
    let simulatorURL: URL
    let state: URL

    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    static func executable() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["STOREKEEPER_BIN"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let built = repository.appendingPathComponent(".build/debug/storekeeper")
        if !FileManager.default.isExecutableFile(atPath: built.path) {
            let swift = Process()
            swift.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            swift.arguments = ["swift", "build", "--package-path", repository.path, "--product", "storekeeper"]
            try swift.run()
            swift.waitUntilExit()
        }
        return built
    }

    /// A port nobody listens on now (the kernel's choice, released at once).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw URLError(.cannotConnectToHost) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs `body` with a demo that is stopped (SIGTERM) afterwards.
    static func run(_ body: (DemoServer) async throws -> Void) async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("sk-kit-\(UUID().uuidString)")
        let port = try freePort()
        let simulatorPort = try freePort()
        let process = Process()
        process.executableURL = try executable()
        process.arguments = ["demo", "--port", "\(port)", "--simulator-port", "\(simulatorPort)", "--state-dir", state.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let demo = DemoServer(
            process: process,
            serverURL: URL(string: "http://127.0.0.1:\(port)")!,
            simulatorURL: URL(string: "http://127.0.0.1:\(simulatorPort)")!,
            state: state
        )
        defer {
            process.terminate()
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: state)
        }
        try await demo.waitUntilHealthy()
        try await body(demo)
    }

    func waitUntilHealthy() async throws {
        for _ in 0..<300 {
            if let (_, response) = try? await URLSession.shared.data(from: serverURL.appendingPathComponent("health/live")),
                (response as? HTTPURLResponse)?.statusCode == 200,
                (try? await URLSession.shared.data(from: simulatorURL.appendingPathComponent("health"))) != nil
            {
                return
            }
            guard process.isRunning else { throw URLError(.cannotConnectToHost) }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw URLError(.timedOut)
    }

    /// The demo's answer-signing public key, as an app pins it.
    func answers() throws -> AnswerVerifier {
        try AnswerVerifier(publicKeyPEM: String(contentsOf: state.appendingPathComponent("answer-signing-public.pem"), encoding: .utf8))
    }

    /// The generated client with `credentials`.
    func api(_ credentials: Credentials? = nil) -> Client {
        StorekeeperConnection.client(serverURL: serverURL) { credentials }
    }

    /// A new App Store account on the simulator.
    func newAccount() async throws -> String {
        try #require(try await post("device/accounts", [:])["id"] as? String)
    }

    /// A simulated App Store purchase on a fresh device account: what StoreKit would hand the app.
    func buy(_ productId: String, appAccountToken: String, account: String? = nil) async throws -> (transactionId: String, signedTransaction: String)
    {
        let accountId: String
        if let account { accountId = account } else { accountId = try await newAccount() }
        let purchase = try await post("device/purchases", ["account": accountId, "productId": productId, "appAccountToken": appAccountToken])
        let jws = try #require(purchase["signedTransaction"] as? String)
        let payload = try #require(jws.split(separator: ".").dropFirst().first)
        var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let decoded = try #require(Data(base64Encoded: base64))
        let claims = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
        return (try #require(claims["transactionId"] as? String), jws)
    }

    /// Turns a subscription's auto-renew off or on, as the user does in Settings.
    func setAutoRenew(original: String, enabled: Bool) async throws {
        _ = try await post("device/subscriptions/\(original)/auto-renew", ["enabled": enabled], expectsBody: false)
    }

    /// Moves the simulator's clock forward by an ISO 8601 period, running the renewals and expiries due.
    func advanceClock(_ period: String) async throws {
        _ = try await post("control/clock/advance", ["period": period])
    }

    private func post(_ path: String, _ body: [String: Any], expectsBody: Bool = true) async throws -> [String: Any] {
        var request = URLRequest(url: simulatorURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect(
            (response as? HTTPURLResponse).map { (200..<300).contains($0.statusCode) } == true,
            "\(path): \(String(decoding: data, as: UTF8.self))"
        )
        guard expectsBody else { return [:] }
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
#endif

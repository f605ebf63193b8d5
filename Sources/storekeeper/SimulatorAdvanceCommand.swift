import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// `storekeeper simulator-advance`: move a running simulator's clock forward.
struct SimulatorAdvanceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulator-advance",
        abstract: "Move a running simulator's clock forward (renewals, retries and expiries run on the way).",
        discussion: "Examples: storekeeper simulator-advance P1M; storekeeper simulator-advance 3600 --url http://127.0.0.1:8090"
    )

    @Option(help: "The simulator's address.")
    var url = "http://127.0.0.1:8090"

    @Argument(help: "An ISO 8601 period (P3D, P1W, P1M, P1Y) or a number of seconds.")
    var duration: String

    func run() async throws {
        var body: [String: Any] = [:]
        if let seconds = Double(duration) { body["seconds"] = seconds } else { body["period"] = duration }
        var request = HTTPClientRequest(url: url + "/control/clock/advance")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
        guard response.status == .ok else {
            FileHandle.standardError.write(Data("storekeeper simulator-advance: \(response.status.code) \(text)\n".utf8))
            throw ExitCode(1)
        }
        print(text)
    }
}

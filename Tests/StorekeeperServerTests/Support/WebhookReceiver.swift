import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFoundationCompat
import NIOPosix
import Synchronization

/// The app's backend in the webhook tests: a real HTTP server on loopback that records every POST (headers and body
/// as received) and answers 2xx, or fails a chosen share of calls with 503.
final class WebhookReceiver: Sendable {
    struct Received: Sendable {
        let headers: HTTPFields
        let body: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        func header(_ name: String) -> String? { HTTPField.Name(name).flatMap { headers[$0] } }
    }

    private let state = Mutex<(received: [Received], failures: Int, answered: Int)>(([], 0, 0))
    /// The share of calls answered 503 (0…1): every call whose number modulo 10 is below `failureRate × 10`, so a
    /// rate of 0.3 fails exactly three calls in ten.
    let failureRate: Double
    /// Delay before answering, to stand for a slow backend.
    let delay: Duration

    init(failureRate: Double = 0, delay: Duration = .zero) {
        self.failureRate = failureRate
        self.delay = delay
    }

    /// Every accepted POST in arrival order.
    var received: [Received] { state.withLock { $0.received } }
    var failures: Int { state.withLock { $0.failures } }

    /// A port nobody listens on yet (the receiver can be started on it later: "down, then back").
    static func freePort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        let port = channel.localAddress?.port ?? 0
        try channel.close().wait()
        return port
    }

    /// Serves on `port` while `body` runs.
    func serve(port: Int, _ body: () async throws -> Void) async throws {
        let router = Router()
        router.post("hook") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 16 << 20)
            if self.delay > .zero { try await Task.sleep(for: self.delay) }
            let fail = self.state.withLock { state in
                defer { state.answered += 1 }
                return Double(state.answered % 10) < self.failureRate * 10
            }
            self.state.withLock { state in
                if fail {
                    state.failures += 1
                } else {
                    state.received.append(Received(headers: request.headers, body: Data(buffer: bytes)))
                }
            }
            return Response(status: fail ? .serviceUnavailable : .noContent)
        }
        let key = "receiver-\(UUID().uuidString)"
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in PortRegistry.shared.publish(key, channel.localAddress?.port ?? 0) },
            logger: ServerHarness.quietLogger("receiver")
        )
        try await ServerHarness.withRunning(app, key: key) { _ in try await body() }
    }
}

import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// `/health` (readiness: the database takes a write and the writer's last batch committed), `/health/live`, `/metrics` (Prometheus) and `/openapi.yaml`.
struct OperationsController {
    let ledger: Ledger
    let metrics: ServerMetrics
    let openAPI: String
    /// SHA-256 of the bearer token `/metrics` asks for; `nil`: open.
    let metricsTokenDigest: SHA256.Digest?
    /// This process's row in `health_probes`.
    let instance = UUID().uuidString

    /// How long a failed batch commit keeps `/health` failing when nothing commits after it (then the probe alone
    /// decides, so an instance taken out of rotation gets traffic again to show whether it recovered).
    static let writerFailureWindow: TimeInterval = 30

    /// `/health`'s answer (not the API's error shape: load balancers read the status).
    struct Health: Encodable {
        var status: String
        var database: String
        var message: String?
    }

    func add(to routes: APIRoutes) {
        let router = routes.router
        router.get("health/live") { _, context in try context.json(Health(status: "ok", database: "unchecked")) }
        router.get("health") { _, context in
            do {
                try await ledger.probe(instance: instance)
                if let reason = ledger.recentWriteFailure(within: Self.writerFailureWindow) {
                    context.logger.warning("health: the writer's last batch failed", metadata: ["error": "\(reason)"])
                    return try context.json(
                        Health(status: "unavailable", database: "failing", message: "the database refused the last writes"),
                        status: .serviceUnavailable
                    )
                }
                return try context.json(Health(status: "ok", database: "ok"))
            } catch {
                return try context.json(
                    Health(status: "unavailable", database: "failing", message: "the database does not take a write"),
                    status: .serviceUnavailable
                )
            }
        }
        router.get("metrics") { request, _ in
            if let expected = metricsTokenDigest {
                // Compared as digests, so the time taken says nothing about how much of the token matched.
                let presented = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil } ?? ""
                guard SHA256.hash(data: Data(presented.utf8)) == expected else {
                    return Response(
                        status: .unauthorized,
                        headers: [.contentType: "text/plain; charset=utf-8", .wwwAuthenticate: "Bearer realm=\"metrics\""],
                        body: .init(byteBuffer: ByteBuffer(string: "send the metrics token (auth.metricsToken) as a Bearer token\n"))
                    )
                }
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.exposition()))
            )
        }
        router.get("openapi.yaml") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(string: openAPI))
            )
        }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Sets each request's ``StorekeeperRequestContext/clientAddress``: behind a trusted reverse proxy (its socket
/// address in `http.trustedProxies`), the nearest address in `X-Forwarded-For` that is not itself a trusted proxy
/// (the client's, as the proxy appended it; anything further left is the client's own claim); otherwise the socket
/// peer's, whatever the header says. Refusal counts and sign-in throttles key on it.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = StorekeeperRequestContext
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    let trusted: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !trusted.isEmpty else { return try await next(request, context) }
        var context = context
        context.clientAddress = Self.address(
            peer: context.remoteAddress?.ipAddress,
            forwardedFor: request.headers[values: Self.forwardedFor],
            trusted: trusted
        )
        return try await next(request, context)
    }

    /// The client's address, given the socket peer, the `X-Forwarded-For` values in order and the trusted proxies.
    static func address(peer: String?, forwardedFor: [String], trusted: Set<String>) -> String? {
        guard let peer, trusted.contains(peer) else { return peer }
        // Bounded: the header's length is, and no chain of proxies is longer.
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.suffix(32).map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() where !trusted.contains(hop) {
            return isIPAddress(hop) ? hop : peer
        }
        return peer
    }

    /// Whether `text` is an IPv4 or IPv6 address.
    static func isIPAddress(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 45 else { return false }
        return (try? SocketAddress(ipAddress: text, port: 0)) != nil
    }
}

import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A scriptable HTTP/1.1 server on 127.0.0.1 (an ephemeral port) for exercising clients over real sockets.
///
/// Each request is recorded and answered by the handler closure.
final class LocalHTTPServer: Sendable {
    struct Request: Sendable {
        var method: String
        /// The request target as sent: path plus `?query`.
        var uri: String
        var headers: [(name: String, value: String)]
        var body: Data

        var path: String { String(uri.split(separator: "?", maxSplits: 1).first ?? "") }

        /// Query items in order, percent-decoded.
        var queryItems: [URLQueryItem] {
            URLComponents(string: "http://localhost" + uri)?.queryItems ?? []
        }

        func queryValues(_ name: String) -> [String] {
            queryItems.filter { $0.name == name }.compactMap(\.value)
        }

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        var bodyText: String { String(decoding: body, as: UTF8.self) }

        func bodyJSON() -> [String: Any]? {
            (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        }
    }

    struct Response: Sendable {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: Data

        init(status: Int = 200, headers: [(name: String, value: String)] = [], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        static func json(_ text: String, status: Int = 200, headers: [(name: String, value: String)] = []) -> Self {
            Self(status: status, headers: [("Content-Type", "application/json")] + headers, body: Data(text.utf8))
        }

        static func empty(_ status: Int) -> Self { Self(status: status) }
    }

    typealias Handler = @Sendable (Request) -> Response

    private let channel: any Channel
    private let log: RequestLog
    let port: Int

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// Every request received so far, in arrival order.
    var requests: [Request] { log.requests.withLock { $0 } }

    private init(channel: any Channel, log: RequestLog, port: Int) {
        self.channel = channel
        self.log = log
        self.port = port
    }

    static func start(handler: @escaping Handler) async throws -> LocalHTTPServer {
        let log = RequestLog()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        ScriptedHandler(
                            handler: handler,
                            record: { request in log.requests.withLock { $0.append(request) } }
                        )
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return LocalHTTPServer(channel: channel, log: log, port: channel.localAddress?.port ?? 0)
    }

    func shutdown() async throws {
        try await channel.close()
    }
}

// Shared by the server object and every connection's handler.
private final class RequestLog: Sendable {
    let requests = Mutex<[LocalHTTPServer.Request]>([])
}

private final class ScriptedHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let handler: LocalHTTPServer.Handler
    private let record: @Sendable (LocalHTTPServer.Request) -> Void
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(handler: @escaping LocalHTTPServer.Handler, record: @escaping @Sendable (LocalHTTPServer.Request) -> Void) {
        self.handler = handler
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            self.head = nil
            let request = LocalHTTPServer.Request(
                method: head.method.rawValue,
                uri: head.uri,
                headers: head.headers.map { (name: $0.name, value: $0.value) },
                body: Data(body.readableBytesView)
            )
            record(request)
            let response = handler(request)

            var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
            headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
            let keepAlive = head.isKeepAlive
            headers.replaceOrAdd(name: "Connection", value: keepAlive ? "keep-alive" : "close")
            let responseHead = HTTPResponseHead(
                version: head.version,
                status: HTTPResponseStatus(statusCode: response.status),
                headers: headers
            )
            context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
            if !response.body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
            }
            if keepAlive {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else {
                let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                    loopBoundContext.value.close(promise: nil)
                }
            }
        }
    }
}

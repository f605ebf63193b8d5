import NIOCore
import NIOPosix
import Synchronization

/// A lean HTTP/1.1 keep-alive client for load generation on loopback.
///
/// The load generator shares the machine with the server it measures: a general-purpose client's request
/// building, pooling and response parsing cost a noticeable share of two cores. This one writes pre-built request
/// bytes on a pooled connection and reads back only the status line and `Content-Length` of the answer, so the
/// measured CPU is the server's. Responses without `Content-Length` are reported as errors, not guessed at.
public final class LoopbackHTTPClient: Sendable {
    private let host: String
    private let port: Int
    private let group: any EventLoopGroup
    private let idle = Mutex<[any Channel]>([])

    public init(host: String = "127.0.0.1", port: Int, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.host = host
        self.port = port
        self.group = group
    }

    /// The bytes of one request, built once and sent as often as needed.
    public static func request(
        method: String = "POST",
        path: String,
        contentType: String = "application/json",
        headers: [(String, String)] = [],
        body: String
    ) -> ByteBuffer {
        var buffer = ByteBuffer()
        let extra = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        buffer.writeString(
            "\(method) \(path) HTTP/1.1\r\nHost: loopback\r\nContent-Type: \(contentType)\r\n\(extra)Content-Length: \(body.utf8.count)\r\n\r\n"
        )
        buffer.writeString(body)
        return buffer
    }

    /// Sends `request` on an idle connection (opening one if none is idle) and returns the response status.
    public func send(_ request: ByteBuffer) async throws -> Int {
        let channel = try await checkout()
        do {
            let promise = channel.eventLoop.makePromise(of: Int.self)
            channel.writeAndFlush(ResponseStatusHandler.Outbound(bytes: request, status: promise), promise: nil)
            let status = try await promise.futureResult.get()
            idle.withLock { $0.append(channel) }
            return status
        } catch {
            try? await channel.close()
            throw error
        }
    }

    public func shutdown() async {
        for channel in idle.withLock({ channels in
            defer { channels = [] }
            return channels
        }) {
            try? await channel.close()
        }
    }

    private func checkout() async throws -> any Channel {
        if let channel = idle.withLock({ $0.popLast() }), channel.isActive { return channel }
        return try await ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(ResponseStatusHandler()) }
            }
            .connect(host: host, port: port)
            .get()
    }
}

/// Pairs each written request with the status of the response that answers it.
private final class ResponseStatusHandler: ChannelDuplexHandler {
    struct Outbound: Sendable {
        var bytes: ByteBuffer
        var status: EventLoopPromise<Int>
    }

    struct MalformedResponse: Error, CustomStringConvertible {
        var description: String
    }

    typealias InboundIn = ByteBuffer
    typealias OutboundIn = Outbound
    typealias OutboundOut = ByteBuffer

    private var waiting: [EventLoopPromise<Int>] = []
    private var received = ByteBuffer()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let outbound = unwrapOutboundIn(data)
        waiting.append(outbound.status)
        context.write(wrapOutboundOut(outbound.bytes), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        received.writeBuffer(&incoming)
        do {
            while let status = try nextResponse() {
                guard !waiting.isEmpty else { throw MalformedResponse(description: "a response nobody asked for") }
                waiting.removeFirst().succeed(status)
            }
        } catch {
            fail(error)
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
        context.close(promise: nil)
    }

    private func fail(_ error: any Error) {
        let promises = waiting
        waiting = []
        for promise in promises { promise.fail(error) }
    }

    /// Consumes one whole response from `received` and returns its status, or `nil` until one has arrived.
    private func nextResponse() throws -> Int? {
        let view = received.readableBytesView
        guard let headEnd = Self.endOfHead(view) else { return nil }
        let head = String(decoding: view[view.startIndex..<headEnd], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1."),
            let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "")
        else { throw MalformedResponse(description: "not an HTTP/1.x status line") }
        guard
            let lengthLine = lines.dropFirst().first(where: { $0.lowercased().hasPrefix("content-length:") }),
            let length = Int(lengthLine.dropFirst("content-length:".count).trimmingCharacters(in: " \t"))
        else { throw MalformedResponse(description: "a response without Content-Length") }
        let total = headEnd + 4 - view.startIndex + length
        guard received.readableBytes >= total else { return nil }
        received.moveReaderIndex(forwardBy: total)
        received.discardReadBytes()
        return status
    }

    private static func endOfHead(_ view: ByteBufferView) -> Int? {
        var index = view.startIndex
        while index + 3 < view.endIndex {
            if view[index] == 13, view[index + 1] == 10, view[index + 2] == 13, view[index + 3] == 10 { return index }
            index += 1
        }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in characters: String) -> Substring {
        var result = self
        while let first = result.first, characters.contains(first) { result = result.dropFirst() }
        while let last = result.last, characters.contains(last) { result = result.dropLast() }
        return result
    }
}

import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request whose head cannot be read (an oversized header, a broken request line) with the API's JSON
/// error body, as every other refusal is answered, and closes the connection; Hummingbird's own answer to a parser
/// error is a bare 400 with no body. It sits after the HTTP codec, so the parser's error reaches it first.
final class MalformedRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var answered = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Once the refusal is written nothing else goes out on this connection.
        guard !answered else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError, !answered else {
            context.fireErrorCaught(error)
            return
        }
        answered = true
        let (status, code, message): (HTTPResponse.Status, String, String) =
            switch parserError {
            case .headerOverflow:
                (.init(code: 431), "headers_too_large", "the request's headers are larger than this server reads")
            default:
                (.badRequest, "malformed_request", "the request's line or headers could not be read as HTTP/1.1")
            }
        let body = ByteBuffer(string: #"{"code":"\#(code)","message":"\#(message)"}"#)
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        fields[.contentLength] = String(body.readableBytes)
        fields[.connection] = "close"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}

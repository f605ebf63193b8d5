import Foundation
import HTTPTypes
import Hummingbird
import OpenAPIRuntime
import StorekeeperCore
import Synchronization

/// Where the generated API's operations are served: each operation goes to the route group whose middleware it
/// needs (open `/v1`, client `/v1`, purchase `/v1`, admin `/v1/admin`).
/// The generated server wraps every failure in `ServerError`; this unwraps it, so the groups' middleware sees the
/// same errors a hand-written route throws: the handler's own, or a 400 naming what could not be read.
struct RouteGroupTransport: ServerTransport {
    typealias Handler = @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)

    let routes: APIRoutes
    /// Signs the client groups' answers for apps that send a nonce.
    let signer: AnswerSigner?
    /// `/v1` operations that hand out and prove credentials: no authentication by design.
    static let openPaths: Set<String> = ["/v1/guests", "/v1/guests/claim"]
    /// `/v1` operations whose every failure tells the SDK whether to finish the StoreKit transaction.
    static let purchasePaths: Set<String> = ["/v1/purchases", "/v1/restore"]

    func register(_ handler: @escaping Handler, method: HTTPRequest.Method, path: String) throws {
        let (group, subpath): (RouterGroup<StorekeeperRequestContext>, String)
        var signer: AnswerSigner?
        if path.hasPrefix("/v1/admin/") {
            (group, subpath) = (routes.admin, String(path.dropFirst("/v1/admin/".count)))
        } else if Self.openPaths.contains(path) {
            (group, subpath) = (routes.v1, String(path.dropFirst("/v1/".count)))
        } else if Self.purchasePaths.contains(path) {
            (group, subpath) = (routes.purchases, String(path.dropFirst("/v1/".count)))
            signer = self.signer
        } else if path.hasPrefix("/v1/") {
            // Anything else under /v1 is the caller's own data: authenticated, failing closed for a new operation.
            (group, subpath) = (routes.client, String(path.dropFirst("/v1/".count)))
            signer = self.signer
        } else {
            throw StorekeeperError(.internal, code: "unroutable_operation", message: "no route group serves \(path)")
        }
        let signs = signer
        // Admin operations check the scope openapi.yaml declares; one without a scope stops the server's start.
        let scope = path.hasPrefix("/v1/admin/") ? try AdminScope.required(method: method.rawValue, path: path) : nil
        group.on(RouterPath(subpath), method: method) { request, context in
            if let scope {
                guard case .admin(let admin) = context.caller else {
                    throw AuthError.adminKeyRequired
                }
                guard admin.holds(scope) else {
                    throw AuthError.insufficientScope(key: admin.name, scope: scope.rawValue)
                }
            }
            return try await Self.serve(handler, request: request, context: context, signer: signs)
        }
    }

    /// One operation, answered as one buffer. swift-openapi-hummingbird's `RouterMethods.register` would copy the
    /// body chunk by chunk, read any length, and stream every answer through a body writer (the head and the body
    /// written apart); `bench-purchases` measured that at +8% CPU per purchase, so the request is collected once up
    /// to the context's upload limit and the answer, whose length the generated server always knows, goes out whole.
    static func serve(
        _ handler: Handler,
        request: Request,
        context: StorekeeperRequestContext,
        signer: AnswerSigner?
    ) async throws -> Response {
        let nonce = request.headers[HTTPField.Name(AnswerSigner.nonceHeader)!].map { Substring($0) }
        if let nonce, !AnswerSigner.isValidNonce(nonce) {
            throw StorekeeperError.invalidInput("invalid_nonce", "\(AnswerSigner.nonceHeader) must be 22 to 128 base64url characters")
        }
        let body = try await limited(request.body, limit: context.maxUploadSize)
        let metadata = ServerRequestMetadata(
            pathParameters: Dictionary(context.parameters.map { (String($0.0), $0.1) }) { first, _ in first }
        )
        let (response, answer): (HTTPResponse, HTTPBody?)
        do {
            (response, answer) = try await handler(request.head, body?.body, metadata)
        } catch let error as ServerError {
            throw Self.translate(error, bodyRead: body?.mark.wasRead ?? false, bodyEmpty: body == nil)
        }
        var buffer = ByteBuffer()
        if let answer {
            if case .known(let length) = answer.length, length > 0, length <= Int64(Int32.max) {
                buffer.reserveCapacity(Int(length))
            }
            for try await chunk in answer { buffer.writeBytes(chunk) }
        }
        var headers = response.headerFields
        if let signer, let nonce, response.status.kind == .successful {
            let signature = try buffer.withUnsafeReadableBytes { bytes in
                try signer.signature(
                    nonce: nonce,
                    request: "\(request.method.rawValue) \(request.head.path ?? "")",
                    status: response.status.code,
                    body: bytes,
                    caller: context.caller.flatMap { caller in
                        if case .client(let identity) = caller { identity } else { nil }
                    },
                    at: Date()
                )
            }
            headers[HTTPField.Name(AnswerSigner.signatureHeader)!] = signature
        }
        return Response(status: response.status, headers: headers, body: ResponseBody(byteBuffer: buffer))
    }

    /// The body read whole, up to the context's upload limit (a 413 `body_too_large` naming the limit beyond it);
    /// none when it is empty (an optional body may be empty, a required one is then missing); marked when the
    /// generated server reads it, so a failure before that is known to be a parameter's.
    static func limited(_ body: RequestBody, limit: Int) async throws -> (body: HTTPBody, mark: ReadMark)? {
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: limit)
        } catch {
            throw StorekeeperError(.tooLarge, code: "body_too_large", message: "request bodies are limited to \(limit) bytes")
        }
        guard buffer.readableBytes > 0 else { return nil }
        let bytes = ArraySlice(buffer.readableBytesView)
        let mark = ReadMark()
        return (HTTPBody(MarkedBytes(bytes: bytes, mark: mark), length: .known(Int64(bytes.count)), iterationBehavior: .single), mark)
    }

    /// The handler's own error when it threw one; otherwise the request could not be read or answered as the
    /// document says (a body that is not the JSON asked for, a parameter of the wrong type, an `Accept` the answer
    /// cannot meet): a 400 naming the problem.
    static func translate(_ error: ServerError, bodyRead: Bool, bodyEmpty: Bool) -> any Error {
        switch error.underlyingError {
        case let known as any StorekeeperFailure:
            return known.apiError
        case let runtime as any HTTPResponseConvertible
        where error.operationInput == nil && bodyEmpty && runtime.httpStatus == .badRequest && error.request.method != .get:
            return StorekeeperError.invalidInput("malformed_json", "the request body is empty; send a JSON object")
        case let decoding as DecodingError where error.operationInput == nil && bodyRead:
            return StorekeeperError.invalidInput("malformed_json", APIRequestDecoder.describe(decoding))
        case is DecodingError where error.operationInput == nil:
            return StorekeeperError.invalidInput(
                "invalid_parameter",
                "a path or query parameter of \(error.request.path ?? "the request") is not what the document allows"
            )
        case let runtime as any HTTPResponseConvertible where runtime.httpStatus.kind == .clientError:
            let code =
                switch runtime.httpStatus {
                case .unsupportedMediaType: "unsupported_content_type"
                case .notAcceptable: "not_acceptable"
                default: "invalid_request"
                }
            return StorekeeperError.invalidInput(code, error.causeDescription)
        case _ where error.operationInput == nil:
            return StorekeeperError.invalidInput("invalid_request", error.causeDescription)
        case let other:
            // The handler's failure (a database outage): the group's middleware decides what it means.
            return other
        }
    }
}

/// Whether the generated server read a request body.
final class ReadMark: Sendable {
    private let read = Atomic<Bool>(false)
    var wasRead: Bool { read.load(ordering: .relaxed) }
    func markRead() { read.store(true, ordering: .relaxed) }
}

/// A body's bytes, as one chunk, marking its ``ReadMark`` when iterated.
struct MarkedBytes: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk
    let bytes: ArraySlice<UInt8>
    let mark: ReadMark

    struct AsyncIterator: AsyncIteratorProtocol {
        var bytes: ArraySlice<UInt8>?
        let mark: ReadMark

        mutating func next() async throws -> ArraySlice<UInt8>? {
            mark.markRead()
            defer { bytes = nil }
            return bytes
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes, mark: mark) }
}

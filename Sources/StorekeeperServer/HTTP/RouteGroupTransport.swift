import HTTPTypes
import Hummingbird
import OpenAPIHummingbird
import OpenAPIRuntime
import StorekeeperCore
import Synchronization

/// Where the generated API's operations are served: each operation goes to the route group whose middleware it
/// needs (open `/v1`, client `/v1`, purchase `/v1`, admin `/v1/admin`), registered through swift-openapi-hummingbird.
/// The generated server wraps every failure in `ServerError`; this unwraps it, so the groups' middleware sees the
/// same errors a hand-written route throws: the handler's own, or a 400 naming what could not be read.
struct RouteGroupTransport: ServerTransport {
    typealias Handler = @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)

    let routes: APIRoutes
    /// `/v1` operations that hand out and prove credentials: no authentication by design.
    static let openPaths: Set<String> = ["/v1/guests", "/v1/guests/claim"]
    /// `/v1` operations whose every failure tells the SDK whether to finish the StoreKit transaction.
    static let purchasePaths: Set<String> = ["/v1/purchases", "/v1/restore"]

    func register(_ handler: @escaping Handler, method: HTTPRequest.Method, path: String) throws {
        let unwrapped: Handler = { request, body, metadata in
            // An empty body is no body: an optional one is absent, a required one is missing.
            let body = try await Self.limited(body)
            do {
                return try await handler(request, body?.body, metadata)
            } catch let error as ServerError {
                throw Self.translate(error, bodyRead: body?.mark.wasRead ?? false, bodyEmpty: body == nil)
            }
        }
        if path.hasPrefix("/v1/admin/") {
            routes.admin.register(unwrapped, method: method, path: String(path.dropFirst("/v1/admin/".count)))
        } else if Self.openPaths.contains(path) {
            routes.v1.register(unwrapped, method: method, path: String(path.dropFirst("/v1/".count)))
        } else if Self.purchasePaths.contains(path) {
            routes.purchases.register(unwrapped, method: method, path: String(path.dropFirst("/v1/".count)))
        } else if path.hasPrefix("/v1/") {
            // Anything else under /v1 is the caller's own data: authenticated, failing closed for a new operation.
            routes.client.register(unwrapped, method: method, path: String(path.dropFirst("/v1/".count)))
        } else {
            throw StorekeeperError(.internal, code: "unroutable_operation", message: "no route group serves \(path)")
        }
    }

    /// The body read whole, up to the context's upload limit (the generated server would read any length), or a
    /// 413 `body_too_large` naming the limit; marked when the generated server reads it, so a failure before that is
    /// known to be a parameter's.
    static func limited(_ body: HTTPBody?) async throws -> (body: HTTPBody, mark: ReadMark)? {
        guard let body else { return nil }
        let limit = try RequestScope.current().maxUploadSize
        let bytes: [UInt8]
        do {
            bytes = try await [UInt8](collecting: body, upTo: limit)
        } catch {
            throw StorekeeperError(.tooLarge, code: "body_too_large", message: "request bodies are limited to \(limit) bytes")
        }
        guard !bytes.isEmpty else { return nil }
        let mark = ReadMark()
        return (HTTPBody(MarkedBytes(bytes: bytes[...], mark: mark), length: .known(Int64(bytes.count)), iterationBehavior: .single), mark)
    }

    /// The handler's own error when it threw one; otherwise the request could not be read or answered as the
    /// document says (a body that is not the JSON asked for, a parameter of the wrong type, an `Accept` the answer
    /// cannot meet): a 400 naming the problem.
    static func translate(_ error: ServerError, bodyRead: Bool, bodyEmpty: Bool) -> any Error {
        switch error.underlyingError {
        case let known as StorekeeperError:
            return known
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

import AppStoreWire
import Foundation
import Hummingbird
import NIOCore

/// JSON in and out of the simulator's HTTP endpoints, with the App Store's conventions (dates in epoch ms).
enum HTTPJSON {
    static let maximumBody = 1 << 20

    /// Decodes a request body; a malformed one is a 400 naming the problem.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        try decode(type, from: try await collect(request))
    }

    /// The request body's bytes (up to ``maximumBody``).
    static func collect(_ request: Request) async throws -> Data {
        Data(try await request.body.collect(upTo: maximumBody).readableBytesView)
    }

    /// Decodes body bytes already collected; malformed ones are a 400 naming the problem.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        do {
            return try AppStoreJSON.makeDecoder().decode(T.self, from: data)
        } catch {
            throw SimulatorHTTPError(.badRequest, code: "malformed_body", message: "request body is not a valid \(T.self): \(error)")
        }
    }

    /// A JSON response.
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try AppStoreJSON.makeEncoder().encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}

/// An HTTP error with a JSON body `{"error": code, "message": …}`.
struct SimulatorHTTPError: HTTPResponseError {
    let status: HTTPResponse.Status
    let code: String
    let message: String

    init(_ status: HTTPResponse.Status, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    init(_ error: SimulatorError) {
        switch error {
        case .unknownProduct, .unknownAccount, .unknownTransaction:
            self.init(.notFound, code: "not_found", message: error.description)
        case .notAllowed:
            self.init(.conflict, code: "not_allowed", message: error.description)
        case .invalidCatalog:
            self.init(.badRequest, code: "invalid_catalog", message: error.description)
        }
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: ["error": code, "message": message], options: .sortedKeys)
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}

extension SimulatorError {
    /// Runs `body`, turning simulator refusals into HTTP errors.
    static func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as SimulatorError {
            throw SimulatorHTTPError(error)
        }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StorekeeperCore

/// Reads the API's JSON request bodies up to the context's body limit, turning every problem into a 4xx that names
/// it: too large, empty, not JSON, a missing field or a wrong type.
public struct APIRequestDecoder: RequestDecoder {
    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        let buffer = try await request.body.collectBody(limit: context.maxUploadSize)
        guard buffer.readableBytes > 0 else {
            throw StorekeeperError.invalidInput("malformed_json", "the request body is empty; send a JSON object")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw StorekeeperError.invalidInput("malformed_json", Self.describe(error))
        } catch {
            throw StorekeeperError.invalidInput("malformed_json", "the body is not valid JSON")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map(\.stringValue).joined(separator: ".")
            return keys.isEmpty ? "" : " at \(keys)"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing field \(key.stringValue)\(path(context))"
        case .typeMismatch(_, let context): return "wrong type\(path(context)): \(context.debugDescription)"
        case .valueNotFound(_, let context): return "null value\(path(context))"
        case .dataCorrupted(let context): return "not valid JSON\(path(context))"
        @unknown default: return "not valid JSON"
        }
    }
}

/// Writes the API's JSON: ISO 8601 dates, sorted keys, unescaped slashes.
public struct APIResponseEncoder: ResponseEncoder {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        try response(value, status: .ok)
    }

    func response(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: try Self.encoder.encode(value)))
        )
    }
}

extension RequestBody {
    /// The whole body, or a 413 `body_too_large` naming the limit.
    func collectBody(limit: Int) async throws -> ByteBuffer {
        do {
            return try await collect(upTo: limit)
        } catch {
            throw StorekeeperError(.tooLarge, code: "body_too_large", message: "request bodies are limited to \(limit) bytes")
        }
    }
}

/// The JSON body of every error: `{code, message}`, plus `outcome` for purchase submissions.
struct ErrorBody: Encodable {
    var code: String
    var message: String
    var outcome: String?
    var details: [String: String]?
}

extension StorekeeperError.Kind {
    /// The HTTP status each kind of refusal is answered with: the one place kinds meet HTTP.
    var status: HTTPResponse.Status {
        switch self {
        case .invalidInput: .badRequest
        case .unauthenticated: .unauthorized
        case .notPermitted: .forbidden
        case .notFound: .notFound
        case .conflict: .conflict
        case .refused: .unprocessableContent
        case .tooLarge: .contentTooLarge
        case .rateLimited: .tooManyRequests
        case .unavailable: .serviceUnavailable
        case .internal: .internalServerError
        }
    }
}

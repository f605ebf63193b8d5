import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StorekeeperCore

/// JSON in and out of the API: ISO 8601 dates, sorted keys, and request bodies read with a size limit.
enum APIJSON {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Decodes a request body, turning every problem into a 4xx that names it.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, limit: Int) async throws -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch {
            throw StorekeeperError(.payloadTooLarge, code: "body_too_large", message: "request bodies are limited to \(limit) bytes")
        }
        guard buffer.readableBytes > 0 else {
            throw StorekeeperError.badRequest("malformed_json", "the request body is empty; send a JSON object")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw StorekeeperError.badRequest("malformed_json", describe(error))
        } catch {
            throw StorekeeperError.badRequest("malformed_json", "the body is not valid JSON")
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

/// The JSON body of every error: `{code, message}`, plus `outcome` for purchase submissions.
struct ErrorBody: Encodable {
    var code: String
    var message: String
    var outcome: String?
    var details: [String: String]?
}

extension StorekeeperError.Kind {
    var status: HTTPResponse.Status {
        switch self {
        case .badRequest: .badRequest
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .conflict: .conflict
        case .unprocessable: .unprocessableContent
        case .payloadTooLarge: .contentTooLarge
        case .unavailable: .serviceUnavailable
        case .internal: .internalServerError
        }
    }
}

import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Sends a fresh nonce with the operations whose answers the app must be able to trust, and lets a 2xx answer
/// through only when ``AnswerVerifier`` accepts its signature; anything else throws ``AnswerVerifier/Untrusted``.
struct SignedAnswersMiddleware: ClientMiddleware {
    /// The customer-info read: what the app shows as the user's memberships and balances.
    static let operations: Set<String> = ["getMe"]
    static let nonceHeader = HTTPField.Name("Storekeeper-Nonce")!
    static let signatureHeader = HTTPField.Name("Storekeeper-Signature")!
    /// Larger answers are refused rather than read without bound.
    static let maxBody = 8 << 20

    let verifier: AnswerVerifier

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard Self.operations.contains(operationID) else { return try await next(request, body, baseURL) }
        let nonce = AnswerVerifier.nonce()
        var request = request
        request.headerFields[Self.nonceHeader] = nonce
        let (response, answer) = try await next(request, body, baseURL)
        // An error carries nothing to believe; the caller treats it as a failure.
        guard response.status.kind == .successful else { return (response, answer) }
        let bytes: [UInt8]
        do {
            bytes = try await [UInt8](collecting: answer ?? HTTPBody(), upTo: Self.maxBody)
        } catch {
            throw AnswerVerifier.Untrusted(reason: "the answer is larger than \(Self.maxBody) bytes")
        }
        var prefix = baseURL.path
        while prefix.hasSuffix("/") { prefix.removeLast() }
        try verifier.verify(
            signature: response.headerFields[Self.signatureHeader],
            nonce: nonce,
            request: "\(request.method.rawValue) \(prefix)\(request.path ?? "")",
            status: response.status.code,
            body: bytes,
            credential: Credentials.digest(in: request)
        )
        AnswerCapture.current?.keep(
            .init(
                body: Data(bytes),
                signature: response.headerFields[Self.signatureHeader],
                nonce: nonce,
                request: "\(request.method.rawValue) \(prefix)\(request.path ?? "")",
                status: response.status.code,
                credential: Credentials.digest(in: request)
            )
        )
        return (response, HTTPBody(bytes))
    }
}

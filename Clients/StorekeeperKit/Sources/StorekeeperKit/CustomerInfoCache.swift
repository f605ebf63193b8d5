import Foundation
import StorekeeperAPI

/// The last customer-info answer the server signed, kept on disk exactly as it came (body, signature and what the
/// signature binds), so the next launch can check the signature again with the pinned key before believing it, and
/// show what the user has while the server cannot be reached. The file is the app's alone (0600).
struct CustomerInfoCache: Sendable {
    /// One answer as the server sent it.
    struct SignedAnswer: Codable, Sendable, Hashable {
        var body: Data
        /// `Storekeeper-Signature`, and the nonce and request it was signed for (nil when the app pinned no key).
        var signature: String?
        var nonce: String?
        var request: String?
        var status: Int
        /// The digest of the credentials the answer was given to.
        var credential: String?
    }

    let url: URL

    func save(_ answer: SignedAnswer) throws {
        let data = try JSONEncoder().encode(answer)
        try data.write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    /// The kept answer, believed only if its signature still verifies with `verifier` (when the app pinned a key);
    /// `nil` when there is none or it does not verify (the file is then removed).
    func load(verifier: AnswerVerifier?) throws -> (user: Components.Schemas.User, verified: Bool, credential: String?)? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        do {
            let answer = try JSONDecoder().decode(SignedAnswer.self, from: data)
            if let verifier {
                guard let nonce = answer.nonce, let request = answer.request else {
                    throw AnswerVerifier.Untrusted(reason: "the kept answer is not signed")
                }
                try verifier.verify(
                    signature: answer.signature,
                    nonce: nonce,
                    request: request,
                    status: answer.status,
                    body: Array(answer.body),
                    credential: answer.credential
                )
            }
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .custom { decoder in
                let text = try decoder.singleValueContainer().decode(String.self)
                guard let date = Self.date(text) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a date: \(text)"))
                }
                return date
            }
            return (try decoder.decode(Components.Schemas.User.self, from: answer.body), verifier != nil, answer.credential)
        } catch {
            remove()
            throw error
        }
    }

    func remove() { try? FileManager.default.removeItem(at: url) }

    /// RFC 3339 with or without fractional seconds, as the server writes timestamps.
    static func date(_ text: String) -> Date? {
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }
}

/// Where `SignedAnswersMiddleware` hands the answer it checked to the call that asked (a task-local box: the
/// generated client runs its middlewares in the caller's task).
final class AnswerCapture: @unchecked Sendable {
    @TaskLocal static var current: AnswerCapture?

    private let lock = NSLock()
    private var captured: CustomerInfoCache.SignedAnswer?

    var answer: CustomerInfoCache.SignedAnswer? { lock.withLock { captured } }

    func keep(_ answer: CustomerInfoCache.SignedAnswer) { lock.withLock { captured = answer } }
}

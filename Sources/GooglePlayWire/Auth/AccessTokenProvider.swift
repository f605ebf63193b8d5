import Foundation
import WebTokens

/// OAuth 2.0 access tokens for a service account (RFC 7523 JWT bearer grant): an RS256 assertion posted to the key's
/// `token_uri`, the answer cached until shortly before it expires, one refresh in flight at a time.
public actor AccessTokenProvider {
    /// The Play Developer API's only scope.
    public static let androidPublisherScope = "https://www.googleapis.com/auth/androidpublisher"
    /// Google's token endpoint: the assertion's audience even when the key posts elsewhere (google-auth does the same).
    public static let googleTokenAudience = "https://oauth2.googleapis.com/token"
    /// Tokens are refreshed this long before they expire.
    public static let refreshMargin: TimeInterval = 300

    public let key: ServiceAccountKey
    public let scopes: [String]
    private let transport: any PlayHTTPTransport
    private let clock: @Sendable () -> Date
    private var cached: (token: String, expires: Date)?
    private var refreshing: Task<(token: String, expires: Date), any Error>?

    public init(
        key: ServiceAccountKey,
        scopes: [String] = [AccessTokenProvider.androidPublisherScope],
        transport: any PlayHTTPTransport,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.key = key
        self.scopes = scopes
        self.transport = transport
        self.clock = clock
    }

    /// A token valid for at least ``refreshMargin`` more.
    public func token() async throws -> String {
        if let cached, cached.expires.timeIntervalSince(clock()) > Self.refreshMargin { return cached.token }
        if let refreshing { return try await refreshing.value.token }
        let task = Task { try await self.grant() }
        refreshing = task
        defer { refreshing = nil }
        let fresh = try await task.value
        cached = fresh
        return fresh.token
    }

    /// Forgets the cached token (the API answered 401 with it).
    public func invalidate() { cached = nil }

    /// The signed assertion for `now` (exposed for the simulator's tests of its token endpoint).
    public nonisolated func assertion(now: Date) throws -> String {
        struct Claims: Encodable {
            var iss: String
            var scope: String
            var aud: String
            var iat: Int64
            var exp: Int64
        }
        let issued = Int64(now.timeIntervalSince1970.rounded(.down))
        return try SignedToken.sign(
            header: SignedToken.Header(alg: "RS256", kid: key.privateKeyId, typ: "JWT"),
            claims: Claims(
                iss: key.clientEmail,
                scope: scopes.joined(separator: " "),
                aud: Self.googleTokenAudience,
                iat: issued,
                exp: issued + 3600
            ),
            with: key.privateKey
        )
    }

    private func grant() async throws -> (token: String, expires: Date) {
        let now = clock()
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + (try assertion(now: now))
        let response = try await transport.send(
            PlayHTTPRequest(
                method: "POST",
                url: key.tokenURI,
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                body: Array(form.utf8)
            )
        )
        struct Answer: Decodable {
            var accessToken: String?
            var expiresIn: ExpiresIn?
            var error: String?
            var errorDescription: String?

            enum CodingKeys: String, CodingKey {
                case accessToken = "access_token"
                case expiresIn = "expires_in"
                case error
                case errorDescription = "error_description"
            }
        }
        let answer = try? JSONDecoder().decode(Answer.self, from: Data(response.body))
        guard response.status == 200 else {
            throw PlayAuthError.grantRefused(
                status: response.status,
                error: answer?.error ?? "http_\(response.status)",
                description: String((answer?.errorDescription ?? "").prefix(200))
            )
        }
        guard let token = answer?.accessToken, !token.isEmpty, token.utf8.count <= 4096, let seconds = answer?.expiresIn?.seconds,
            seconds > 0, seconds <= 86_400
        else { throw PlayAuthError.malformedGrant }
        return (token, now.addingTimeInterval(TimeInterval(seconds)))
    }

    /// `expires_in` as a number or, as google-auth also accepts, a string.
    struct ExpiresIn: Decodable {
        var seconds: Int
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) {
                seconds = number
            } else if let text = try? container.decode(String.self), let number = Int(text) {
                seconds = number
            } else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "expires_in is not a number")
            }
        }
    }
}

/// Why Google's OAuth or a push token was refused.
public enum PlayAuthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The token endpoint said no (`invalid_grant`, …); retrying with the same key will not help unless it is a 5xx.
    case grantRefused(status: Int, error: String, description: String)
    /// The token endpoint answered 200 without a usable token.
    case malformedGrant
    /// A push request's bearer token did not verify: why, in one line.
    case pushTokenRefused(String)
    /// Google's signing keys could not be fetched; nothing was decided.
    case keysUnavailable(String)

    public var description: String {
        switch self {
        case .grantRefused(let status, let error, let description): "token grant refused (\(status) \(error)): \(description)"
        case .malformedGrant: "the token endpoint's answer has no usable access_token and expires_in"
        case .pushTokenRefused(let why): "push token refused: \(why)"
        case .keysUnavailable(let why): "Google's signing keys are unavailable: \(why)"
        }
    }
}

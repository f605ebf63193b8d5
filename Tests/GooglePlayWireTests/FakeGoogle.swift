import Foundation
import GooglePlayWire
import Synchronization
import WebTokens
import _CryptoExtras

/// Google's token endpoint, certificate list and a Play Developer API resource, in memory, with real signatures:
/// the token endpoint verifies each assertion under the service account's public key as Google would. Scripted
/// failures (`failNext`) exercise the client's retries; every request is recorded.
final class FakeGoogle: PlayHTTPTransport, Sendable {
    struct State {
        var grants = 0
        var issued: Set<String> = []
        var failNext: [Int] = []
        var requests: [PlayHTTPRequest] = []
        var certsBody: [UInt8] = []
        var certsHeaders: [String: String] = [:]
        var certFetches = 0
    }

    static let serviceAccountKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let email = "storekeeper@example-project.iam.gserviceaccount.com"
    let state = Mutex(State())
    let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date = { Date() }) { self.now = now }

    var key: ServiceAccountKey {
        ServiceAccountKey(clientEmail: Self.email, privateKeyId: "k1", privateKey: Self.serviceAccountKey, tokenURI: "http://google.test/token")
    }

    func send(_ request: PlayHTTPRequest) async throws -> PlayHTTPResponse {
        let scripted: Int? = state.withLock {
            $0.requests.append(request)
            return request.url.hasPrefix("http://google.test/token") || $0.failNext.isEmpty ? nil : $0.failNext.removeFirst()
        }
        if request.url == "http://google.test/token" { return token(request) }
        if request.url == "http://google.test/certs" {
            return state.withLock {
                $0.certFetches += 1
                return PlayHTTPResponse(status: 200, headers: $0.certsHeaders, body: $0.certsBody)
            }
        }
        let bearer = request.headers.first { $0.0 == "Authorization" }?.1 ?? ""
        guard state.withLock({ $0.issued.contains(String(bearer.dropFirst(7))) }) else {
            return Self.error(401, "authError", "Invalid Credentials")
        }
        if let scripted {
            if scripted == -1 { throw URLError(.networkConnectionLost) }
            return Self.error(
                scripted,
                scripted == 429 ? "rateLimitExceeded" : scripted == 404 ? "purchaseTokenNotFound" : "backendError",
                "scripted"
            )
        }
        if request.url.contains("/purchases/subscriptionsv2/tokens/") && request.method == "GET" {
            let body =
                #"{"kind":"androidpublisher#subscriptionPurchaseV2","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[{"productId":"vip","expiryTime":"2026-12-01T00:00:00Z"}]}"#
            return PlayHTTPResponse(status: 200, body: Array(body.utf8))
        }
        return PlayHTTPResponse(status: 204, body: [])
    }

    static func error(_ status: Int, _ reason: String, _ message: String) -> PlayHTTPResponse {
        let body = GoogleAPIErrorBody(error: .init(code: status, message: message, errors: [.init(message: message, reason: reason)]))
        return PlayHTTPResponse(status: status, body: Array(try! PlayJSON.encode(body)))
    }

    /// RFC 7523 as Google checks it: form fields, an RS256 assertion from the account, Google's audience, an hour.
    private func token(_ request: PlayHTTPRequest) -> PlayHTTPResponse {
        func refuse(_ why: String) -> PlayHTTPResponse {
            PlayHTTPResponse(status: 400, body: Array(#"{"error":"invalid_grant","error_description":"\#(why)"}"#.utf8))
        }
        let form = String(decoding: request.body ?? [], as: UTF8.self)
        var fields: [String: String] = [:]
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]).removingPercentEncoding }
        }
        guard fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = fields["assertion"] else {
            return refuse("unsupported grant")
        }
        struct Claims: Decodable {
            var iss: String
            var scope: String
            var aud: String
            var iat: Int64
            var exp: Int64
        }
        guard let token = try? SignedToken(assertion), token.header.kid == "k1", token.isSigned(by: Self.serviceAccountKey.publicKey),
            let claims = try? token.claims(Claims.self)
        else { return refuse("Invalid JWT Signature.") }
        guard claims.iss == Self.email, claims.aud == "https://oauth2.googleapis.com/token",
            claims.scope == "https://www.googleapis.com/auth/androidpublisher", claims.exp - claims.iat == 3600
        else { return refuse("Invalid JWT claims.") }
        let access = "ya29." + UUID().uuidString
        state.withLock {
            $0.grants += 1
            $0.issued.insert(access)
        }
        return PlayHTTPResponse(status: 200, body: Array(#"{"access_token":"\#(access)","expires_in":3599,"token_type":"Bearer"}"#.utf8))
    }
}

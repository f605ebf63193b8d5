import Foundation
import GooglePlayWire
import SwiftASN1
import Synchronization
import Testing
import WebTokens
import X509
import _CryptoExtras

/// Service-account OAuth, the Play Developer API client's retries, and the push token's verification — each against
/// real RS256 signatures (`FakeGoogle` checks assertions as Google does).
@Suite struct PlayAuthTests {
    final class Clock: Sendable {
        let now = Mutex(Date(timeIntervalSince1970: 1_790_000_000))
        func advance(_ seconds: TimeInterval) { now.withLock { $0 += seconds } }
        var read: @Sendable () -> Date { { self.now.withLock { $0 } } }
    }

    @Test func rs256SignsAndVerifiesUnderItsOwnKeyOnly() throws {
        let key = FakeGoogle.serviceAccountKey
        let token = try SignedToken.sign(header: .init(alg: "none", kid: "k"), claims: ["sub": "a"], with: key)
        let parsed = try SignedToken(token)
        #expect(parsed.header.alg == "RS256", "signing sets the algorithm")
        #expect(parsed.isSigned(by: key.publicKey))
        #expect(!parsed.isSigned(by: try _RSA.Signing.PrivateKey(keySize: .bits2048).publicKey))
        let parts = token.split(separator: ".")
        let other = try SignedToken(parts[0] + "." + Base64URL.encode(Array(#"{"sub":"b"}"#.utf8)) + "." + parts[2])
        #expect(!other.isSigned(by: key.publicKey), "a changed payload")
        #expect(!(try SignedToken(parts[0] + "." + parts[1] + ".")).isSigned(by: key.publicKey), "no signature")
        // The same key's HS256 or ES256 claims are not RS256.
        let hs = try SignedToken(try SignedToken.sign(claims: ["sub": "a"], with: .init(size: .bits256)))
        #expect(!hs.isSigned(by: key.publicKey))
    }

    @Test func accessTokensAreGrantedOnceAndCachedUntilNearTheirEnd() async throws {
        let clock = Clock()
        let google = FakeGoogle(now: clock.read)
        let tokens = AccessTokenProvider(key: google.key, transport: google, clock: clock.read)
        let first = try await tokens.token()
        #expect(first.hasPrefix("ya29."))
        // Concurrent callers share one grant.
        let many = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await tokens.token() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(many == [first])
        #expect(google.state.withLock { $0.grants } == 1)
        clock.advance(3599 - 301)
        #expect(try await tokens.token() == first, "still more than five minutes left")
        clock.advance(2)
        #expect(try await tokens.token() != first, "refreshed five minutes before the end")
        #expect(google.state.withLock { $0.grants } == 2)
    }

    @Test func aRefusedGrantSaysWhy() async throws {
        let google = FakeGoogle()
        let stranger = ServiceAccountKey(
            clientEmail: FakeGoogle.email,
            privateKeyId: "k1",
            privateKey: try _RSA.Signing.PrivateKey(keySize: .bits2048),
            tokenURI: "http://google.test/token"
        )
        let tokens = AccessTokenProvider(key: stranger, transport: google)
        await #expect(throws: PlayAuthError.grantRefused(status: 400, error: "invalid_grant", description: "Invalid JWT Signature.")) {
            try await tokens.token()
        }
    }

    @Test func serviceAccountKeyFilesRoundTrip() throws {
        let key = FakeGoogle().key
        let read = try ServiceAccountKey.parse(key.json())
        #expect(read.clientEmail == FakeGoogle.email)
        #expect(read.privateKeyId == "k1")
        #expect(read.privateKey.publicKey.derRepresentation == key.privateKey.publicKey.derRepresentation)
        #expect(throws: PlayWireError.self) { try ServiceAccountKey.parse(Array(#"{"client_email":"a","token_uri":"b","private_key":"x"}"#.utf8)) }
    }

    @Test func theClientRetriesWhatGoogleSaysToRetryAndNothingElse() async throws {
        let google = FakeGoogle()
        let slept = Mutex<[Duration]>([])
        let client = PlayDeveloperAPIClient(
            baseURL: "http://google.test",
            tokens: AccessTokenProvider(key: google.key, transport: google),
            transport: google,
            maximumAttempts: 4,
            sleep: { duration in slept.withLock { $0.append(duration) } }
        )
        google.state.withLock { $0.failNext = [503, 429, -1] }
        let subscription = try await client.getSubscription(packageName: "com.example.app", token: "tok/with:odd chars")
        #expect(subscription.subscriptionState == .active)
        #expect(slept.withLock { $0.count } == 3)
        #expect(slept.withLock { $0.allSatisfy { $0 >= .milliseconds(250) && $0 <= .seconds(8) } })
        let last = try #require(google.state.withLock { $0.requests.last })
        #expect(
            last.url
                == "http://google.test/androidpublisher/v3/applications/com.example.app/purchases/subscriptionsv2/tokens/tok%2Fwith%3Aodd%20chars?alt=json",
            "the token stays one path segment"
        )

        // Bounded: the fourth failure is the caller's.
        google.state.withLock { $0.failNext = [503, 503, 503, 503, 503] }
        await #expect(throws: PlayDeveloperAPIError(status: 503, reason: "backendError", message: "scripted")) {
            try await client.acknowledgeProduct(packageName: "com.example.app", productId: "coins", token: "t")
        }
        #expect(google.state.withLock { $0.failNext } == [503], "four attempts, no more")

        // Not retried: the token is unknown.
        google.state.withLock { $0.failNext = [404, 503] }
        do {
            _ = try await client.getProduct(packageName: "com.example.app", productId: "coins", token: "gone")
            Issue.record("a 404 must throw")
        } catch let error as PlayDeveloperAPIError {
            #expect(error.isGone && !error.isRetryable && error.reason == "purchaseTokenNotFound")
        }
        #expect(google.state.withLock { $0.failNext } == [503])
        google.state.withLock { $0.failNext = [] }
    }

    @Test func a401RefreshesTheTokenOnce() async throws {
        let google = FakeGoogle()
        let tokens = AccessTokenProvider(key: google.key, transport: google)
        let client = PlayDeveloperAPIClient(baseURL: "http://google.test", tokens: tokens, transport: google, sleep: { _ in })
        try await client.consumeProduct(packageName: "p", productId: "coins", token: "t")
        google.state.withLock { $0.issued.removeAll() }  // Google revoked every token it gave.
        try await client.refundOrder(packageName: "p", orderId: "GPA.1..0", revoke: true)
        #expect(google.state.withLock { $0.grants } == 2)
        let refund = try #require(google.state.withLock { $0.requests.last })
        #expect(refund.url == "http://google.test/androidpublisher/v3/applications/p/orders/GPA.1..0:refund?revoke=true&alt=json")
        #expect(refund.method == "POST")
    }

    @Test func voidedPurchasesAskForTheirWindowOrTheirPage() async throws {
        let google = FakeGoogle()
        let client = PlayDeveloperAPIClient(
            baseURL: "http://google.test",
            tokens: AccessTokenProvider(key: google.key, transport: google),
            transport: google
        )
        _ = try? await client.listVoidedPurchases(packageName: "p", startTime: Date(timeIntervalSince1970: 1_790_000_000), maxResults: 5000)
        _ = try? await client.listVoidedPurchases(packageName: "p", startTime: Date(timeIntervalSince1970: 1), pageToken: "n1")
        let urls = google.state.withLock { $0.requests.map(\.url) }.filter { $0.contains("voidedpurchases") }
        #expect(urls.first?.contains("startTime=1790000000000") == true)
        #expect(urls.first?.contains("maxResults=1000") == true, "bounded to Google's maximum")
        #expect(urls.first?.contains("type=1") == true)
        #expect(urls.last?.contains("token=n1") == true)
        #expect(urls.last?.contains("startTime") == false, "a page token ignores the window")
    }

    // MARK: Push tokens

    static let googleKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let audience = "https://storekeeper.example/google/rtdn"
    static let pushAccount = "play-push@example-project.iam.gserviceaccount.com"

    static func certificatePEM(_ key: _RSA.Signing.PrivateKey) throws -> String {
        let name = try DistinguishedName { CommonName("Google push test") }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(key.publicKey),
            notValidBefore: Date(timeIntervalSince1970: 1_700_000_000),
            notValidAfter: Date(timeIntervalSince1970: 1_900_000_000),
            issuer: name,
            subject: name,
            signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: .init(),
            issuerPrivateKey: .init(key)
        )
        return try certificate.serializeAsPEM().pemString
    }

    static func pushToken(
        kid: String = "g1",
        key: _RSA.Signing.PrivateKey = googleKey,
        iss: String = "https://accounts.google.com",
        aud: String = audience,
        email: String = pushAccount,
        verified: Bool = true,
        iat: Int64 = 1_790_000_000,
        exp: Int64 = 1_790_003_600
    ) throws -> String {
        struct Claims: Encodable {
            var iss, aud, email, sub: String
            var email_verified: Bool
            var iat, exp: Int64
        }
        return "Bearer "
            + (try SignedToken.sign(
                header: .init(alg: "RS256", kid: kid, typ: "JWT"),
                claims: Claims(iss: iss, aud: aud, email: email, sub: "1234567890", email_verified: verified, iat: iat, exp: exp),
                with: key
            ))
    }

    func verifier(_ google: FakeGoogle, clock: Clock, jwks: Bool = false) throws -> PushTokenVerifier {
        if jwks {
            let primitives = try Self.googleKey.publicKey.getKeyPrimitives()
            let body =
                #"{"keys":[{"kid":"g1","kty":"RSA","alg":"RS256","use":"sig","n":"\#(Base64URL.encode(primitives.modulus))","e":"\#(Base64URL.encode(primitives.publicExponent))"}]}"#
            google.state.withLock { $0.certsBody = Array(body.utf8) }
        } else {
            let map = ["g1": try Self.certificatePEM(Self.googleKey)]
            let body = try JSONEncoder().encode(map)
            google.state.withLock {
                $0.certsBody = Array(body)
                $0.certsHeaders = ["cache-control": "public, max-age=19800, must-revalidate, no-transform"]
            }
        }
        return PushTokenVerifier(
            audience: Self.audience,
            serviceAccountEmail: Self.pushAccount,
            certsURL: "http://google.test/certs",
            transport: google,
            clock: clock.read
        )
    }

    @Test(arguments: [false, true])
    func aGenuinePushTokenVerifies(jwks: Bool) async throws {
        let clock = Clock()
        let google = FakeGoogle()
        let verifier = try verifier(google, clock: clock, jwks: jwks)
        let claims = try await verifier.verify(authorization: try Self.pushToken())
        #expect(claims.email == Self.pushAccount)
        #expect(claims.emailVerified == true)
        _ = try await verifier.verify(authorization: try Self.pushToken(iss: "accounts.google.com"))
        #expect(google.state.withLock { $0.certFetches } == 1, "keys are cached")
    }

    @Test func forgedAndMisdirectedPushTokensAreRefused() async throws {
        let clock = Clock()
        let google = FakeGoogle()
        let verifier = try verifier(google, clock: clock)
        let forger = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let refusals: [(String?, String)] = [
            (nil, "no Bearer token"),
            ("Basic abc", "no Bearer token"),
            ("Bearer a.b", "not a compact JWS: expected three dot-separated segments"),
            (try Self.pushToken(key: forger), "signature does not verify"),
            (try Self.pushToken(iss: "https://evil.example"), "issuer is not Google"),
            (try Self.pushToken(aud: "https://other.example/rtdn"), "audience is not \(Self.audience)"),
            (try Self.pushToken(email: "someone@evil.example"), "not signed for the push service account"),
            (try Self.pushToken(email: Self.pushAccount.uppercased()), "not signed for the push service account"),
            (try Self.pushToken(verified: false), "email_verified is not true"),
            (try Self.pushToken(iat: 1_789_990_000, exp: 1_789_993_600), "expired"),
            (try Self.pushToken(iat: 1_790_000_600, exp: 1_790_004_200), "issued in the future or valid for too long"),
            (try Self.pushToken(kid: "unknown"), "kid unknown is not one of Google's keys"),
        ]
        for (authorization, why) in refusals {
            await #expect(throws: PlayAuthError.pushTokenRefused(why)) { try await verifier.verify(authorization: authorization) }
        }
        // An unknown kid fetched the keys again once; a second one within the minute does not.
        let fetches = google.state.withLock { $0.certFetches }
        await #expect(throws: PlayAuthError.self) { try await verifier.verify(authorization: try Self.pushToken(kid: "another")) }
        #expect(google.state.withLock { $0.certFetches } == fetches)
        // HS256 with the certificate as a secret (algorithm confusion) is not RS256.
        let confused = "Bearer " + (try SignedToken.sign(claims: ["iss": "https://accounts.google.com"], with: .init(size: .bits256)))
        await #expect(throws: PlayAuthError.pushTokenRefused("alg HS256 is not RS256")) { try await verifier.verify(authorization: confused) }
    }

    @Test func aRotatedKeyIsFetchedAndAnOutageDecidesNothing() async throws {
        let clock = Clock()
        let google = FakeGoogle()
        let verifier = try verifier(google, clock: clock)
        _ = try await verifier.verify(authorization: try Self.pushToken())
        // Google rotates: a new kid appears; the verifier fetches again (after a minute since the last fetch).
        let rotated = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let map = ["g1": try Self.certificatePEM(Self.googleKey), "g2": try Self.certificatePEM(rotated)]
        google.state.withLock { $0.certsBody = Array(try! JSONEncoder().encode(map)) }
        clock.advance(61)
        _ = try await verifier.verify(authorization: try Self.pushToken(kid: "g2", key: rotated, iat: 1_790_000_061, exp: 1_790_003_661))
        // The cache expires (max-age 19800 s) and Google is down: not a refusal, nothing decided.
        clock.advance(20_000)
        google.state.withLock { $0.certsBody = Array("<html>".utf8) }
        await #expect(throws: PlayAuthError.keysUnavailable("the certificate list is neither a PEM map nor a JWKS")) {
            try await verifier.verify(authorization: try Self.pushToken(iat: 1_790_020_061, exp: 1_790_023_661))
        }
    }
}

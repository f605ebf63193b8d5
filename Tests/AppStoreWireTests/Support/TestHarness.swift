import AsyncHTTPClient
import Foundation

@testable import AppStoreWire

/// Starts a ``LocalHTTPServer`` and an `HTTPClient`, runs `body`, and tears both down.
func withLocalServer<T>(
    handler: @escaping LocalHTTPServer.Handler,
    _ body: (LocalHTTPServer, HTTPClient) async throws -> T
) async throws -> T {
    let server = try await LocalHTTPServer.start(handler: handler)
    let httpClient = HTTPClient(eventLoopGroupProvider: .singleton)
    do {
        let result = try await body(server, httpClient)
        try await httpClient.shutdown()
        try await server.shutdown()
        return result
    } catch {
        try? await httpClient.shutdown()
        try? await server.shutdown()
        throw error
    }
}

/// A Server API client aimed at `server`, with instant, recorded retries.
func makeAPIClient(
    server: LocalHTTPServer,
    httpClient: HTTPClient,
    identity: TestSigningIdentity,
    sleeps: SleepRecorder = SleepRecorder(),
    maxAttempts: Int = 3,
    maxDelay: Duration = .seconds(30),
    now: @escaping @Sendable () -> Date = { Date() }
) throws -> AppStoreServerAPIClient {
    AppStoreServerAPIClient(
        httpClient: httpClient,
        tokenGenerator: try identity.tokenGenerator(),
        baseURL: AppStoreServerAPIBaseURL(url: server.baseURL),
        retryPolicy: AppStoreServerAPIRetryPolicy(
            maxAttempts: maxAttempts,
            initialDelay: .milliseconds(100),
            maxDelay: maxDelay,
            jitter: false,
            sleep: sleeps.sleep,
            now: now
        ),
        requestTimeout: .seconds(10)
    )
}

import Foundation
import OpenAPIRuntime
import OpenAPIURLSession
import StorekeeperAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The generated API client, over URLSession, with a deadline on every request (30 s by default), the app's current
/// credentials on every request and, with a verifier, the customer-info answers checked against the pinned key.
public enum StorekeeperConnection {
    public static func client(
        serverURL: URL,
        session: URLSession = .shared,
        requestTimeout: Duration = .seconds(30),
        answers: AnswerVerifier? = nil,
        credentials: @escaping @Sendable () async -> Credentials?
    ) -> Client {
        var middlewares: [any ClientMiddleware] = [TimeoutMiddleware(timeout: requestTimeout), CredentialsMiddleware(credentials: credentials)]
        if let answers { middlewares.append(SignedAnswersMiddleware(verifier: answers)) }
        return Client(
            serverURL: serverURL,
            transport: URLSessionTransport(configuration: .init(session: session)),
            middlewares: middlewares
        )
    }
}

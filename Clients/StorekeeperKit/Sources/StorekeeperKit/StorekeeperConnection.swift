import Foundation
import OpenAPIRuntime
import OpenAPIURLSession
import StorekeeperAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The generated API client, over URLSession, with the app's current credentials on every request and, with a
/// verifier, the customer-info answers checked against the pinned key.
public enum StorekeeperConnection {
    public static func client(
        serverURL: URL,
        session: URLSession = .shared,
        answers: AnswerVerifier? = nil,
        credentials: @escaping @Sendable () async -> Credentials?
    ) -> Client {
        var middlewares: [any ClientMiddleware] = [CredentialsMiddleware(credentials: credentials)]
        if let answers { middlewares.append(SignedAnswersMiddleware(verifier: answers)) }
        return Client(
            serverURL: serverURL,
            transport: URLSessionTransport(configuration: .init(session: session)),
            middlewares: middlewares
        )
    }
}

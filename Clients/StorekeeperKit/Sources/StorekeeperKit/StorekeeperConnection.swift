import Foundation
import OpenAPIURLSession
import StorekeeperAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The generated API client, over URLSession, with the app's current credentials on every request.
public enum StorekeeperConnection {
    public static func client(
        serverURL: URL,
        session: URLSession = .shared,
        credentials: @escaping @Sendable () async -> Credentials?
    ) -> Client {
        Client(
            serverURL: serverURL,
            transport: URLSessionTransport(configuration: .init(session: session)),
            middlewares: [CredentialsMiddleware(credentials: credentials)]
        )
    }
}

import Foundation
import StorekeeperAPI

/// Who the app's user is to Storekeeper: a guest until they sign in (the server issues the guest a credential on
/// first use, kept in a ``GuestCredentialStore``), then the account — and on signing in, everything the guest
/// bought moves to the account, proven with the guest's own credential.
public actor UserSession {
    /// The server did not issue a guest credential or did not merge the guest.
    public struct Failed: Error, CustomStringConvertible {
        public var operation: String
        public var status: Int
        public var description: String { "\(operation) failed (\(status))" }
    }

    private let api: @Sendable (Credentials?) -> any APIProtocol
    private let store: any GuestCredentialStore
    private var userToken: String?

    public init(serverURL: URL, store: any GuestCredentialStore) {
        self.init(store: store) { credentials in StorekeeperConnection.client(serverURL: serverURL) { credentials } }
    }

    /// - Parameter api: a client that sends these credentials.
    init(store: any GuestCredentialStore, api: @escaping @Sendable (Credentials?) -> any APIProtocol) {
        self.api = api
        self.store = store
    }

    /// The credentials to send now: the account's token when signed in, else the guest's (issued on first use).
    public func credentials() async throws -> Credentials {
        if let userToken { return .bearer(userToken) }
        return .guest(try await guestToken())
    }

    /// Signs in with a token the app's backend issued: the guest (if this install has one) is merged into the
    /// account first — its purchases, entitlements and coins move — and then forgotten. Returns what moved.
    @discardableResult
    public func logIn(userToken: String) async throws -> Components.Schemas.MergeAnswer? {
        var merged: Components.Schemas.MergeAnswer?
        if let guest = try store.load() {
            // The account proves itself with its token, the guest with its own credential.
            let output = try await api(.bearer(userToken)).mergeGuest(body: .json(.init(guestToken: guest)))
            switch output {
            case .ok(let ok): merged = try ok.body.json
            case .badRequest: throw Failed(operation: "merging the guest", status: 400)
            case .unauthorized: throw Failed(operation: "merging the guest", status: 401)
            case .forbidden: throw Failed(operation: "merging the guest", status: 403)
            case .conflict: throw Failed(operation: "merging the guest", status: 409)
            case .undocumented(let status, _): throw Failed(operation: "merging the guest", status: status)
            default: throw Failed(operation: "merging the guest", status: 0)
            }
            try store.remove()
        }
        self.userToken = userToken
        return merged
    }

    /// Signs out: the next call is a new guest's.
    public func logOut() { userToken = nil }

    private func guestToken() async throws -> String {
        if let token = try store.load() { return token }
        switch try await api(nil).createGuest() {
        case .created(let created):
            let token = try created.body.json.token
            try store.save(token)
            return token
        case .undocumented(let status, _): throw Failed(operation: "issuing a guest credential", status: status)
        default: throw Failed(operation: "issuing a guest credential", status: 0)
        }
    }
}

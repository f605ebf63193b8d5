import AppStoreWire
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import StorekeeperCore
import StorekeeperStorage

/// Who is calling the client API.
public struct ClientIdentity: Sendable, Hashable {
    /// The user the call acts for; `nil` for an API-key call that names nobody.
    public var user: UserID?
    /// How the caller authenticated, for logs and audits: `token`, `guest`, `apiKey:<name>`.
    public var method: String
    /// The base64url SHA-256 of the credential presented (the bearer token, the guest credential or the API key): the
    /// server signs it into its answers so an app can tell an answer to its own credentials from one to another's.
    public var credential: String?

    public init(user: UserID?, method: String, credential: String? = nil) {
        self.user = user
        self.method = method
        self.credential = credential
    }

    /// The digest of a credential as the signed answers name it.
    public static func digest(_ credential: some StringProtocol) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Data(credential.utf8))))
    }
}

/// Authenticates client calls (user token, guest credential, API key) and admin calls (admin key).
///
/// Keys are compared as SHA-256 digests so the comparison's time does not depend on how much of a key matched.
public struct Authenticator: Sendable {
    /// The guest credential `POST /v1/guests` issued.
    public static let guestHeader = HTTPField.Name("X-Storekeeper-Guest")!
    /// Accepted before guest credentials; a device id alone is no credential, so it is refused with a pointer.
    public static let legacyDeviceHeader = HTTPField.Name("X-Storekeeper-Device")!
    public static let apiKeyHeader = HTTPField.Name("X-API-Key")!
    public static let actingUserHeader = HTTPField.Name("X-Storekeeper-User")!
    public static let adminKeyHeader = HTTPField.Name("X-Admin-Key")!

    let tokens: UserTokenVerifier
    let apiKeys: [(name: String, digest: SHA256.Digest)]
    let adminKeys: [(name: String, digest: SHA256.Digest)]
    let adminScopes: [String: Set<AdminScope>]
    let allowGuests: Bool
    let guests: GuestStore

    public init(configuration: AuthConfiguration, guests: GuestStore) throws {
        self.guests = guests
        tokens = try UserTokenVerifier(configuration: configuration)
        apiKeys = configuration.apiKeys.sorted { $0.key < $1.key }.map { ($0.key, SHA256.hash(data: Data($0.value.utf8))) }
        adminKeys = configuration.adminKeys.sorted { $0.key < $1.key }.map { ($0.key, SHA256.hash(data: Data($0.value.utf8))) }
        adminScopes = Dictionary(uniqueKeysWithValues: configuration.adminKeys.keys.map { ($0, configuration.scopes(ofAdminKey: $0)) })
        allowGuests = configuration.allowGuests
    }

    /// The client calling, or a 401 naming what is wrong.
    public func client(_ request: Request) async throws -> ClientIdentity {
        if let authorization = request.headers[.authorization] {
            guard authorization.hasPrefix("Bearer "), tokens.isEnabled else {
                throw AuthError.bearerExpected
            }
            let subject: String
            do {
                subject = try tokens.verify(String(authorization.dropFirst(7)))
            } catch {
                throw AuthError.tokenRefused("\(error)")
            }
            guard let user = UserID.account(subject) else {
                throw AuthError.tokenSubjectUnusable
            }
            return ClientIdentity(user: user, method: "token", credential: ClientIdentity.digest(authorization.dropFirst(7)))
        }
        if let key = request.headers[Self.apiKeyHeader] {
            guard let name = match(key, in: apiKeys) else {
                throw AuthError.unknownAPIKey
            }
            var user: UserID?
            if let acting = request.headers[Self.actingUserHeader] {
                // The backend's own key is the credential here: it may act for any user, guests included.
                guard let parsed = UserID.any(acting) else {
                    throw AuthError.actingUserUnusable
                }
                user = parsed
            }
            return ClientIdentity(user: user, method: "apiKey:\(name)", credential: ClientIdentity.digest(key))
        }
        if let credential = request.headers[Self.guestHeader] {
            guard allowGuests else {
                throw AuthError.guestsDisabled
            }
            guard let user = try await guests.verify(credential) else {
                throw AuthError.unknownGuestCredential
            }
            return ClientIdentity(user: user, method: "guest", credential: ClientIdentity.digest(credential))
        }
        if request.headers[Self.legacyDeviceHeader] != nil {
            throw AuthError.deviceIdNotACredential
        }
        throw AuthError.noCredential
    }

    /// The client's user; API-key calls must name one with `X-Storekeeper-User`.
    public func clientUser(_ request: Request) async throws -> (UserID, ClientIdentity) {
        let identity = try await client(request)
        guard let user = identity.user else {
            throw AuthError.userRequired
        }
        return (user, identity)
    }

    /// The admin key's name and scopes, or a 401.
    public func admin(_ request: Request) throws -> AdminCaller {
        guard let key = request.headers[Self.adminKeyHeader], let name = match(key, in: adminKeys) else {
            throw AuthError.adminKeyRequired
        }
        return AdminCaller(name: name, scopes: adminScopes[name] ?? [])
    }

    private func match(_ key: String, in keys: [(name: String, digest: SHA256.Digest)]) -> String? {
        let digest = SHA256.hash(data: Data(key.utf8))
        var found: String?
        for entry in keys where entry.digest == digest { found = entry.name }
        return found
    }
}

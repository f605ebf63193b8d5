import Foundation

#if canImport(Security)
import Security
#endif

/// Where the server-issued guest credential lives between launches: the Keychain on Apple platforms
/// (``KeychainGuestStore``), an owner-only file elsewhere (``FileGuestStore``).
public protocol GuestCredentialStore: Sendable {
    func load() throws -> String?
    func save(_ token: String) throws
    func remove() throws
}

/// The guest credential in a file only its owner can read, replaced atomically (for platforms without a Keychain,
/// and the tests).
public struct FileGuestStore: GuestCredentialStore {
    public let url: URL

    public init(url: URL) { self.url = url }

    public func load() throws -> String? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return token.isEmpty ? nil : token
    }

    public func save(_ token: String) throws {
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent(url.lastPathComponent + ".tmp-" + UUID().uuidString)
        // Created owner-only before the secret is written into it.
        guard FileManager.default.createFile(atPath: temporary.path, contents: Data(token.utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown) }
        guard rename(temporary.path, url.path) == 0 else {
            unlink(temporary.path)
            throw CocoaError(.fileWriteUnknown)
        }
    }

    public func remove() throws {
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
    }
}

#if canImport(Security)
/// The guest credential in the Keychain, this device only, readable after the first unlock (StoreKit's listeners
/// run in the background). Not compiled on these Linux machines: no Apple toolchain.
public struct KeychainGuestStore: GuestCredentialStore {
    public let service: String

    public init(service: String = "storekeeper.guest") { self.service = service }

    private var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: "guest"]
    }

    public func load() throws -> String? {
        var item: CFTypeRef?
        var search = query
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        let status = SecItemCopyMatching(search as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }
        return String(decoding: data, as: UTF8.self)
    }

    public func save(_ token: String) throws {
        try remove()
        var item = query
        item[kSecValueData as String] = Data(token.utf8)
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let status = SecItemAdd(item as CFDictionary, nil)
        guard status == errSecSuccess else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }
    }

    public func remove() throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }
    }
}
#endif

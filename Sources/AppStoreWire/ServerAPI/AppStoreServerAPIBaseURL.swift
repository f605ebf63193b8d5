import Foundation

/// Where the App Store Server API is: Apple's production or sandbox host, or any URL (e.g. a simulator).
public struct AppStoreServerAPIBaseURL: Sendable, Hashable, CustomStringConvertible {
    /// The base URL; endpoint paths such as `/inApps/v1/...` are appended to it.
    public let url: URL
    /// The App Store environment this host serves, when known.
    public let environment: AppStoreEnvironment?

    public init(url: URL, environment: AppStoreEnvironment? = nil) {
        self.url = url
        self.environment = environment
    }

    /// Apple's production host (recommended since 2026-05).
    public static let production = Self(url: URL(string: "https://api.storekit.apple.com")!, environment: .production)
    /// Apple's sandbox host (recommended since 2026-05).
    public static let sandbox = Self(
        url: URL(string: "https://api.storekit-sandbox.apple.com")!,
        environment: .sandbox
    )
    /// Apple's older production host, still served.
    public static let legacyProduction = Self(
        url: URL(string: "https://api.storekit.itunes.apple.com")!,
        environment: .production
    )
    /// Apple's older sandbox host, still served.
    public static let legacySandbox = Self(
        url: URL(string: "https://api.storekit-sandbox.itunes.apple.com")!,
        environment: .sandbox
    )

    /// Apple's host for an environment; nil for `Xcode` and `LocalTesting`, which have no server.
    public init?(environment: AppStoreEnvironment) {
        switch environment {
        case .production: self = .production
        case .sandbox: self = .sandbox
        default: return nil
        }
    }

    public var description: String { url.absoluteString }
}

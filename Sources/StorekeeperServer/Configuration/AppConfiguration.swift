import Configuration
import Foundation

/// One app Storekeeper serves: how its purchases are verified and signed. Secrets never appear in descriptions.
public struct AppConfiguration: Sendable, CustomStringConvertible {
    /// Where verification runs: `production` pins Apple's roots only; `development` also trusts ``extraRootFiles``
    /// (the simulator's root, a test CA).
    public enum Deployment: String, Sendable, Hashable {
        case production
        case development
    }

    public var name: String
    public var bundleId: String
    public var appAppleId: Int64?
    public var deployment: Deployment
    /// Whether sandbox purchases are delivered (App Review buys in sandbox; they are always flagged).
    public var allowSandbox: Bool
    public var extraRootFiles: [String]
    /// PEM text of extra roots, for callers that hold them in memory (tests, the demo).
    public var extraRootsPEM: [String]
    public var sharedSecret: String?
    public var apiKeyId: String?
    public var apiIssuerId: String?
    /// The In-App Purchase key (`.p8`) file, or its PEM.
    public var apiKeyPath: String?
    public var apiKeyPEM: String?
    public var verifyReceiptProductionURL: URL
    public var verifyReceiptSandboxURL: URL
    /// Where the App Store Server API is called instead of Apple's production and sandbox hosts (a simulator).
    public var serverAPIURL: URL?
    /// Tell Apple each delivered consumable is finished (Finish Transaction, API 1.20), so the device is not handed
    /// it again; needs the In-App Purchase key.
    public var finishTransactions = false
    /// Set each user's app account token on purchases that reached them without one (Set App Account Token, API
    /// 1.16), so their renewals and notifications name the user; on wherever the In-App Purchase key is configured.
    public var setAppAccountTokens = true
    /// The App Store keys this app's configuration gave at the app's level (`apps.<name>.sharedSecret`), where they
    /// were before each store's keys had a group of their own (`apps.<name>.appStore.sharedSecret`): still read, and
    /// warned about at start.
    public var deprecatedKeys: [String] = []
    /// The app's Google Play side (`apps.<name>.googlePlay.*`), when it sells there.
    public var googlePlay: GooglePlayConfiguration?

    public init(
        name: String = "main",
        bundleId: String,
        appAppleId: Int64? = nil,
        deployment: Deployment = .production,
        allowSandbox: Bool = true,
        extraRootFiles: [String] = [],
        extraRootsPEM: [String] = [],
        sharedSecret: String? = nil,
        apiKeyId: String? = nil,
        apiIssuerId: String? = nil,
        apiKeyPath: String? = nil,
        apiKeyPEM: String? = nil,
        verifyReceiptProductionURL: URL = URL(string: "https://buy.itunes.apple.com/verifyReceipt")!,
        verifyReceiptSandboxURL: URL = URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")!,
        serverAPIURL: URL? = nil
    ) {
        self.serverAPIURL = serverAPIURL
        self.name = name
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.deployment = deployment
        self.allowSandbox = allowSandbox
        self.extraRootFiles = extraRootFiles
        self.extraRootsPEM = extraRootsPEM
        self.sharedSecret = sharedSecret
        self.apiKeyId = apiKeyId
        self.apiIssuerId = apiIssuerId
        self.apiKeyPath = apiKeyPath
        self.apiKeyPEM = apiKeyPEM
        self.verifyReceiptProductionURL = verifyReceiptProductionURL
        self.verifyReceiptSandboxURL = verifyReceiptSandboxURL
    }

    /// Reads `apps.<name>.deployment` (`production` | `development`) and the App Store's keys under
    /// `apps.<name>.appStore.*`: `bundleId` (required), `appAppleId`, `allowSandbox` (true), `extraRoots` (PEM files;
    /// development only), `sharedSecret` (secret), `apiKey.id`, `apiKey.issuer`, `apiKey.path` (the `.p8`),
    /// `verifyReceipt.productionURL`, `verifyReceipt.sandboxURL`, `serverAPI.url` (instead of Apple's hosts),
    /// `finishTransactions` (false; needs `apiKey.*`), `setAppAccountTokens` (true; acts only with `apiKey.*`).
    /// Environment form: `APPS_MAIN_APP_STORE_BUNDLE_ID`, `APPS_MAIN_APP_STORE_SHARED_SECRET`, ... The same keys
    /// directly under `apps.<name>` (before 2026-11) are still read when the group does not give them, each with a
    /// warning at start.
    init(name: String, reader: StrictConfigReader) throws {
        let appStore = reader.scoped(to: "appStore")
        var deprecated: [String] = []
        /// A key of the App Store group, or the same key where it used to be.
        func store<T>(_ key: String, _ read: (StrictConfigReader) throws -> T?) throws -> T? {
            if let value = try read(appStore) { return value }
            guard let value = try read(reader) else { return nil }
            deprecated.append(key)
            return value
        }
        guard let bundleId = try store("bundleId", { try $0.string("bundleId") }), !bundleId.isEmpty else {
            throw ConfigurationError.missing("apps.\(name).appStore.bundleId")
        }
        let deployment =
            Deployment(rawValue: try reader.choice("deployment", ["production", "development"], default: "production"))
            ?? .production
        func url(_ key: String, _ fallback: String?) throws -> URL? {
            guard let text = try store(key, { try $0.string(key) }) ?? fallback else { return nil }
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ConfigurationError.invalid("apps.\(name).appStore.\(key) is not an http(s) URL")
            }
            return url
        }
        self.init(
            name: name,
            bundleId: bundleId,
            appAppleId: try store("appAppleId") { try $0.int("appAppleId", in: 1...Int(Int64.max)) }.map(Int64.init),
            deployment: deployment,
            allowSandbox: try store("allowSandbox") { try $0.bool("allowSandbox") } ?? true,
            extraRootFiles: try store("extraRoots") { try $0.list("extraRoots") } ?? [],
            sharedSecret: try store("sharedSecret") { try $0.string("sharedSecret", isSecret: true) },
            apiKeyId: try store("apiKey.id") { try $0.string("apiKey.id") },
            apiIssuerId: try store("apiKey.issuer") { try $0.string("apiKey.issuer") },
            apiKeyPath: try store("apiKey.path") { try $0.string("apiKey.path") },
            verifyReceiptProductionURL: try url("verifyReceipt.productionURL", "https://buy.itunes.apple.com/verifyReceipt")!,
            verifyReceiptSandboxURL: try url("verifyReceipt.sandboxURL", "https://sandbox.itunes.apple.com/verifyReceipt")!,
            serverAPIURL: try url("serverAPI.url", nil)
        )
        finishTransactions = try store("finishTransactions") { try $0.bool("finishTransactions") } ?? false
        setAppAccountTokens = try store("setAppAccountTokens") { try $0.bool("setAppAccountTokens") } ?? true
        deprecatedKeys = deprecated
        googlePlay = try GooglePlayConfiguration(name: name, reader: reader.scoped(to: "googlePlay"))
        if finishTransactions, apiKeyId == nil || apiKeyPath == nil {
            throw ConfigurationError.missing(
                "apps.\(name).appStore.apiKey.id and .path (finishTransactions calls the App Store Server API)"
            )
        }
        if deployment == .production, appAppleId == nil {
            throw ConfigurationError.missing("apps.\(name).appStore.appAppleId (required in production)")
        }
        if deployment == .production, !extraRootFiles.isEmpty {
            throw ConfigurationError.invalid("apps.\(name).appStore.extraRoots is only allowed with deployment=development")
        }
    }

    public var description: String {
        "AppConfiguration(\(name), bundleId: \(bundleId), deployment: \(deployment.rawValue), sharedSecret: "
            + (sharedSecret == nil ? "none" : "<redacted>") + ", apiKey: " + (apiKeyId ?? "none")
            + (googlePlay.map { ", googlePlay: \($0)" } ?? "") + ")"
    }
}

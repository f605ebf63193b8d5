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

    public init(
        name: String = "main", bundleId: String, appAppleId: Int64? = nil, deployment: Deployment = .production,
        allowSandbox: Bool = true, extraRootFiles: [String] = [], extraRootsPEM: [String] = [], sharedSecret: String? = nil,
        apiKeyId: String? = nil, apiIssuerId: String? = nil, apiKeyPath: String? = nil, apiKeyPEM: String? = nil,
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

    /// Reads `apps.<name>.*`: `bundleId` (required), `appAppleId`, `deployment` (`production` | `development`),
    /// `allowSandbox` (true), `extraRoots` (PEM files; development only), `sharedSecret` (secret),
    /// `apiKey.id`, `apiKey.issuer`, `apiKey.path` (the `.p8`), `verifyReceipt.productionURL`,
    /// `verifyReceipt.sandboxURL`, `serverAPI.url` (instead of Apple's hosts). Environment form: `APPS_MAIN_BUNDLE_ID`, `APPS_MAIN_SHARED_SECRET`, ...
    public init(name: String, reader: ConfigReader) throws {
        guard let bundleId = reader.string(forKey: "bundleId"), !bundleId.isEmpty else {
            throw ConfigurationError.missing("apps.\(name).bundleId")
        }
        let deploymentText = reader.string(forKey: "deployment", default: "production")
        guard let deployment = Deployment(rawValue: deploymentText) else {
            throw ConfigurationError.invalid("apps.\(name).deployment must be production or development")
        }
        func url(_ key: String, _ fallback: String) throws -> URL {
            let text = reader.string(forKey: ConfigKey(key), default: fallback)
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
                throw ConfigurationError.invalid("apps.\(name).\(key) is not an http(s) URL")
            }
            return url
        }
        self.init(
            name: name, bundleId: bundleId, appAppleId: reader.int(forKey: "appAppleId").map(Int64.init),
            deployment: deployment, allowSandbox: reader.bool(forKey: "allowSandbox", default: true),
            extraRootFiles: reader.stringArray(forKey: "extraRoots", default: []),
            sharedSecret: reader.string(forKey: "sharedSecret", isSecret: true),
            apiKeyId: reader.string(forKey: "apiKey.id"), apiIssuerId: reader.string(forKey: "apiKey.issuer"),
            apiKeyPath: reader.string(forKey: "apiKey.path"),
            verifyReceiptProductionURL: try url("verifyReceipt.productionURL", "https://buy.itunes.apple.com/verifyReceipt"),
            verifyReceiptSandboxURL: try url("verifyReceipt.sandboxURL", "https://sandbox.itunes.apple.com/verifyReceipt"),
            serverAPIURL: try reader.string(forKey: "serverAPI.url").map { _ in try url("serverAPI.url", "") })
        if deployment == .production, appAppleId == nil {
            throw ConfigurationError.missing("apps.\(name).appAppleId (required in production)")
        }
        if deployment == .production, !extraRootFiles.isEmpty {
            throw ConfigurationError.invalid("apps.\(name).extraRoots is only allowed with deployment=development")
        }
    }

    public var description: String {
        "AppConfiguration(\(name), bundleId: \(bundleId), deployment: \(deployment.rawValue), sharedSecret: "
            + (sharedSecret == nil ? "none" : "<redacted>") + ", apiKey: " + (apiKeyId ?? "none") + ")"
    }
}

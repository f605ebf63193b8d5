import AppStoreWire
import AsyncHTTPClient
import Crypto
import Foundation
import GooglePlayWire
import Logging
import NIOCore
import X509

/// What Storekeeper needs per app: the JWS verifier pinned to the right roots, the verifyReceipt client and the
/// offer signers. Built once at start from ``AppConfiguration``.
public struct AppRegistry: Sendable {
    public struct App: Sendable {
        public let configuration: AppConfiguration
        public let verifier: SignedDataVerifier
        public let receipts: ReceiptVerificationClient
        public let offerSignerV1: PromotionalOfferV1Signer?
        public let requestSigner: AppStoreRequestSigner?
        /// App Store Server API clients by environment (`Production`, `Sandbox`); empty without an API key.
        public let serverAPI: [String: AppStoreServerAPIClient]

        /// The app's Google Play side, when it sells there.
        public let googlePlay: PlayApp?

        /// The client for transactions of `environment`.
        public func serverAPI(for environment: String) -> AppStoreServerAPIClient? { serverAPI[environment] }
    }

    /// An app's Google Play side: the Play Developer API with its service account, and the verifier of the push
    /// subscription's tokens (nil: pushes are refused).
    public struct PlayApp: Sendable {
        public let configuration: GooglePlayConfiguration
        public let api: PlayDeveloperAPIClient
        public let push: PushTokenVerifier?
        /// Google's financial reports (nil: `reports.bucket` is not configured).
        public let reports: PlayReportsClient?
    }

    public let apps: [App]

    public init(configurations: [AppConfiguration], httpClient: HTTPClient, logger: Logger) throws {
        apps = try configurations.map { configuration in
            var extra: [Certificate] = []
            for path in configuration.extraRootFiles {
                extra += try TrustedRoots.loadCertificates(from: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            }
            for pem in configuration.extraRootsPEM {
                extra += try TrustedRoots.loadCertificates(from: Array(pem.utf8))
            }
            let development = configuration.deployment == .development
            let verifier = try SignedDataVerifier(
                configuration: .init(
                    bundleId: configuration.bundleId,
                    appAppleId: configuration.appAppleId,
                    environments: configuration.allowSandbox || development ? [.production, .sandbox] : [.production],
                    roots: try TrustedRoots.apple(adding: extra),
                    deployment: development ? .development : .production
                )
            )
            let receipts = ReceiptVerificationClient(
                httpClient: httpClient,
                configuration: ReceiptVerificationConfiguration(
                    bundleId: configuration.bundleId,
                    productionURL: configuration.verifyReceiptProductionURL,
                    sandboxURL: configuration.verifyReceiptSandboxURL,
                    sharedSecret: configuration.sharedSecret
                ),
                logger: logger
            )
            var pem = configuration.apiKeyPEM
            if pem == nil, let path = configuration.apiKeyPath {
                pem = try String(contentsOfFile: path, encoding: .utf8)
            }
            var v1: PromotionalOfferV1Signer?
            var v2: AppStoreRequestSigner?
            var clients: [String: AppStoreServerAPIClient] = [:]
            if let pem, let keyId = configuration.apiKeyId {
                v1 = try PromotionalOfferV1Signer(p8PEM: pem, keyIdentifier: keyId, bundleId: configuration.bundleId)
                if let issuer = configuration.apiIssuerId {
                    v2 = try AppStoreRequestSigner(p8PEM: pem, keyIdentifier: keyId, issuerId: issuer, bundleId: configuration.bundleId)
                    let tokens = try AppStoreAPITokenGenerator(
                        privateKeyPEM: pem,
                        keyId: keyId,
                        issuerId: issuer,
                        bundleId: configuration.bundleId
                    )
                    let environments: [AppStoreEnvironment] =
                        configuration.allowSandbox || development ? [.production, .sandbox] : [.production]
                    for environment in environments {
                        let base =
                            configuration.serverAPIURL.map { AppStoreServerAPIBaseURL(url: $0, environment: environment) }
                            ?? AppStoreServerAPIBaseURL(environment: environment)
                        guard let base else { continue }
                        clients[environment.rawValue] = AppStoreServerAPIClient(
                            httpClient: httpClient,
                            tokenGenerator: tokens,
                            baseURL: base,
                            requestTimeout: .seconds(15),
                            logger: logger
                        )
                    }
                }
            }
            return App(
                configuration: configuration,
                verifier: verifier,
                receipts: receipts,
                offerSignerV1: v1,
                requestSigner: v2,
                serverAPI: clients,
                googlePlay: try configuration.googlePlay.map { try Self.playApp($0, httpClient: httpClient) }
            )
        }
    }

    private static func playApp(_ configuration: GooglePlayConfiguration, httpClient: HTTPClient) throws -> PlayApp {
        let json: [UInt8]
        if let text = configuration.serviceAccountJSON {
            json = Array(text.utf8)
        } else if let path = configuration.serviceAccountPath {
            json = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } else {
            throw PlayWireError.malformed("apps.*.googlePlay: no service account key")
        }
        let transport = AsyncHTTPPlayTransport(client: httpClient, timeout: .seconds(15))
        var scopes = [AccessTokenProvider.androidPublisherScope]
        if configuration.reportsBucket != nil { scopes.append(PlayReportsClient.storageReadScope) }
        let tokens = AccessTokenProvider(key: try ServiceAccountKey.parse(json), scopes: scopes, transport: transport)
        let api = PlayDeveloperAPIClient(
            baseURL: configuration.apiURL?.absoluteString ?? PlayDeveloperAPIClient.googleBaseURL,
            tokens: tokens,
            transport: transport
        )
        var push: PushTokenVerifier?
        if let audience = configuration.pushAudience, let account = configuration.pushServiceAccount {
            push = PushTokenVerifier(
                audience: audience,
                serviceAccountEmail: account,
                certsURL: configuration.certsURL?.absoluteString ?? PushTokenVerifier.googleCertsURL,
                transport: transport
            )
        }
        let reports = configuration.reportsBucket.map { bucket in
            PlayReportsClient(
                baseURL: configuration.reportsURL?.absoluteString ?? PlayReportsClient.googleStorageURL,
                bucket: bucket,
                // Reports are large: a longer timeout and a bound of their own.
                tokens: tokens,
                transport: AsyncHTTPPlayTransport(client: httpClient, timeout: .seconds(120), maximumResponseSize: 64 * 1024 * 1024)
            )
        }
        return PlayApp(configuration: configuration, api: api, push: push, reports: reports)
    }

    /// The app selling under Google Play package `packageName`.
    public func app(packageName: String) -> App? {
        apps.first { $0.googlePlay?.configuration.packageName == packageName }
    }

    public func app(bundleId: String) -> App? {
        apps.first { $0.configuration.bundleId == bundleId }
    }

    /// The app a request names, or the only app when there is one.
    public func app(named bundleId: String?) -> App? {
        if let bundleId { return app(bundleId: bundleId) }
        return apps.count == 1 ? apps[0] : nil
    }
}

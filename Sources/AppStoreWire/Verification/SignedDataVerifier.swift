import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies App Store signed data (`signedPayload`, `signedTransactionInfo`, `signedRenewalInfo`,
/// `signedAppTransactionInfo`) offline: compact JWS, ES256, an `x5c` chain validated to a pinned root with
/// Apple's marker extensions, then the app's identity.
///
/// Validated chains are cached (bounded, sharded), so the steady-state cost is one base64url pass, one JSON
/// decode, one SHA-256 and one P-256 signature check. The verifier is a value that is safe to share between tasks.
public struct SignedDataVerifier: Sendable {
    /// Where the verifier runs: production accepts only Apple's root and never Xcode or LocalTesting data.
    public enum Deployment: String, Sendable, Hashable {
        case production
        case development
    }

    /// The moment at which certificates must be valid.
    public enum ValidationTime: Sendable, Hashable {
        /// The payload's `signedDate` (`receiptCreationDate` for app transactions), so genuine old data keeps
        /// verifying after Apple rotates certificates. Falls back to now when the payload has no date.
        case signedDate
        /// The current time.
        case now
        /// A fixed instant (tests, audits).
        case fixed(Date)
    }

    /// What the verifier accepts.
    public struct Configuration: Sendable {
        /// The app's bundle id; `nil` skips the check, which only a `.development` verifier (an inspection tool)
        /// allows.
        public var bundleId: String?
        /// The app's App Apple ID, checked on Production payloads that carry one. Required in production.
        public var appAppleId: Int64?
        /// Accepted environments. `Xcode` and `LocalTesting` are refused unless listed, and never in production.
        public var environments: Set<AppStoreEnvironment>
        /// The pinned roots.
        public var roots: TrustedRoots
        public var deployment: Deployment
        public var validationTime: ValidationTime
        /// Inputs longer than this are refused before any parsing.
        public var maximumInputSize: Int
        /// How many validated chains to remember.
        public var chainCacheCapacity: Int

        public init(
            bundleId: String?,
            appAppleId: Int64? = nil,
            environments: Set<AppStoreEnvironment> = [.production, .sandbox],
            roots: TrustedRoots,
            deployment: Deployment = .production,
            validationTime: ValidationTime = .signedDate,
            maximumInputSize: Int = 256 * 1024,
            chainCacheCapacity: Int = 64
        ) {
            self.bundleId = bundleId
            self.appAppleId = appAppleId
            self.environments = environments
            self.roots = roots
            self.deployment = deployment
            self.validationTime = validationTime
            self.maximumInputSize = maximumInputSize
            self.chainCacheCapacity = chainCacheCapacity
        }
    }

    /// A configuration the verifier refuses to run with.
    public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public let configuration: Configuration
    private let cache: VerifiedChainCache

    public init(configuration: Configuration) throws {
        if configuration.deployment == .production {
            guard configuration.roots.isAppleOnly else {
                throw ConfigurationError(description: "a production verifier pins only Apple Root CA - G3")
            }
            let unsafe = configuration.environments.intersection([.xcode, .localTesting])
            guard unsafe.isEmpty else {
                throw ConfigurationError(
                    description: "a production verifier never accepts \(unsafe.map(\.rawValue).sorted())"
                )
            }
            guard configuration.bundleId != nil else {
                throw ConfigurationError(description: "a production verifier needs the app's bundle id")
            }
            if configuration.environments.contains(.production), configuration.appAppleId == nil {
                throw ConfigurationError(
                    description: "a production verifier accepting Production data needs the app's appAppleId"
                )
            }
        }
        guard !configuration.roots.certificates.isEmpty else {
            throw ConfigurationError(description: "no trusted root certificate")
        }
        guard !configuration.environments.isEmpty else {
            throw ConfigurationError(description: "no accepted environment")
        }
        self.configuration = configuration
        self.cache = VerifiedChainCache(capacity: configuration.chainCacheCapacity)
    }

    /// Number of validated chains currently cached.
    public var cachedChainCount: Int { cache.count }

    // MARK: Typed entry points

    /// Verifies and decodes a `signedTransactionInfo`.
    public func verifyTransaction(
        _ jws: String
    ) async throws(SignedDataVerificationError)
        -> JWSTransactionDecodedPayload
    {
        try await verify(jws, as: JWSTransactionDecodedPayload.self)
    }

    /// Verifies and decodes a `signedRenewalInfo`.
    public func verifyRenewalInfo(
        _ jws: String
    ) async throws(SignedDataVerificationError)
        -> JWSRenewalInfoDecodedPayload
    {
        try await verify(jws, as: JWSRenewalInfoDecodedPayload.self)
    }

    /// Verifies and decodes a `signedAppTransactionInfo`.
    public func verifyAppTransaction(_ jws: String) async throws(SignedDataVerificationError) -> AppTransaction {
        try await verify(jws, as: AppTransaction.self)
    }

    /// Verifies and decodes a realtime retention request's `signedPayload` (Retention Messaging API): chain,
    /// signature, environment, and in Production the `appAppleId`, as Apple's libraries check it.
    public func verifyRealtimeRequest(_ jws: String) async throws(SignedDataVerificationError) -> DecodedRealtimeRequestBody {
        try await verify(jws, as: DecodedRealtimeRequestBody.self)
    }

    /// Verifies and decodes a notification's `signedPayload` (the outer envelope only).
    public func verifyNotification(
        _ jws: String
    ) async throws(SignedDataVerificationError)
        -> ResponseBodyV2DecodedPayload
    {
        try await verify(jws, as: ResponseBodyV2DecodedPayload.self)
    }

    // MARK: Generic path

    /// Verifies `jws` and decodes its payload as `P`.
    public func verify<P: AppStoreSignedPayload>(
        _ jws: String,
        as type: P.Type = P.self
    )
        async throws(SignedDataVerificationError) -> P
    {
        var jws = jws
        // withUTF8 only rethrows untyped errors, so the typed error travels out in a Result.
        let outcome = try jws.withUTF8 { bytes in
            Result { () throws(SignedDataVerificationError) in try verifyUsingCache(bytes, as: P.self) }
        }.get()
        switch outcome {
        case .verified(let payload):
            return payload
        case .needsChain(let pending):
            let (entry, anchored) = try await validateChain(pending)
            try checkSignature(pending.signature, digest: pending.digest, key: entry.leafKey)
            try checkIdentity(pending.payload)
            if anchored, let storeKey = pending.cacheKey {
                storeKey.withUnsafeBufferPointer { cache.store(header: $0, entry: entry) }
            }
            return pending.payload
        }
    }

    /// Decodes `jws` as `P` without any verification (for inspection tools; never trust the result).
    public static func decodeUnverified<P: Decodable>(
        _ jws: String,
        as type: P.Type = P.self
    )
        throws(SignedDataVerificationError) -> (header: JWSHeader, payload: P)
    {
        var jws = jws
        return try jws.withUTF8 { bytes in
            Result { () throws(SignedDataVerificationError) in
                let parts = try CompactJWS(bytes, maximumSize: Int.max)
                let header = try parts.decodeHeader()
                let payload: P = try parts.decodePayload()
                return (header, payload)
            }
        }.get()
    }

    /// Decodes only the payload of a compact JWS, without checking its signature or reading its header; for
    /// JWS nested inside one whose signature was checked (the x5c chain in the header is not needed then).
    public static func decodeUnverifiedPayload<P: Decodable>(
        _ jws: String,
        as type: P.Type = P.self
    )
        throws(SignedDataVerificationError) -> P
    {
        var jws = jws
        return try jws.withUTF8 { bytes in
            Result { () throws(SignedDataVerificationError) in
                try CompactJWS(bytes, maximumSize: Int.max).decodePayload()
            }
        }.get()
    }

    // MARK: Internals

    private struct Pending<P: AppStoreSignedPayload>: Sendable {
        let header: JWSHeader
        let cacheKey: [UInt8]?
        let payload: P
        let signature: P256.Signing.ECDSASignature
        let digest: SHA256.Digest
        let validationDate: Date
    }

    private enum Outcome<P: AppStoreSignedPayload> {
        case verified(P)
        case needsChain(Pending<P>)
    }

    private func verifyUsingCache<P: AppStoreSignedPayload>(
        _ bytes: UnsafeBufferPointer<UInt8>,
        as: P.Type
    )
        throws(SignedDataVerificationError) -> Outcome<P>
    {
        let parts = try CompactJWS(bytes, maximumSize: configuration.maximumInputSize)
        let cached = cache.lookup(header: parts.header)
        // A cache hit means these exact header bytes were parsed and their chain validated before.
        let header = cached == nil ? try parts.decodeHeader() : nil
        if let header, header.alg != "ES256" {
            throw .malformed("unsupported JWS algorithm \"\(header.alg)\"; App Store data is signed with ES256")
        }
        let payload: P = try parts.decodePayload()
        let signature = try parts.decodeES256Signature()
        let digest = SHA256.hash(data: UnsafeRawBufferPointer(parts.signingInput))
        let date = validationDate(for: payload)

        if let cached, cached.validFrom <= date.timeIntervalSince1970, date.timeIntervalSince1970 <= cached.validUntil {
            try checkSignature(signature, digest: digest, key: cached.leafKey)
            try checkIdentity(payload)
            return .verified(payload)
        }
        let resolvedHeader: JWSHeader
        if let header { resolvedHeader = header } else { resolvedHeader = try parts.decodeHeader() }
        return .needsChain(
            Pending(
                header: resolvedHeader,
                cacheKey: Array(parts.header),
                payload: payload,
                signature: signature,
                digest: digest,
                validationDate: date
            )
        )
    }

    private func validationDate(for payload: some AppStoreSignedPayload) -> Date {
        switch configuration.validationTime {
        case .signedDate: payload.verificationDate ?? Date()
        case .now: Date()
        case .fixed(let date): date
        }
    }

    private func checkSignature(
        _ signature: P256.Signing.ECDSASignature,
        digest: SHA256.Digest,
        key: P256.Signing.PublicKey
    ) throws(SignedDataVerificationError) {
        guard key.isValidSignature(signature, for: digest) else {
            throw .invalidSignature("ES256 signature does not match the signed data and the leaf certificate's key")
        }
    }

    /// Path validation of `x5c` to a pinned root at the validation date, with Apple's marker extensions.
    private func validateChain<P>(
        _ pending: Pending<P>
    ) async throws(SignedDataVerificationError)
        -> (entry: VerifiedChainCache.Entry, anchored: Bool)
    {
        guard let x5c = pending.header.x5c else {
            throw .malformed("JWS header has no x5c certificate chain")
        }
        if let environment = pending.payload.claimedIdentity.environment,
            environment == .xcode || environment == .localTesting
        {
            return (try localTestingKey(x5c: x5c, environment: environment), false)
        }
        guard x5c.count == 3 else {
            throw .malformed("x5c must hold exactly 3 certificates (leaf, intermediate, root); it holds \(x5c.count)")
        }
        let leaf = try Self.certificate(x5c[0], name: "leaf")
        let intermediate = try Self.certificate(x5c[1], name: "intermediate")
        // x5c[2] is deliberately ignored: the chain must end at a pinned root, never at the one supplied.

        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw .invalidCertificate("leaf certificate key is not P-256")
        }
        if let missing = AppleMarkerExtensionPolicy.missingMarker(leaf: leaf, intermediate: intermediate) {
            throw .invalidCertificate(missing)
        }
        let date = pending.validationDate
        for (name, certificate) in [("leaf", leaf), ("intermediate", intermediate)] {
            if date < certificate.notValidBefore {
                throw .invalidCertificate(
                    "\(name) certificate is not valid until \(certificate.notValidBefore), after the validation time \(date)"
                )
            }
            if date > certificate.notValidAfter {
                throw .invalidCertificate(
                    "\(name) certificate expired at \(certificate.notValidAfter), before the validation time \(date)"
                )
            }
        }

        var verifier = Verifier(rootCertificates: CertificateStore(configuration.roots.certificates)) {
            RFC5280Policy(fixedExpiryValidationTime: date)
            AppleMarkerExtensionPolicy()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        switch result {
        case .validCertificate(let chain):
            let certificates = Array(chain)
            let from = certificates.map(\.notValidBefore.timeIntervalSince1970).max() ?? 0
            let until = certificates.map(\.notValidAfter.timeIntervalSince1970).min() ?? 0
            return (.init(leafKey: leafKey, validFrom: from, validUntil: until), true)
        case .couldNotValidate(let failures):
            let reasons = failures.map { String(describing: $0.policyFailureReason) }
            let detail = reasons.isEmpty ? "" : " (\(Set(reasons).sorted().joined(separator: "; ")))"
            throw .invalidCertificate("certificate chain does not validate to a pinned root at \(date)\(detail)")
        }
    }

    /// Xcode and LocalTesting data is signed by a local key, not Apple's chain: only its self-consistency can be
    /// checked, which is why such data is accepted only when explicitly enabled outside production.
    private func localTestingKey(
        x5c: [String],
        environment: AppStoreEnvironment
    )
        throws(SignedDataVerificationError) -> VerifiedChainCache.Entry
    {
        guard configuration.deployment == .development, configuration.environments.contains(environment) else {
            throw .wrongEnvironment("\(environment.rawValue) data is not accepted by this verifier")
        }
        guard let first = x5c.first else { throw .malformed("x5c is empty") }
        let leaf = try Self.certificate(first, name: "signing")
        guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
            throw .invalidCertificate("signing certificate key is not P-256")
        }
        return .init(leafKey: key, validFrom: 0, validUntil: 0)
    }

    private static func certificate(_ base64: String, name: String) throws(SignedDataVerificationError) -> Certificate {
        guard let der = Data(base64Encoded: base64) else {
            throw .malformed("x5c \(name) certificate is not standard base64")
        }
        do {
            return try Certificate(derEncoded: Array(der))
        } catch {
            throw .invalidCertificate("x5c \(name) certificate is not a valid DER X.509 certificate")
        }
    }

    private func checkIdentity(_ payload: some AppStoreSignedPayload) throws(SignedDataVerificationError) {
        let identity = payload.claimedIdentity
        // The app first: data for another app is "wrong app" whatever environment it names.
        let carried = type(of: payload).carriedIdentityFields
        if let expected = configuration.bundleId, carried.contains(.bundleId) || identity.bundleId != nil {
            guard let claimed = identity.bundleId else { throw .wrongApp("payload names no bundle id; expected \(expected)") }
            guard claimed == expected else { throw .wrongApp("payload bundle id \(claimed) is not \(expected)") }
        }
        guard let environment = identity.environment else {
            throw .wrongEnvironment("payload names no environment")
        }
        guard configuration.environments.contains(environment) else {
            let accepted = configuration.environments.map(\.rawValue).sorted().joined(separator: ", ")
            throw .wrongEnvironment("payload environment \(environment.rawValue) is not accepted (accepted: \(accepted))")
        }
        if environment == .production, let expected = configuration.appAppleId,
            carried.contains(.appAppleId) || identity.appAppleId != nil
        {
            guard let claimed = identity.appAppleId else {
                throw .wrongApp("Production payload names no appAppleId; expected \(expected)")
            }
            guard claimed == expected else { throw .wrongApp("payload appAppleId \(claimed) is not \(expected)") }
        }
    }
}

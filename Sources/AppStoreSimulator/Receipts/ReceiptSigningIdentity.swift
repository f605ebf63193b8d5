import AppStoreWire
import Crypto
import Foundation
import SwiftASN1
import X509
import _CryptoExtras

/// An RSA-2048 certificate chain shaped like Apple's legacy receipt-signing chain — a root, a Worldwide Developer
/// Relations-like intermediate marked 1.2.840.113635.100.6.2.1 and a leaf marked 1.2.840.113635.100.6.11.1 — with
/// the private keys, for signing simulated PKCS#7 app receipts.
///
/// Certificates are a pure function of the keys and ``Options``: serial numbers derive from the public keys and
/// RSA PKCS#1 v1.5 signatures are deterministic, so persisting the three keys is enough to get byte-identical
/// certificates back. ``write(to:)`` stores the certificates too, so a verifier can pin the root from disk.
public struct ReceiptSigningIdentity: Sendable {
    /// Apple's marker on the WWDR intermediate (1.2.840.113635.100.6.2.1).
    public static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    /// Apple's "Mac App Store Receipt Signing" marker on the leaf (1.2.840.113635.100.6.11.1), which
    /// ``AppReceiptSignatureVerifier`` requires by default.
    public static let receiptSigningMarker: ASN1ObjectIdentifier = AppReceiptSignatureVerifier
        .appleReceiptSigningExtension

    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate
    public let rootKey: _RSA.Signing.PrivateKey
    public let intermediateKey: _RSA.Signing.PrivateKey
    public let leafKey: _RSA.Signing.PrivateKey

    /// How to name the chain and how long its certificates are valid.
    public struct Options: Sendable, Hashable {
        /// The organisation the names are built from: the root is "`<name>` Inc. Root".
        public var name: String
        public var rootValidity: ClosedRange<Date>
        public var intermediateValidity: ClosedRange<Date>
        public var leafValidity: ClosedRange<Date>
        /// The OCSP responder the intermediate and leaf name in their Authority Information Access extension, as
        /// Apple's do; `nil` leaves the extension out.
        public var ocspURL: String?

        /// The defaults give a chain valid from 2020 to 2050, covering any receipt creation date a test picks.
        public init(
            name: String = "Storekeeper",
            validity: ClosedRange<Date> = Date(
                timeIntervalSince1970: 1_577_836_800
            )...Date(
                timeIntervalSince1970: 2_524_608_000
            ),
            ocspURL: String? = SimulatorSigningChain.defaultOCSPURL
        ) {
            self.name = name
            self.rootValidity = validity
            self.intermediateValidity = validity
            self.leafValidity = validity
            self.ocspURL = ocspURL
        }
    }

    // MARK: Creating

    /// Generates three fresh RSA-2048 keys and the chain over them (RSA key generation takes a moment).
    public static func generate(_ options: Options = Options()) throws -> ReceiptSigningIdentity {
        try make(
            options,
            rootKey: _RSA.Signing.PrivateKey(keySize: .bits2048),
            intermediateKey: _RSA.Signing.PrivateKey(keySize: .bits2048),
            leafKey: _RSA.Signing.PrivateKey(keySize: .bits2048)
        )
    }

    /// Builds the chain over existing keys; the same keys and options always give the same certificates.
    public static func make(
        _ options: Options,
        rootKey: _RSA.Signing.PrivateKey,
        intermediateKey: _RSA.Signing.PrivateKey,
        leafKey: _RSA.Signing.PrivateKey
    ) throws -> ReceiptSigningIdentity {
        let rootName = try DistinguishedName {
            CountryName("US")
            OrganizationName("\(options.name) Inc.")
            OrganizationalUnitName("\(options.name) Certification Authority")
            CommonName(SimulatorSigningChain.commonName("\(options.name) Inc. Root"))
        }
        let intermediateName = try DistinguishedName {
            CountryName("US")
            OrganizationName("\(options.name) Inc.")
            OrganizationalUnitName("G5")
            // Apple's "… Worldwide Developer Relations Certification Authority" would be 65 characters with the
            // default name, over X.509's 64.
            CommonName(SimulatorSigningChain.commonName("\(options.name) Worldwide Developer Relations CA"))
        }
        let leafName = try DistinguishedName {
            CountryName("US")
            OrganizationName("\(options.name) Inc.")
            OrganizationalUnitName("\(options.name) Worldwide Developer Relations")
            CommonName(SimulatorSigningChain.commonName("\(options.name) Mac App Store and iTunes Store Receipt Signing"))
        }
        let rootPublic = Certificate.PublicKey(rootKey.publicKey)
        let intermediatePublic = Certificate.PublicKey(intermediateKey.publicKey)
        let leafPublic = Certificate.PublicKey(leafKey.publicKey)
        let ocsp = options.ocspURL.map {
            AuthorityInformationAccess([.init(method: .ocspServer, location: .uniformResourceIdentifier($0))])
        }

        let root = try Certificate(
            version: .v3,
            serialNumber: serialNumber(for: rootKey.publicKey),
            publicKey: rootPublic,
            notValidBefore: options.rootValidity.lowerBound,
            notValidAfter: options.rootValidity.upperBound,
            issuer: rootName,
            subject: rootName,
            signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: rootPublic)
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey)
        )
        let intermediate = try Certificate(
            version: .v3,
            serialNumber: serialNumber(for: intermediateKey.publicKey),
            publicKey: intermediatePublic,
            notValidBefore: options.intermediateValidity.lowerBound,
            notValidAfter: options.intermediateValidity.upperBound,
            issuer: rootName,
            subject: intermediateName,
            signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: rootPublic).keyIdentifier)
                SubjectKeyIdentifier(hash: intermediatePublic)
                if let ocsp { ocsp }
                marker(intermediateMarker)
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey)
        )
        let leaf = try Certificate(
            version: .v3,
            serialNumber: serialNumber(for: leafKey.publicKey),
            publicKey: leafPublic,
            notValidBefore: options.leafValidity.lowerBound,
            notValidAfter: options.leafValidity.upperBound,
            issuer: intermediateName,
            subject: leafName,
            signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: intermediatePublic).keyIdentifier)
                SubjectKeyIdentifier(hash: leafPublic)
                if let ocsp { ocsp }
                marker(receiptSigningMarker)
            },
            issuerPrivateKey: Certificate.PrivateKey(intermediateKey)
        )
        return try ReceiptSigningIdentity(
            root: root,
            intermediate: intermediate,
            leaf: leaf,
            rootKey: rootKey,
            intermediateKey: intermediateKey,
            leafKey: leafKey
        )
    }

    /// Builds the chain over keys given as PEM (PKCS#1 `RSA PRIVATE KEY` or PKCS#8 `PRIVATE KEY`).
    public init(
        rootKeyPEM: String,
        intermediateKeyPEM: String,
        leafKeyPEM: String,
        options: Options = Options()
    ) throws {
        self = try Self.make(
            options,
            rootKey: Self.privateKey(pem: rootKeyPEM, role: "root"),
            intermediateKey: Self.privateKey(pem: intermediateKeyPEM, role: "intermediate"),
            leafKey: Self.privateKey(pem: leafKeyPEM, role: "leaf")
        )
    }

    /// Pairs existing certificates with their keys, checking that each key belongs to its certificate.
    public init(
        root: Certificate,
        intermediate: Certificate,
        leaf: Certificate,
        rootKey: _RSA.Signing.PrivateKey,
        intermediateKey: _RSA.Signing.PrivateKey,
        leafKey: _RSA.Signing.PrivateKey
    ) throws {
        for (role, certificate, key) in [
            ("root", root, rootKey), ("intermediate", intermediate, intermediateKey), ("leaf", leaf, leafKey),
        ] where certificate.publicKey != Certificate.PublicKey(key.publicKey) {
            throw ReceiptIssuanceError.invalidSigningIdentity("the \(role) key does not match the \(role) certificate")
        }
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        self.rootKey = rootKey
        self.intermediateKey = intermediateKey
        self.leafKey = leafKey
    }

    // MARK: PEM

    /// The root certificate in PEM, for pinning by a verifier.
    public func rootPEM() throws -> String {
        try root.serializeAsPEM().pemString
    }

    /// The files ``write(to:)`` stores, by file name: the three certificates and the three keys (PKCS#8), in PEM.
    public func pemFiles() throws -> [String: String] {
        [
            Self.rootCertificateFile: try root.serializeAsPEM().pemString,
            Self.intermediateCertificateFile: try intermediate.serializeAsPEM().pemString,
            Self.leafCertificateFile: try leaf.serializeAsPEM().pemString,
            Self.rootKeyFile: rootKey.pkcs8PEMRepresentation,
            Self.intermediateKeyFile: intermediateKey.pkcs8PEMRepresentation,
            Self.leafKeyFile: leafKey.pkcs8PEMRepresentation,
        ]
    }

    public static let rootCertificateFile = "receipt-root.pem"
    public static let intermediateCertificateFile = "receipt-intermediate.pem"
    public static let leafCertificateFile = "receipt-leaf.pem"
    public static let rootKeyFile = "receipt-root-key.pem"
    public static let intermediateKeyFile = "receipt-intermediate-key.pem"
    public static let leafKeyFile = "receipt-leaf-key.pem"

    /// Writes ``pemFiles()`` into `directory` (created if needed); key files are readable by the owner only.
    public func write(to directory: URL) throws {
        let files = FileManager.default
        try files.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, contents) in try pemFiles() {
            let url = directory.appendingPathComponent(name)
            try Data(contents.utf8).write(to: url, options: .atomic)
            if name.hasSuffix("-key.pem") {
                try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
            }
        }
    }

    /// Reads an identity stored by ``write(to:)``.
    ///
    /// The keys are required. Stored certificates are used as they are (checked against the keys), so a chain
    /// pinned elsewhere stays valid even if `options` changed; when they are missing they are rebuilt from the
    /// keys with `options`.
    public static func load(from directory: URL, options: Options = Options()) throws -> ReceiptSigningIdentity {
        func read(_ name: String) throws -> String? {
            let url = directory.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: url.path) else { return nil }
            return String(decoding: try Data(contentsOf: url), as: UTF8.self)
        }
        func key(_ name: String, _ role: String) throws -> _RSA.Signing.PrivateKey {
            guard let pem = try read(name) else {
                throw ReceiptIssuanceError.invalidSigningIdentity("\(directory.path)/\(name) is missing")
            }
            return try privateKey(pem: pem, role: role)
        }
        let rootKey = try key(rootKeyFile, "root")
        let intermediateKey = try key(intermediateKeyFile, "intermediate")
        let leafKey = try key(leafKeyFile, "leaf")
        guard let rootPEM = try read(rootCertificateFile), let intermediatePEM = try read(intermediateCertificateFile),
            let leafPEM = try read(leafCertificateFile)
        else {
            return try make(options, rootKey: rootKey, intermediateKey: intermediateKey, leafKey: leafKey)
        }
        do {
            return try ReceiptSigningIdentity(
                root: Certificate(pemEncoded: rootPEM),
                intermediate: Certificate(pemEncoded: intermediatePEM),
                leaf: Certificate(pemEncoded: leafPEM),
                rootKey: rootKey,
                intermediateKey: intermediateKey,
                leafKey: leafKey
            )
        } catch let error as ReceiptIssuanceError {
            throw error
        } catch {
            throw ReceiptIssuanceError.invalidSigningIdentity("unreadable certificate in \(directory.path): \(error)")
        }
    }

    /// Loads the identity stored in `directory`, or generates one and stores it there when there is none yet.
    public static func loadOrGenerate(
        in directory: URL,
        options: Options = Options()
    ) throws
        -> ReceiptSigningIdentity
    {
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent(rootKeyFile).path) {
            return try load(from: directory, options: options)
        }
        let identity = try generate(options)
        try identity.write(to: directory)
        return identity
    }

    // MARK: Helpers

    private static func privateKey(pem: String, role: String) throws -> _RSA.Signing.PrivateKey {
        do {
            return try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw ReceiptIssuanceError.invalidSigningIdentity("unreadable \(role) key: \(error)")
        }
    }

    // A serial derived from the public key keeps certificates reproducible from the keys alone while staying
    // unique per key. 16 bytes with the top bit clear and the next set: a positive INTEGER of fixed length.
    private static func serialNumber(for key: _RSA.Signing.PublicKey) -> Certificate.SerialNumber {
        var bytes = Array(SHA256.hash(data: key.derRepresentation).prefix(16))
        bytes[0] = (bytes[0] & 0x7F) | 0x40
        return Certificate.SerialNumber(bytes: bytes)
    }

    // Apple's markers are ASN.1 NULL-valued, non-critical extensions.
    private static func marker(_ oid: ASN1ObjectIdentifier) -> Certificate.Extension {
        Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])
    }
}

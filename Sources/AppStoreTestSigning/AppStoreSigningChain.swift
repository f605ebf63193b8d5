import AppStoreWire
import Crypto
import Foundation
import SwiftASN1
import X509

/// A certificate chain shaped like Apple's App Store signing chain: a P-384 root and intermediate and a P-256
/// leaf, carrying Apple's marker extensions.
///
/// Storekeeper's simulator, tests and benchmarks sign with one of these; a verifier accepts its data only when
/// its root is pinned by configuration, exactly as it would a real Apple chain. It generates private keys and
/// certificates, so it lives outside the production `AppStoreWire` library.
public struct AppStoreSigningChain: Sendable {
    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate
    public let rootKey: P384.Signing.PrivateKey
    public let intermediateKey: P384.Signing.PrivateKey
    public let leafKey: P256.Signing.PrivateKey

    /// How to shape a generated chain; the defaults give a valid, Apple-like chain for roughly ten years.
    public struct Options: Sendable {
        public var name: String
        public var rootValidity: ClosedRange<Date>
        public var intermediateValidity: ClosedRange<Date>
        public var leafValidity: ClosedRange<Date>
        /// Put 1.2.840.113635.100.6.11.1 on the leaf (tests turn it off to prove it is required).
        public var leafMarker: Bool
        /// Put 1.2.840.113635.100.6.2.1 on the intermediate.
        public var intermediateMarker: Bool

        public init(
            name: String = "Storekeeper Test",
            validity: ClosedRange<Date> = Date(
                timeIntervalSince1970: 1_577_836_800
            )...Date(
                timeIntervalSince1970: 2_524_608_000
            ),
            leafMarker: Bool = true,
            intermediateMarker: Bool = true
        ) {
            self.name = name
            self.rootValidity = validity
            self.intermediateValidity = validity
            self.leafValidity = validity
            self.leafMarker = leafMarker
            self.intermediateMarker = intermediateMarker
        }
    }

    /// Reassembles a chain from stored certificates and keys.
    public init(
        root: Certificate,
        intermediate: Certificate,
        leaf: Certificate,
        rootKey: P384.Signing.PrivateKey,
        intermediateKey: P384.Signing.PrivateKey,
        leafKey: P256.Signing.PrivateKey
    ) {
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        self.rootKey = rootKey
        self.intermediateKey = intermediateKey
        self.leafKey = leafKey
    }

    /// Generates fresh keys and a chain.
    public static func generate(_ options: Options = Options()) throws -> AppStoreSigningChain {
        try make(
            options,
            rootKey: P384.Signing.PrivateKey(),
            intermediateKey: P384.Signing.PrivateKey(),
            leafKey: P256.Signing.PrivateKey()
        )
    }

    /// Builds a chain from existing keys (repeatable runs keep their keys on disk).
    public static func make(
        _ options: Options,
        rootKey: P384.Signing.PrivateKey,
        intermediateKey: P384.Signing.PrivateKey,
        leafKey: P256.Signing.PrivateKey
    ) throws -> AppStoreSigningChain {
        let rootName = try DistinguishedName {
            CommonName("\(options.name) Root CA")
            OrganizationalUnitName("Storekeeper Certification Authority")
            OrganizationName("Storekeeper")
            CountryName("US")
        }
        let intermediateName = try DistinguishedName {
            CommonName("\(options.name) Worldwide Developer Relations CA")
            OrganizationalUnitName("G6")
            OrganizationName("Storekeeper")
            CountryName("US")
        }
        let leafName = try DistinguishedName {
            CommonName("\(options.name) App Store Receipt Signing")
            OrganizationalUnitName("Storekeeper Worldwide Developer Relations")
            OrganizationName("Storekeeper")
            CountryName("US")
        }
        let root = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(rootKey.publicKey),
            notValidBefore: options.rootValidity.lowerBound,
            notValidAfter: options.rootValidity.upperBound,
            issuer: rootName,
            subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: Certificate.PublicKey(rootKey.publicKey))
            },
            issuerPrivateKey: .init(rootKey)
        )
        let intermediate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(intermediateKey.publicKey),
            notValidBefore: options.intermediateValidity.lowerBound,
            notValidAfter: options.intermediateValidity.upperBound,
            issuer: rootName,
            subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: Certificate.PublicKey(rootKey.publicKey)).keyIdentifier)
                SubjectKeyIdentifier(hash: Certificate.PublicKey(intermediateKey.publicKey))
                if options.intermediateMarker { Self.marker(Self.intermediateMarker) }
            },
            issuerPrivateKey: .init(rootKey)
        )
        let leaf = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(leafKey.publicKey),
            notValidBefore: options.leafValidity.lowerBound,
            notValidAfter: options.leafValidity.upperBound,
            issuer: intermediateName,
            subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: Certificate.PublicKey(intermediateKey.publicKey)).keyIdentifier)
                if options.leafMarker { Self.marker(Self.leafMarker) }
            },
            issuerPrivateKey: .init(intermediateKey)
        )
        return AppStoreSigningChain(
            root: root,
            intermediate: intermediate,
            leaf: leaf,
            rootKey: rootKey,
            intermediateKey: intermediateKey,
            leafKey: leafKey
        )
    }

    /// The `x5c` header value: base64 DER of leaf, intermediate and root.
    public func x5c() throws -> [String] {
        try [leaf, intermediate, root].map { Data(try $0.derBytes()).base64EncodedString() }
    }

    /// A JWS signer using this chain's leaf key and `x5c`.
    public func signer() throws -> JWSSigner {
        JWSSigner(privateKey: leafKey, header: JWSHeader(alg: "ES256", x5c: try x5c()))
    }

    /// The root certificate in PEM, for pinning by a verifier.
    public func rootPEM() throws -> String {
        try root.serializeAsPEM().pemString
    }

    // The OIDs AppStoreWire's verifier requires, spelled out here: its own constants stay internal rather than widen
    // the production library's API for the sake of a test CA.
    static let leafMarker: ASN1ObjectIdentifier = AppReceiptSignatureVerifier.appleReceiptSigningExtension
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    // Apple's markers are ASN.1 NULL-valued, non-critical extensions.
    private static func marker(_ oid: ASN1ObjectIdentifier) -> Certificate.Extension {
        Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])
    }
}

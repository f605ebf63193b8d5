import AppStoreTestSigning
import AppStoreWire
import Crypto
import Foundation
import SwiftASN1
import X509

/// Generates the simulator's JWS signing chain: shaped like AppStoreTestSigning's ``AppStoreSigningChain`` (P-384
/// root and intermediate, P-256 leaf, Apple's marker extensions) and, like Apple's WWDR G6 intermediate and its
/// leaves, with an Authority Information Access extension naming an OCSP responder.
public enum SimulatorSigningChain {
    /// The OCSP responder the certificates name by default: the simulator's default address. Nothing answers
    /// there; verifiers with online checks off (as against any non-Apple chain) never ask.
    public static let defaultOCSPURL = "http://127.0.0.1:8090/ocsp"

    /// Fresh keys and a chain valid from 2020 to 2050.
    public static func generate(
        name: String = "Storekeeper Simulator",
        ocspURL: String = defaultOCSPURL
    ) throws
        -> AppStoreSigningChain
    {
        let validity = Date(timeIntervalSince1970: 1_577_836_800)...Date(timeIntervalSince1970: 2_524_608_000)
        let rootKey = P384.Signing.PrivateKey()
        let intermediateKey = P384.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            CommonName(commonName("\(name) Root CA"))
            OrganizationalUnitName("Storekeeper Certification Authority")
            OrganizationName("Storekeeper")
            CountryName("US")
        }
        let intermediateName = try DistinguishedName {
            CommonName(commonName("\(name) Worldwide Developer Relations CA"))
            OrganizationalUnitName("G6")
            OrganizationName("Storekeeper")
            CountryName("US")
        }
        let leafName = try DistinguishedName {
            CommonName(commonName("\(name) App Store Receipt Signing"))
            OrganizationalUnitName("Storekeeper Worldwide Developer Relations")
            OrganizationName("Storekeeper")
            CountryName("US")
        }
        let rootPublic = Certificate.PublicKey(rootKey.publicKey)
        let intermediatePublic = Certificate.PublicKey(intermediateKey.publicKey)
        let ocsp = AuthorityInformationAccess([.init(method: .ocspServer, location: .uniformResourceIdentifier(ocspURL))])
        let root = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: rootPublic,
            notValidBefore: validity.lowerBound,
            notValidAfter: validity.upperBound,
            issuer: rootName,
            subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: rootPublic)
            },
            issuerPrivateKey: .init(rootKey)
        )
        let intermediate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: intermediatePublic,
            notValidBefore: validity.lowerBound,
            notValidAfter: validity.upperBound,
            issuer: rootName,
            subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: rootPublic).keyIdentifier)
                SubjectKeyIdentifier(hash: intermediatePublic)
                ocsp
                marker(ReceiptSigningIdentity.intermediateMarker)
            },
            issuerPrivateKey: .init(rootKey)
        )
        let leaf = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(leafKey.publicKey),
            notValidBefore: validity.lowerBound,
            notValidAfter: validity.upperBound,
            issuer: intermediateName,
            subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: intermediatePublic).keyIdentifier)
                ocsp
                marker(ReceiptSigningIdentity.receiptSigningMarker)
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

    /// X.509 caps a common name at 64 characters (RFC 5280 `ub-common-name`); a long chain name is cut to fit.
    static func commonName(_ text: String) -> String {
        String(text.prefix(64))
    }

    // Apple's markers are ASN.1 NULL-valued, non-critical extensions.
    static func marker(_ oid: ASN1ObjectIdentifier) -> Certificate.Extension {
        Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])
    }
}

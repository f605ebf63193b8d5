import AppStoreWire
import Crypto
import Foundation
import X509
import _CryptoExtras

/// A throwaway certificate hierarchy (root → intermediate → leaf) for signing test receipts, shaped like
/// Apple's receipt chain.
struct ReceiptTestPKI {
    /// One RSA-2048 key generated per test run (generation is slow, and any key will do for these tests).
    static let rsaKey: Result<_RSA.Signing.PrivateKey, any Error> = Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }

    var root: Certificate
    var intermediate: Certificate
    var leaf: Certificate
    var leafKey: Certificate.PrivateKey

    /// Creates a hierarchy whose three certificates are valid over `validity`.
    ///
    /// - Parameters:
    ///   - rsa: RSA keys (like Apple's receipt chain) when true, P-256 otherwise.
    ///   - rootName: the root's common name, so tests can forge an impostor root with the same name.
    ///   - markLeaf: whether the leaf carries Apple's receipt-signing marker extension.
    static func make(
        rsa: Bool,
        markLeaf: Bool = true,
        validity: ClosedRange<Date> = Date(
            timeIntervalSince1970: 1_600_000_000
        )...Date(timeIntervalSince1970: 2_000_000_000),
        rootName: String = "Receipt Test Root"
    ) throws -> ReceiptTestPKI {
        func newKey() throws -> Certificate.PrivateKey {
            rsa ? Certificate.PrivateKey(try rsaKey.get()) : Certificate.PrivateKey(P256.Signing.PrivateKey())
        }
        let algorithm: Certificate.SignatureAlgorithm = rsa ? .sha256WithRSAEncryption : .ecdsaWithSHA256
        let rootKey = try newKey()
        let intermediateKey = try newKey()
        let leafKey = try newKey()
        let rootDN = try DistinguishedName {
            CommonName(rootName)
            OrganizationName("Storekeeper Tests")
        }
        let intermediateDN = try DistinguishedName {
            CommonName("Receipt Test Intermediate")
            OrganizationName("Storekeeper Tests")
        }
        let leafDN = try DistinguishedName {
            CommonName("Receipt Test Signing")
            OrganizationName("Storekeeper Tests")
        }
        let root = try certificate(
            subject: rootDN,
            key: rootKey.publicKey,
            issuer: rootDN,
            issuerKey: rootKey,
            isCA: true,
            algorithm: rsa ? .sha1WithRSAEncryption : algorithm,
            validity: validity
        )
        let intermediate = try certificate(
            subject: intermediateDN,
            key: intermediateKey.publicKey,
            issuer: rootDN,
            issuerKey: rootKey,
            isCA: true,
            algorithm: algorithm,
            validity: validity
        )
        let leaf = try certificate(
            subject: leafDN,
            key: leafKey.publicKey,
            issuer: intermediateDN,
            issuerKey: intermediateKey,
            isCA: false,
            algorithm: algorithm,
            validity: validity,
            receiptSigner: markLeaf
        )
        return ReceiptTestPKI(root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey)
    }

    static func certificate(
        subject: DistinguishedName,
        key: Certificate.PublicKey,
        issuer: DistinguishedName,
        issuerKey: Certificate.PrivateKey,
        isCA: Bool,
        algorithm: Certificate.SignatureAlgorithm,
        validity: ClosedRange<Date>,
        receiptSigner: Bool = false
    ) throws -> Certificate {
        var extensions = try Certificate.Extensions {
            Critical(
                isCA
                    ? BasicConstraints.isCertificateAuthority(maxPathLength: nil)
                    : BasicConstraints.notCertificateAuthority
            )
            Critical(isCA ? KeyUsage(keyCertSign: true, cRLSign: true) : KeyUsage(digitalSignature: true))
        }
        if receiptSigner {
            // Apple's "Mac App Store Receipt Signing" marker: an extension whose value is NULL.
            try extensions.append(
                Certificate.Extension(
                    oid: AppReceiptSignatureVerifier.appleReceiptSigningExtension,
                    critical: false,
                    value: [0x05, 0x00]
                )
            )
        }
        return try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key,
            notValidBefore: validity.lowerBound,
            notValidAfter: validity.upperBound,
            issuer: issuer,
            subject: subject,
            signatureAlgorithm: algorithm,
            extensions: extensions,
            issuerPrivateKey: issuerKey
        )
    }
}

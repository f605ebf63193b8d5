import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Checks that an app receipt was signed by a certificate chaining to a trusted root, then parses it.
///
/// Apple signs receipts with RSA (SHA-1 or SHA-256) under Apple Inc. Root, which is built in
/// (``AppleRootCertificates/appleIncRoot()``, fingerprint-checked) and used by ``apple(bundleId:)``; tests and
/// simulators supply their own roots. A genuine receipt of another app is refused when ``bundleId`` is set. The signer's chain is built from the certificates embedded in the
/// SignedData and validated (RFC 5280: validity, CA constraints, signatures) at the receipt's creation date,
/// so receipts keep verifying after Apple's signing certificate expires. The signing certificate must also
/// carry ``requiredSignerExtensions`` (by default Apple's receipt-signing marker), because Apple's root also
/// vouches for every developer's own certificates.
public struct AppReceiptSignatureVerifier: Sendable {
    /// Apple's marker extension on receipt-signing certificates ("Mac App Store Receipt Signing",
    /// 1.2.840.113635.100.6.11.1).
    public static let appleReceiptSigningExtension: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

    /// The only certificates a signer's chain may end at.
    public var trustedRoots: [Certificate]
    /// Extensions the signing certificate must carry; empty to accept any signer under the roots (e.g. to
    /// check an Xcode receipt against its own StoreKit certificate).
    public var requiredSignerExtensions: [ASN1ObjectIdentifier]
    /// Decodes the receipt (and enforces its size limit) before the signature is checked.
    public var parser: AppReceiptParser
    /// The app's bundle id; a receipt naming another is refused. `nil` skips the check (inspection only).
    public var bundleId: String?

    public init(
        trustedRoots: [Certificate],
        bundleId: String? = nil,
        requiredSignerExtensions: [ASN1ObjectIdentifier] = [AppReceiptSignatureVerifier.appleReceiptSigningExtension],
        parser: AppReceiptParser = AppReceiptParser()
    ) {
        self.trustedRoots = trustedRoots
        self.bundleId = bundleId
        self.requiredSignerExtensions = requiredSignerExtensions
        self.parser = parser
    }

    /// A verifier pinned to Apple Inc. Root, for the app with `bundleId`.
    public static func apple(bundleId: String) throws -> AppReceiptSignatureVerifier {
        AppReceiptSignatureVerifier(trustedRoots: [try AppleRootCertificates.appleIncRoot()], bundleId: bundleId)
    }

    /// Creates a verifier trusting DER-encoded root certificates (e.g. `AppleIncRootCertificate.cer`).
    public init(
        trustedRootsDER: [some DataProtocol],
        requiredSignerExtensions: [ASN1ObjectIdentifier] = [AppReceiptSignatureVerifier.appleReceiptSigningExtension],
        parser: AppReceiptParser = AppReceiptParser()
    ) throws {
        self.init(
            trustedRoots: try trustedRootsDER.map { try Certificate(derEncoded: Array($0)) },
            requiredSignerExtensions: requiredSignerExtensions,
            parser: parser
        )
    }

    /// Verifies and parses a base64-encoded receipt.
    ///
    /// - Parameter validationTime: when the chain must be valid; defaults to the receipt's creation date,
    ///   or now when the receipt has none.
    public func verify(
        base64Encoded text: String,
        validationTime: Date? = nil
    ) async throws(AppReceiptError)
        -> AppReceipt
    {
        try await verify(bytes: parser.decodeBase64(text), validationTime: validationTime)
    }

    /// Verifies and parses the raw bytes of a receipt.
    public func verify(
        _ bytes: some DataProtocol,
        validationTime: Date? = nil
    ) async throws(AppReceiptError)
        -> AppReceipt
    {
        try parser.checkSize(bytes.count)  // before copying the input
        return try await verify(bytes: Array(bytes), validationTime: validationTime)
    }

    private func verify(bytes: [UInt8], validationTime: Date?) async throws(AppReceiptError) -> AppReceipt {
        let (signedData, receipt) = try parser.parseSignedReceipt(bytes)
        // The parser only succeeds with attached content.
        let content = signedData.content ?? []

        guard signedData.signerInfos.count == 1 else {
            throw .invalidSignature(reason: "expected exactly one signer, found \(signedData.signerInfos.count)")
        }
        // Chain building searches every path through the embedded certificates, which grows factorially with
        // their number; Apple embeds three (leaf, intermediate, root).
        guard signedData.certificates.count <= Self.maximumEmbeddedCertificates else {
            throw .invalidSignature(
                reason:
                    "\(signedData.certificates.count) embedded certificates (limit \(Self.maximumEmbeddedCertificates))"
            )
        }
        let signer: PKCS7SignerInfo
        let certificates: [Certificate]
        do {
            signer = try PKCS7SignerInfo(berEncoded: signedData.signerInfos[0])
            certificates = try signedData.certificates.map { try Certificate(derEncoded: Array($0.encodedBytes)) }
        } catch {
            throw .invalidSignature(reason: "unreadable signer info or certificate: \(error)")
        }
        guard let signerCertificate = certificates.first(where: { Self.identifies(signer.signerIdentifier, $0) }) else {
            throw .invalidSignature(reason: "the signer's certificate is not embedded in the receipt")
        }

        let algorithm = try Self.signatureAlgorithm(signer)
        let signedBytes = try Self.signedBytes(signer, content: content, algorithm: algorithm)
        guard
            signerCertificate.publicKey.isValidSignature(
                signer.signature,
                for: signedBytes,
                signatureAlgorithm: algorithm
            )
        else {
            throw .invalidSignature(reason: "the signature does not match the receipt content")
        }

        let time = validationTime ?? receipt.creationDate ?? Date()
        var verifier = Verifier(rootCertificates: CertificateStore(trustedRoots)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            ReceiptSignerPolicy(requiredSignerExtensions: requiredSignerExtensions)
        }
        let result = await verifier.validate(leaf: signerCertificate, intermediates: CertificateStore(certificates))
        switch result {
        case .validCertificate:
            if let bundleId, receipt.bundleId != bundleId {
                throw .wrongApp(reason: "receipt bundle id \(receipt.bundleId ?? "(none)") is not \(bundleId)")
            }
            return receipt
        case .couldNotValidate(let failures):
            let reasons = failures.map { String(describing: $0.policyFailureReason) }
            throw .untrustedCertificateChain(
                reason: reasons.isEmpty
                    ? "no chain from \(signerCertificate.subject) to a trusted root at \(time)"
                    : reasons.joined(separator: "; ")
            )
        }
    }

    /// The most certificates a receipt may embed.
    static let maximumEmbeddedCertificates = 5

    private static func identifies(_ identifier: PKCS7SignerInfo.SignerIdentifier, _ certificate: Certificate) -> Bool {
        switch identifier {
        case .issuerAndSerialNumber(let issuer, let serialNumber):
            return certificate.issuer == issuer && certificate.serialNumber == serialNumber
        case .subjectKeyIdentifier(let keyIdentifier):
            return (try? certificate.extensions.subjectKeyIdentifier)?.keyIdentifier == keyIdentifier
        }
    }

    // MARK: Algorithms

    private static let sha1: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    private static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    private static let sha384: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 2]
    private static let sha512: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 3]
    private static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]
    private static let ecPublicKey: ASN1ObjectIdentifier = [1, 2, 840, 10045, 2, 1]

    /// Signature algorithms by their own OID, with the digest each implies.
    private static let combinedAlgorithms: [ASN1ObjectIdentifier: (Certificate.SignatureAlgorithm, ASN1ObjectIdentifier)] = [
        [1, 2, 840, 113549, 1, 1, 5]: (.sha1WithRSAEncryption, sha1),
        [1, 2, 840, 113549, 1, 1, 11]: (.sha256WithRSAEncryption, sha256),
        [1, 2, 840, 113549, 1, 1, 12]: (.sha384WithRSAEncryption, sha384),
        [1, 2, 840, 113549, 1, 1, 13]: (.sha512WithRSAEncryption, sha512),
        [1, 2, 840, 10045, 4, 3, 2]: (.ecdsaWithSHA256, sha256),
        [1, 2, 840, 10045, 4, 3, 3]: (.ecdsaWithSHA384, sha384),
        [1, 2, 840, 10045, 4, 3, 4]: (.ecdsaWithSHA512, sha512),
    ]

    /// Maps the signer's (digest, signature) OIDs to one algorithm. PKCS#7 signers, Apple's included, often
    /// name only the key type (`rsaEncryption`) and leave the hash to `digestAlgorithm`.
    private static func signatureAlgorithm(
        _ signer: PKCS7SignerInfo
    ) throws(AppReceiptError)
        -> Certificate.SignatureAlgorithm
    {
        if let (algorithm, digest) = combinedAlgorithms[signer.signatureAlgorithm] {
            guard digest == signer.digestAlgorithm else {
                throw .invalidSignature(
                    reason: "digest \(signer.digestAlgorithm) does not match signature algorithm \(algorithm)"
                )
            }
            return algorithm
        }
        let byDigest: [ASN1ObjectIdentifier: Certificate.SignatureAlgorithm]
        switch signer.signatureAlgorithm {
        case rsaEncryption:
            byDigest = [
                sha1: .sha1WithRSAEncryption, sha256: .sha256WithRSAEncryption,
                sha384: .sha384WithRSAEncryption, sha512: .sha512WithRSAEncryption,
            ]
        case ecPublicKey:
            byDigest = [sha256: .ecdsaWithSHA256, sha384: .ecdsaWithSHA384, sha512: .ecdsaWithSHA512]
        default:
            byDigest = [:]
        }
        guard let algorithm = byDigest[signer.digestAlgorithm] else {
            throw .invalidSignature(
                reason: "unsupported algorithm \(signer.signatureAlgorithm) with digest \(signer.digestAlgorithm)"
            )
        }
        return algorithm
    }

    // MARK: Signed attributes

    private static let contentTypeAttribute: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 3]
    private static let messageDigestAttribute: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 4]

    /// The bytes the signature covers: the content itself, or — when signed attributes are present — their DER
    /// encoding as a SET, after checking that they bind the content type and the content's digest (RFC 5652 §5.4).
    private static func signedBytes(
        _ signer: PKCS7SignerInfo,
        content: ArraySlice<UInt8>,
        algorithm: Certificate.SignatureAlgorithm
    ) throws(AppReceiptError) -> [UInt8] {
        guard let attributesNode = signer.signedAttributes else {
            return Array(content)
        }
        var contentType: ASN1ObjectIdentifier?
        var messageDigest: ArraySlice<UInt8>?
        do {
            guard case .constructed(let attributes) = attributesNode.content else {
                throw ASN1Error.invalidASN1Object(reason: "signed attributes are primitive")
            }
            for attribute in attributes {
                try BER.sequence(attribute, identifier: .sequence) { nodes in
                    let type = try ASN1ObjectIdentifier(berEncoded: &nodes)
                    guard let values = nodes.next(), values.identifier == .set,
                        case .constructed(let children) = values.content
                    else {
                        throw ASN1Error.invalidASN1Object(reason: "attribute \(type) has no value set")
                    }
                    guard type == contentTypeAttribute || type == messageDigestAttribute else { return }
                    // RFC 5652 §11: each of these attributes appears once, with exactly one value.
                    let alreadySeen = type == contentTypeAttribute ? contentType != nil : messageDigest != nil
                    var iterator = children.makeIterator()
                    guard !alreadySeen, let value = iterator.next(), iterator.next() == nil else {
                        throw ASN1Error.invalidASN1Object(reason: "attribute \(type) must appear once with one value")
                    }
                    if type == contentTypeAttribute {
                        contentType = try ASN1ObjectIdentifier(berEncoded: value)
                    } else {
                        messageDigest = try ASN1OctetString(berEncoded: value).bytes
                    }
                }
            }
        } catch {
            throw .invalidSignature(reason: "unreadable signed attributes: \(error)")
        }
        guard contentType == PKCS7SignedData.dataOID else {
            throw .invalidSignature(reason: "signed content-type attribute is missing or not data")
        }
        guard let messageDigest, Array(messageDigest) == digest(content, for: algorithm) else {
            throw .invalidSignature(reason: "signed message-digest attribute is missing or does not match the content")
        }
        // The signature covers the attributes re-tagged as a universal SET. Only a definite-length (DER)
        // encoding can be re-tagged in place; a signer emitting indefinite lengths here would be non-conformant.
        var bytes = Array(attributesNode.encodedBytes)
        guard bytes.count >= 2, bytes[0] == 0xA0, bytes[1] != 0x80 else {
            throw .invalidSignature(reason: "signed attributes are not DER-encoded")
        }
        bytes[0] = 0x31
        return bytes
    }

    private static func digest(_ content: ArraySlice<UInt8>, for algorithm: Certificate.SignatureAlgorithm) -> [UInt8] {
        switch algorithm {
        case .sha1WithRSAEncryption: return Array(Insecure.SHA1.hash(data: content))
        case .sha384WithRSAEncryption, .ecdsaWithSHA384: return Array(SHA384.hash(data: content))
        case .sha512WithRSAEncryption, .ecdsaWithSHA512: return Array(SHA512.hash(data: content))
        default: return Array(SHA256.hash(data: content))
        }
    }
}

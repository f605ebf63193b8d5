import Crypto
import Foundation
import SwiftASN1
import X509

/// The root certificates a verifier pins: signed data must chain to one of these, never to the root it carries.
public struct TrustedRoots: Sendable {
    /// The pinned certificates.
    public let certificates: [Certificate]
    /// Whether the set is exactly Apple's built-in roots (the only set a production deployment accepts).
    public let isAppleOnly: Bool

    /// Apple Root CA - G3 alone.
    public static func apple() throws -> TrustedRoots {
        TrustedRoots(certificates: [try AppleRootCertificates.appleRootCAG3()], isAppleOnly: true)
    }

    /// Apple's root plus additional roots (a simulator's, a test CA). Never valid for a production deployment.
    public static func apple(adding extra: [Certificate]) throws -> TrustedRoots {
        if extra.isEmpty { return try apple() }
        return TrustedRoots(certificates: [try AppleRootCertificates.appleRootCAG3()] + extra, isAppleOnly: false)
    }

    /// Only the given roots (Apple's root is not included unless passed).
    public static func only(_ roots: [Certificate]) throws -> TrustedRoots {
        let apple = try AppleRootCertificates.appleRootCAG3()
        return TrustedRoots(certificates: roots, isAppleOnly: !roots.isEmpty && roots.allSatisfy { $0 == apple })
    }

    private init(certificates: [Certificate], isAppleOnly: Bool) {
        self.certificates = certificates
        self.isAppleOnly = isAppleOnly
    }

    /// Reads certificates from PEM (one or more blocks) or a single DER certificate.
    public static func loadCertificates(from bytes: [UInt8]) throws -> [Certificate] {
        if let text = String(bytes: bytes, encoding: .utf8), text.contains("-----BEGIN") {
            let documents = try PEMDocument.parseMultiple(pemString: text)
            return try documents.filter { $0.discriminator == "CERTIFICATE" }.map {
                try Certificate(derEncoded: $0.derBytes)
            }
        }
        return [try Certificate(derEncoded: bytes)]
    }

    /// Reads certificates from a PEM or DER file.
    public static func loadCertificates(fromFile path: String) throws -> [Certificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SignedDataVerificationError.invalidCertificate("cannot read root certificate file \(path)")
        }
        let certificates = try loadCertificates(from: Array(data))
        if certificates.isEmpty {
            throw SignedDataVerificationError.invalidCertificate("no certificate in \(path)")
        }
        return certificates
    }
}

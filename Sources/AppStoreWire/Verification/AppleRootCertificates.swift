import Crypto
import Foundation
import SwiftASN1
import X509

/// Apple's root certificates that Storekeeper pins by default.
public enum AppleRootCertificates {
    /// SHA-256 fingerprint of Apple Root CA - G3, as Apple publishes it.
    public static let appleRootCAG3SHA256Fingerprint =
        "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179"

    /// Apple Root CA - G3 (P-384), the root of every App Store signed payload's chain.
    ///
    /// Built in and checked against appleRootCAG3SHA256Fingerprint on first use, so a corrupted copy can
    /// never become a trust anchor.
    public static func appleRootCAG3() throws -> Certificate { try appleRootCAG3Result.get() }

    private static let appleRootCAG3Result: Result<Certificate, any Error> = Result {
        let document = try PEMDocument(pemString: appleRootCAG3PEM)
        let fingerprint = SHA256.hash(data: document.derBytes).map { String(format: "%02X", $0) }.joined()
        guard fingerprint == appleRootCAG3SHA256Fingerprint else {
            throw SignedDataVerificationError.invalidCertificate(
                "built-in Apple Root CA - G3 does not match its published fingerprint")
        }
        return try Certificate(derEncoded: document.derBytes)
    }

    // Public certificate, copied from Apple PKI; its fingerprint is checked above.
    static let appleRootCAG3PEM = """
-----BEGIN CERTIFICATE-----
MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwS
QXBwbGUgUm9vdCBDQSAtIEczMSYwJAYDVQQLDB1BcHBsZSBDZXJ0aWZpY2F0aW9u
IEF1dGhvcml0eTETMBEGA1UECgwKQXBwbGUgSW5jLjELMAkGA1UEBhMCVVMwHhcN
MTQwNDMwMTgxOTA2WhcNMzkwNDMwMTgxOTA2WjBnMRswGQYDVQQDDBJBcHBsZSBS
b290IENBIC0gRzMxJjAkBgNVBAsMHUFwcGxlIENlcnRpZmljYXRpb24gQXV0aG9y
aXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzB2MBAGByqGSM49
AgEGBSuBBAAiA2IABJjpLz1AcqTtkyJygRMc3RCV8cWjTnHcFBbZDuWmBSp3ZHtf
TjjTuxxEtX/1H7YyYl3J6YRbTzBPEVoA/VhYDKX1DyxNB0cTddqXl5dvMVztK517
IDvYuVTZXpmkOlEKMaNCMEAwHQYDVR0OBBYEFLuw3qFYM4iapIqZ3r6966/ayySr
MA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2gA
MGUCMQCD6cHEFl4aXTQY2e3v9GwOAEZLuN+yRhHFD/3meoyhpmvOwgPUnPWTxnS4
at+qIxUCMG1mihDK1A3UT82NQz60imOlM27jbdoXt2QfyFMm+YhidDkLF1vLUagM
6BgD56KyKA==
-----END CERTIFICATE-----
"""
}

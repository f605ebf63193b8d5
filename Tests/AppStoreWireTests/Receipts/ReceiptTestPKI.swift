import AppStoreWire
import Crypto
import Foundation
import X509

/// A throwaway certificate hierarchy (root → intermediate → leaf) for signing test receipts, shaped like
/// Apple's receipt chain.
struct ReceiptTestPKI {
    /// A 2048-bit RSA key generated for these tests only (the test target has no RSA key generator: it does
    /// not depend on _CryptoExtras). It protects nothing.
    static let rsaKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvwIBADANBgkqhkiG9w0BAQEFAASCBKkwggSlAgEAAoIBAQDkkcAO94IbxiYG
        uD0Zbs8ue6hq+RXVJm2bjBqO8S4nyaatUnghkJVd/PzzaMGr2c/E/YzAiA9QNeV7
        bcCpd6ZMgwpmFAETHWXzeNtXZUpEUIaO84lVjKyXDm7o4iO3o+VaT/c7ZoVmJSAx
        2iltRMI4C4MrzKmNerqbuaWbhRduNh2wRhautjFmINxAFXA/5VTdXDF9pf/oosYT
        6NGe9UwCdKNPOrBDDMTjTWy8pZrdKJd+MAquMsc3XcVN8b62EvNDWsJWKIGfmk5s
        ttBCOvrA/ejVea89oXKxrUEpwq1WCJ1smjRZrItw9bf6kFZExIG0EsEmjHyRJfhu
        EKbgErSjAgMBAAECggEAOAPUGpbjpuTXmtv59UqnsY+ShazHgfYp9G3QcGmA0zVj
        CKTmVet1/5OpdgmdNP1rIq60mNZ/UjvzIl2SUrXE5olSuhN68/FHc/SRZIipO7a0
        U0IxzOptvZNG8QHCmRWsdoaUY1VLqe29Rxpc/q9UHaIMomZEwyxpoRJNGKD0Tgi0
        bQQ1fgo4go0tv0gGZhjAy1YafbcPwyMS6u98KxiC1FaVSqCpoLqxPpbYkZSIB8Aj
        doO3YXSMssFctXqbVGewBfcwE9ECcQsxKAArJa3iyvLiay1SJBwqGVRKd7pKVvyr
        3EdPJ2R8nQXM7fZZu5TZJyC3yEEUcj95QDo+JI3fwQKBgQD9AMLD9ErKNXVs71Cm
        NZKDnsmrq46Qy9aPrYPYXKY8j9asf93kr3ZUYTsF0vyY9By1jADlGBtJ6pbfm7ZV
        MwYB/S69F+Jw9gBJ5C0b9NznrI+Jx2wtnuIBO5FuGlByUDYVb5P6jx7qBhOiLCaG
        RvK5bvvnfBwagXc+KwPh/uf0gwKBgQDnRuTIkB8TyKOm1yfvs+odQdduSARhCPS6
        qd/tYAI8BCbO7Tu7sd35pQ6bH3QYbY//3peM6ufQEUZbG20MyxBQlI7Hfp51v45I
        gtepJa2iug+TKMVkZYl8TuBDRbD3X0oDnSWqvcqpaS/ekJCMtou/4t+vnlfjpFlZ
        X0EjtI2FYQKBgQDQ6KbqLTbwX1IV4Eok5EmV2zDFSwSOdXI281zR9Dbj/RWTHIY5
        xdSceijFd2FSXwextOgsQ0qNL2LjQu08zsPgMpI8W5OEGO1GFl5VHkymFCv15bBi
        vzX5NJmyY5IXwjnWW2rCUxmAvgHKQFCTQdQ83/KrQyTlkg/HSreLDfO0RwKBgQCS
        /Oei4JYfyMDZ5JypJ7t/ZL06heLimQKRMC31e7Nv2WOg1/3CyMS/STwDMvZiICAJ
        CrtfAFzcTF5ewQuJufVggUpNWBf11gzj4OSXyC6W4ZHMgXkS2cWLj8XQe5aBYbp0
        mYe7AGyxRvz5gv+brtka12I7B3PsZiOzPWr0+meHgQKBgQCf/8nIR09+Oay4GKBU
        65vUV4Vz0mgJT6RHPnm7CSvYfvsYFvpHA2mPaQlIY2KaNu3FvRA02xE5UgTbWQFt
        TPLxVL1Vs/ltxjl1b0HTHM1bwEmgAbrJHFIdcFBgGYvUzXTwP/X9CyT3Y/RckZbm
        wUdHfi7cQQtrdAP3J5oLvIabRA==
        -----END PRIVATE KEY-----
        """

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
            timeIntervalSince1970: 1_600_000_000)...Date(timeIntervalSince1970: 2_000_000_000),
        rootName: String = "Receipt Test Root"
    ) throws -> ReceiptTestPKI {
        func newKey() throws -> Certificate.PrivateKey {
            rsa ? try Certificate.PrivateKey(pemEncoded: rsaKeyPEM) : Certificate.PrivateKey(P256.Signing.PrivateKey())
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
            subject: rootDN, key: rootKey.publicKey, issuer: rootDN, issuerKey: rootKey,
            isCA: true, algorithm: rsa ? .sha1WithRSAEncryption : algorithm, validity: validity
        )
        let intermediate = try certificate(
            subject: intermediateDN, key: intermediateKey.publicKey, issuer: rootDN, issuerKey: rootKey,
            isCA: true, algorithm: algorithm, validity: validity
        )
        let leaf = try certificate(
            subject: leafDN, key: leafKey.publicKey, issuer: intermediateDN, issuerKey: intermediateKey,
            isCA: false, algorithm: algorithm, validity: validity, receiptSigner: markLeaf
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
                    : BasicConstraints.notCertificateAuthority)
            Critical(isCA ? KeyUsage(keyCertSign: true, cRLSign: true) : KeyUsage(digitalSignature: true))
        }
        if receiptSigner {
            // Apple's "Mac App Store Receipt Signing" marker: an extension whose value is NULL.
            try extensions.append(
                Certificate.Extension(
                    oid: AppReceiptSignatureVerifier.appleReceiptSigningExtension, critical: false, value: [0x05, 0x00])
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

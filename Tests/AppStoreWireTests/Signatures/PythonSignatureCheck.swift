import Foundation
import StorekeeperTestSupport

/// Checks ECDSA signatures with Python's `cryptography` package, an implementation independent of
/// swift-crypto, by running `python3 -c <script>` (CI installs the package with pip).
enum PythonSignatureCheck {
    /// The exit status and output of one check: 0 valid, 1 invalid signature, 2 unexpected JWS header or
    /// claims, 3 malformed input.
    struct Outcome {
        var status: Int32
        var output: String
    }

    /// argv: `der KEY_PEM MESSAGE_B64 SIGNATURE_B64` or `jws KEY_PEM TOKEN HEADER_JSON CLAIMS_JSON`;
    /// KEY_PEM is a public key, or a private key whose public half is derived here.
    static let script = #"""
        import base64, json, sys
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, utils

        def b64url(text):
            if any(c in text for c in "+/="):
                print("not base64url without padding: " + text)
                sys.exit(3)
            return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

        mode, pem = sys.argv[1], sys.argv[2].encode()
        if b"PRIVATE KEY" in pem:
            key = serialization.load_pem_private_key(pem, password=None).public_key()
        else:
            key = serialization.load_pem_public_key(pem)
        if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
            print("not a P-256 key")
            sys.exit(3)
        try:
            if mode == "der":
                message = base64.b64decode(sys.argv[3], validate=True)
                signature = base64.b64decode(sys.argv[4], validate=True)
                key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
            elif mode == "jws":
                parts = sys.argv[3].split(".")
                if len(parts) != 3:
                    print("not a compact JWS")
                    sys.exit(3)
                raw = b64url(parts[2])
                if len(raw) != 64:
                    print("signature is not raw R||S")
                    sys.exit(3)
                der = utils.encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
                key.verify(der, (parts[0] + "." + parts[1]).encode("ascii"), ec.ECDSA(hashes.SHA256()))
                header, claims = json.loads(b64url(parts[0])), json.loads(b64url(parts[1]))
                if header != json.loads(sys.argv[4]) or claims != json.loads(sys.argv[5]):
                    print("unexpected header or claims: " + json.dumps(header) + " " + json.dumps(claims))
                    sys.exit(2)
            else:
                sys.exit(3)
        except InvalidSignature:
            print("invalid signature")
            sys.exit(1)
        print("valid")
        """#

    /// Verifies a DER ECDSA P-256 / SHA-256 signature over `message`.
    static func verifyDER(keyPEM: String, message: Data, signatureBase64: String) throws -> Outcome {
        try run(["der", keyPEM, message.base64EncodedString(), signatureBase64])
    }

    /// Verifies an ES256 compact JWS and that its header and claims are exactly the expected ones.
    static func verifyJWS(keyPEM: String, token: String, header: [String: Any], claims: [String: Any]) throws -> Outcome {
        func json(_ object: [String: Any]) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
        return try run(["jws", keyPEM, token, json(header), json(claims)])
    }

    private static func run(_ arguments: [String]) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try ProcessLauncher.run(process)
        // Read before waiting so a chatty child cannot block on a full pipe.
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self))
    }
}

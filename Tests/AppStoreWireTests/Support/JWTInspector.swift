import Crypto
import Foundation

/// Splits a compact JWS and checks its ES256 signature, for asserting on the tokens a client sends.
struct JWTInspector {
    let header: [String: Any]
    let claims: [String: Any]
    let signingInput: Data
    let signature: Data

    init?(_ token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3,
            let headerData = Self.base64URLDecode(parts[0]),
            let claimsData = Self.base64URLDecode(parts[1]),
            let signature = Self.base64URLDecode(parts[2]),
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: claimsData)) as? [String: Any]
        else { return nil }
        self.header = header
        self.claims = claims
        self.signingInput = Data((parts[0] + "." + parts[1]).utf8)
        self.signature = signature
    }

    /// True when the raw R‖S signature verifies with `publicKey`.
    func verifies(with publicKey: P256.Signing.PublicKey) -> Bool {
        guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return publicKey.isValidSignature(ecdsa, for: signingInput)
    }

    func intClaim(_ name: String) -> Int64? {
        (claims[name] as? NSNumber)?.int64Value
    }

    static func base64URLDecode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    /// The token of an `Authorization: Bearer …` header.
    static func bearer(_ header: String?) -> String? {
        guard let header, header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst("Bearer ".count))
    }
}

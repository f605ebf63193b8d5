import Crypto
import Foundation
import WebTokens

extension SignedToken {
    /// The bearer token of the App Store Server API (`bid`: the app's) and of App Store Connect's APIs (no `bid`:
    /// the team's): ES256 with `kid`, `iss`, `iat`, `exp` and `aud` "appstoreconnect-v1".
    static func bearer(keyId: String, issuer: String, bundleId: String?, lifetime: Int, now: Date, key: P256.Signing.PrivateKey) throws -> String {
        struct Claims: Encodable {
            var iss: String
            var iat: Int64
            var exp: Int64
            var aud = AppStoreAPITokenGenerator.audience
            var bid: String?
        }
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        return try sign(
            header: Header(alg: "ES256", kid: keyId, typ: "JWT"),
            claims: Claims(iss: issuer, iat: issuedAt, exp: issuedAt + Int64(lifetime), bid: bundleId),
            with: key
        )
    }

}

import AppStoreWire
import Foundation

/// What a `verify` or `decode` input turned out to be.
enum SignedInput {
    case jws(String, SignedPayloadKind)
    case appReceipt([UInt8])
    case transactionReceipt(String)

    /// Recognises a compact JWS, a base64 PKCS#7 app receipt or a base64 iOS 6-style transaction receipt.
    static func classify(_ text: String, kind: SignedPayloadKind?) throws -> SignedInput {
        if text.split(separator: ".", omittingEmptySubsequences: false).count == 3 {
            return .jws(text, try kind ?? SignedPayloadKind.detect(jws: text))
        }
        guard let bytes = Data(base64Encoded: text, options: .ignoreUnknownCharacters), !bytes.isEmpty else {
            throw CommandFailure("input is neither a compact JWS nor base64 receipt data")
        }
        if bytes.first == 0x30 { return .appReceipt(Array(bytes)) }
        if let plist = String(data: bytes, encoding: .utf8), plist.contains("purchase-info") {
            return .transactionReceipt(text)
        }
        throw CommandFailure("base64 input is neither a PKCS#7 app receipt nor an iOS 6-style transaction receipt")
    }
}

/// The kinds of App Store signed payload.
enum SignedPayloadKind: String, CaseIterable {
    case notification
    case transaction
    case renewalInfo = "renewal-info"
    case appTransaction = "app-transaction"

    /// Guesses the kind from the (unverified) payload's keys.
    static func detect(jws: String) throws -> SignedPayloadKind {
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard let bytes = Base64URL.decode(String(segments[1])),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else {
            throw CommandFailure("malformed: JWS payload is not base64url JSON")
        }
        if object["notificationType"] != nil { return .notification }
        if object["receiptType"] != nil || object["applicationVersion"] != nil { return .appTransaction }
        if object["transactionId"] != nil { return .transaction }
        if object["autoRenewProductId"] != nil || object["autoRenewStatus"] != nil || object["renewalDate"] != nil {
            return .renewalInfo
        }
        throw CommandFailure("cannot tell what kind of payload this is; pass --kind")
    }
}

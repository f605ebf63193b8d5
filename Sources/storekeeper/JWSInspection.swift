import AppStoreWire
import Foundation

/// Turns a JWS into the JSON that `verify` and `decode` print, including a notification's nested payloads.
enum JWSInspection {
    static func verified(
        _ jws: String,
        kind: SignedPayloadKind,
        verifier: SignedDataVerifier
    ) async throws
        -> [String: Any]
    {
        var output: [String: Any] = ["verified": true, "kind": kind.rawValue]
        switch kind {
        case .transaction:
            output["payload"] = try JSONOutput.object(try await verifier.verifyTransaction(jws))
        case .renewalInfo:
            output["payload"] = try JSONOutput.object(try await verifier.verifyRenewalInfo(jws))
        case .appTransaction:
            output["payload"] = try JSONOutput.object(try await verifier.verifyAppTransaction(jws))
        case .notification:
            let notification = try await verifier.verifyNotification(jws)
            output["payload"] = try JSONOutput.object(notification)
            // The nested payloads are separate JWS: verify each on its own.
            if let signed = notification.data?.signedTransactionInfo {
                output["transactionInfo"] = try JSONOutput.object(try await verifier.verifyTransaction(signed))
            }
            if let signed = notification.data?.signedRenewalInfo {
                output["renewalInfo"] = try JSONOutput.object(try await verifier.verifyRenewalInfo(signed))
            }
            if let signed = notification.appData?.signedAppTransactionInfo {
                output["appTransactionInfo"] = try JSONOutput.object(try await verifier.verifyAppTransaction(signed))
            }
        }
        return output
    }

    static func unverified(_ jws: String, kind: SignedPayloadKind) throws -> [String: Any] {
        var output: [String: Any] = ["verified": false, "kind": kind.rawValue]
        switch kind {
        case .transaction:
            output["payload"] = try JSONOutput.object(decode(jws, as: JWSTransactionDecodedPayload.self))
        case .renewalInfo:
            output["payload"] = try JSONOutput.object(decode(jws, as: JWSRenewalInfoDecodedPayload.self))
        case .appTransaction:
            output["payload"] = try JSONOutput.object(decode(jws, as: AppTransaction.self))
        case .notification:
            let notification = try decode(jws, as: ResponseBodyV2DecodedPayload.self)
            output["payload"] = try JSONOutput.object(notification)
            if let signed = notification.data?.signedTransactionInfo {
                output["transactionInfo"] = try JSONOutput.object(decode(signed, as: JWSTransactionDecodedPayload.self))
            }
            if let signed = notification.data?.signedRenewalInfo {
                output["renewalInfo"] = try JSONOutput.object(decode(signed, as: JWSRenewalInfoDecodedPayload.self))
            }
            if let signed = notification.appData?.signedAppTransactionInfo {
                output["appTransactionInfo"] = try JSONOutput.object(decode(signed, as: AppTransaction.self))
            }
        }
        return output
    }

    private static func decode<P: Decodable>(_ jws: String, as type: P.Type) throws -> P {
        try SignedDataVerifier.decodeUnverified(jws, as: P.self).payload
    }
}

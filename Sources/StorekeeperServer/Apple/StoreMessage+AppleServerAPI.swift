import AppStoreWire
import Foundation
import StorekeeperCore

/// The App Store Server API's answers as ``StoreMessage``: a subscription's status from Get All Subscription
/// Statuses, and a revocation found in a customer's transaction history.
extension StoreMessage {
    /// One `lastTransactions` item of Get All Subscription Statuses (verified by the caller).
    static func appleStatus(
        original: String,
        bundleId: String,
        environment: StoreEnvironment,
        signedDate: Date,
        transaction: JWSTransactionDecodedPayload,
        signedTransaction: String,
        renewal: JWSRenewalInfoDecodedPayload?,
        status: SubscriptionStatus?
    ) -> StoreMessage {
        apple(
            id: "status:\(original):\(Int64(signedDate.timeIntervalSince1970 * 1000))",
            source: .statusCheck,
            kind: .status,
            label: "STATUS",
            bundleId: bundleId,
            environment: environment,
            signedDate: signedDate,
            transaction: transaction,
            signedTransaction: signedTransaction,
            renewal: renewal,
            status: status.map { Int($0.rawValue) }
        )
    }

    /// A revoked transaction found in the history, applied as the notification Apple would have sent: access taken
    /// away (a family member's copy, an organization's assignment) as `REVOKE`, anything else as `REFUND`.
    static func appleRevocationFound(
        _ transaction: VerifiedTransaction,
        payload: JWSTransactionDecodedPayload,
        signed: String
    ) -> StoreMessage {
        let revoked = transaction.revocationDate ?? Date()
        let withdrawn =
            [.familyRevoke, .assignmentRevoke].contains(payload.revocationType)
            || [.familyShared, .assigned].contains(payload.inAppOwnershipType)
        return apple(
            id: "catch-up:\(transaction.transactionId):\(revoked.millis)",
            source: .statusCheck,
            kind: withdrawn ? .revoked : .refunded(.purchase),
            label: withdrawn ? NotificationTypeV2.revoke.rawValue : NotificationTypeV2.refund.rawValue,
            bundleId: transaction.bundleId,
            environment: transaction.environment,
            signedDate: payload.signedDate ?? revoked,
            transaction: payload,
            signedTransaction: signed,
            renewal: nil,
            status: nil
        )
    }
}

/// Why an operator's action (support and the console) was refused by the records it would change.
public enum SupportError: StorekeeperFailure, Hashable {
    case grantEndsInPast
    case entitlementNotActive(String, user: UserID)
    case notPending(transactionId: String)
    case parkedWithoutDetails(transactionId: String)
    case alreadyDelivered(transactionId: String)
    case notRetryable(notificationId: String)

    public var apiError: StorekeeperError {
        switch self {
        case .grantEndsInPast: .invalidInput("invalid_until", "a grant must end in the future")
        case .entitlementNotActive(let entitlement, let user):
            StorekeeperError(.notFound, code: "entitlement_not_active", message: "\(entitlement) is not active for \(user.rawValue)")
        case .notPending(let id): StorekeeperError(.conflict, code: "not_pending", message: "transaction \(id) is no longer pending")
        case .parkedWithoutDetails(let id):
            StorekeeperError(
                .conflict,
                code: "missing_details",
                message: "transaction \(id) was parked without its details; ask the customer to restore purchases"
            )
        case .alreadyDelivered(let id):
            StorekeeperError(.conflict, code: "already_delivered", message: "transaction \(id) is delivered or bound to another user already")
        case .notRetryable(let id): StorekeeperError(.conflict, code: "not_retryable", message: "notification \(id) is not pending or dead")
        }
    }
}

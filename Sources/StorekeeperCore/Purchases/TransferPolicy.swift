/// What happens when a user submits a transaction already bound to another user.
public enum TransferPolicy: String, Sendable, Hashable, Codable {
    /// Refuse, keep it with its owner, and record the attempt (default: replayed receipts, seed 004).
    case refuse
    /// Move the subscription or unlock to the submitter (RevenueCat's "transfer on restore"), audited on both sides.
    /// Consumables already credited stay where they are: their coins may be spent.
    case transfer
}

/// Who a transaction belongs to, decided in the order of `design/ARCHITECTURE.md`.
public struct Attribution: Sendable, Hashable {
    public enum Decision: Sendable, Hashable {
        /// Deliver to (or keep with) this user.
        case owner(UserID)
        /// Deliver to `owner`, but the submitter is someone else and the policy refused them.
        case refused(owner: UserID, submitter: UserID)
        /// Move from `from` to `to` (transfer policy).
        case transfer(from: UserID, to: UserID)
        /// Nobody to deliver to: keep it on the pending-recovery list.
        case unattributed
    }

    /// - Parameters:
    ///   - orderUser: the user of the order found by `appAccountToken` / `applicationUsername`.
    ///   - boundUser: the user already bound to the `originalTransactionId`.
    ///   - submitter: the authenticated caller (or the user an API-key call names).
    public static func decide(
        orderUser: UserID?,
        boundUser: UserID?,
        submitter: UserID?,
        policy: TransferPolicy
    ) -> Decision {
        // An existing binding outranks an order: renewals and upgrades stay with the subscription's owner.
        guard let prior = boundUser ?? orderUser else {
            return submitter.map { .owner($0) } ?? .unattributed
        }
        if let boundUser, let orderUser, boundUser != orderUser, submitter != boundUser {
            // An order of another user for a subscription already bound: the policy decides between them.
            return policy == .transfer ? .transfer(from: boundUser, to: orderUser) : .refused(owner: boundUser, submitter: orderUser)
        }
        guard let submitter, submitter != prior else { return .owner(prior) }
        switch policy {
        case .refuse: return .refused(owner: prior, submitter: submitter)
        case .transfer: return .transfer(from: prior, to: submitter)
        }
    }
}

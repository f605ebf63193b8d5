import Foundation

/// An order as the ledger sees it when it matches a transaction to it.
public struct OrderReference: Sendable, Hashable {
    public var id: String
    public var user: UserID
    public var bundleId: String
    public var productId: String
    /// Lowercased.
    public var appAccountToken: String

    public init(id: String, user: UserID, bundleId: String, productId: String, appAccountToken: String) {
        self.id = id
        self.user = user
        self.bundleId = bundleId
        self.productId = productId
        self.appAccountToken = appAccountToken
    }
}

/// Which order a transaction belongs to (pure; the ledger applies it).
///
/// The order found by the transaction's own `appAccountToken` (signed by Apple) attributes it, and completes when
/// it is for the transaction's product. An order a client *names* (`orderId`, a legacy `applicationUsername`) is
/// only a claim: it counts when the transaction carries no token of its own, is of the order's app and product, and
/// the caller is the order's user; otherwise it is ignored and the attempt audited on the order's owner, so
/// another user's order can never pull a transaction to itself or be completed by it.
public enum OrderMatch {
    public struct Decision: Sendable, Hashable {
        /// The order whose user the transaction is attributed to.
        public var order: OrderReference?
        /// Whether that order is completed by the transaction.
        public var completes: Bool
        /// A named order that did not match, to audit.
        public var ignored: OrderReference?

        public init(order: OrderReference?, completes: Bool, ignored: OrderReference?) {
            self.order = order
            self.completes = completes
            self.ignored = ignored
        }
    }

    public static func decide(
        transaction: VerifiedTransaction,
        tokenOrder: OrderReference?,
        namedOrder: OrderReference?,
        submitter: UserID?
    ) -> Decision {
        var decision = Decision(
            order: tokenOrder,
            completes: tokenOrder.map { $0.productId == transaction.productId } ?? false,
            ignored: nil
        )
        guard let named = namedOrder, named.id != tokenOrder?.id else { return decision }
        let claimable =
            transaction.appAccountToken == nil && named.bundleId == transaction.bundleId
            && named.productId == transaction.productId && (submitter == nil || submitter == named.user)
        if claimable {
            decision.order = named
            decision.completes = true
        } else {
            decision.ignored = named
        }
        return decision
    }

    /// The audit entry for an ignored claim, on the order's owner.
    public static func ignoredEntry(
        _ order: OrderReference,
        transaction: VerifiedTransaction,
        submitter: UserID?,
        at date: Date
    ) -> AuditEntry {
        AuditEntry(
            action: .orderIgnored,
            user: order.user,
            subject: order.id,
            cause: .transaction(transaction.transactionId),
            detail: "named for transaction \(transaction.transactionId) of \(transaction.productId) by "
                + (submitter.map { "\($0.rawValue)" } ?? "an API key")
                + "; an order only takes a transaction of its own product, token and user",
            createdAt: date
        )
    }
}

/// Why a submitted purchase was not delivered, and with it whether the client may finish the store's transaction:
/// `rejected` ones never will be delivered from this submission, `retry` ones are kept (parked or undecided) and
/// the client submits again later.
public enum PurchaseRefusal: StorekeeperFailure, Hashable {
    /// The store's signature or its format was refused; `code` is the verifier's (`invalid_signature`, `malformed`, ...).
    case unverified(code: String, message: String)
    /// For an app this server does not serve (or the request did not say which).
    case wrongApp(String)
    case incompleteTransaction(String)
    case sandboxNotAllowed
    case revoked(transactionId: String)
    /// The product is not in the catalog; the purchase is parked for recovery.
    case unknownProduct(String)
    case ownedByAnotherUser(transactionId: String)
    /// More units than Storekeeper delivers in one transaction; parked for support.
    case quantityOutOfRange(Int, maximum: Int)
    /// The catalog's coins for the product are out of range; parked until the catalog is fixed.
    case catalogOutOfRange(productId: String)
    case receiptTooLarge
    case malformedReceipt
    case invalidReceipt(status: Int, reason: String)
    /// The store did not decide (an outage, a timeout).
    case storeUndecided(String)
    case notInReceipt(transactionId: String)
    /// No user to deliver to; parked for recovery.
    case unattributed
    /// The database did not record it.
    case notRecorded
    /// Google Play has not been paid yet (a pending purchase: cash, a slow payment method); submit it again later,
    /// or let the real-time notification deliver it when it completes.
    case pending(String)
    /// Google Play does not know the purchase token (or not for this product and package).
    case unknownPurchaseToken
    /// The purchase was cancelled before it was paid.
    case cancelled(String)
    /// Google Play did not decide (an outage, a timeout, a quota).
    case playUndecided(String)
    /// The catalog sells the product on another store; parked for support (the catalog names the wrong store).
    case otherStore(productId: String, store: String)

    public var apiError: StorekeeperError {
        switch self {
        case .unverified(let code, let message):
            .rejected(code == "malformed" ? .invalidInput : .refused, code, "signed transaction refused: \(message)")
        case .wrongApp(let why): .rejected("wrong_app", why)
        case .incompleteTransaction(let what): .rejected("incomplete_transaction", what)
        case .sandboxNotAllowed: .rejected("sandbox_not_allowed", "sandbox purchases are not delivered by this server")
        case .revoked(let id): .rejected("revoked", "the store revoked or refunded transaction \(id)")
        case .unknownProduct(let productId):
            StorekeeperError(
                .refused,
                code: "unknown_product",
                message: "product \(productId) is not in the catalog; the purchase is kept for recovery",
                outcome: .retry
            )
        case .ownedByAnotherUser(let id): .rejected(.conflict, "owned_by_another_user", "transaction \(id) belongs to another user of this app")
        case .quantityOutOfRange(let quantity, let maximum):
            StorekeeperError(
                .refused,
                code: "quantity_out_of_range",
                message: "quantity \(quantity) is more than \(maximum); kept for support",
                outcome: .retry
            )
        case .catalogOutOfRange(let productId):
            StorekeeperError(
                .refused,
                code: "invalid_catalog",
                message: "the catalog's coins for \(productId) are out of range; the purchase is kept until the catalog is fixed",
                outcome: .retry
            )
        case .receiptTooLarge: StorekeeperError(.tooLarge, code: "receipt_too_large", message: "receipts are at most 768 KiB")
        case .malformedReceipt:
            .rejected(.invalidInput, "malformed_receipt", "receipt must be the base64 app receipt (PKCS#7) or an iOS 6 transaction receipt")
        case .invalidReceipt(let status, let reason): .rejected("invalid_receipt", "verifyReceipt status \(status): \(reason)")
        case .storeUndecided(let why): .retry("apple_unavailable", why)
        case .notInReceipt(let id):
            StorekeeperError(
                .conflict,
                code: "transaction_not_in_receipt",
                message: "transaction \(id) is not in this receipt yet; refresh the receipt and submit again",
                outcome: .retry
            )
        case .unattributed: StorekeeperError(.refused, code: "unattributed", message: "no user to deliver to", outcome: .retry)
        case .notRecorded: .retry("not_recorded", "this transaction could not be recorded; send it again")
        case .pending(let why):
            StorekeeperError(.refused, code: "purchase_pending", message: "not paid yet: \(why); submit it again once it completes", outcome: .retry)
        case .unknownPurchaseToken:
            .rejected(.refused, "unknown_purchase_token", "Google Play does not know this purchase token for this package and product")
        case .cancelled(let why): .rejected("purchase_cancelled", why)
        case .playUndecided(let why): .retry("google_unavailable", why)
        case .otherStore(let productId, let store):
            StorekeeperError(
                .refused,
                code: "wrong_store",
                message: "the catalog sells \(productId) on \(store); the purchase is kept until the catalog is fixed",
                outcome: .retry
            )
        }
    }
}

/// How a `verifyReceipt` status must be acted on: exactly one of these per status.
public enum VerifyReceiptDisposition: String, Sendable, Hashable, CaseIterable {
    /// The receipt is authentic and decoded; read its contents.
    case valid
    /// Final: the receipt (or the request) is not acceptable; asking again will not change it.
    case invalid
    /// A temporary problem at Apple: try again later.
    case retryLater
    /// A sandbox receipt reached production (21007): resend to the sandbox URL.
    case resendToSandbox
    /// A production receipt reached the sandbox (21008): resend to the production URL.
    case resendToProduction
}

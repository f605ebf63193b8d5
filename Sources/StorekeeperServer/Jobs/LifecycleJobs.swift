/// The lifecycle's long-running parts, for the admin API to run on demand.
struct LifecycleJobs: Sendable {
    var processor: NotificationProcessor?
    var catchUp: NotificationCatchUp?
    var sweep: RenewalSweep?
    var responder: ConsumptionResponder?
    var businessMetrics: BusinessMetrics?
    var reconciler: Reconciler?
    var finisher: TransactionFinisher?
    var tokenSetter: AccountTokenSetter?
    var installs: AppTransactionLookup?
    var guestExpiry: GuestExpiry?
    var dataRetention: DataRetentionJob?
}

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
    var acknowledger: PlayAcknowledger?
    var playCatchUp: PlayVoidedCatchUp?
    var playReconciler: PlayReconciler?
    var analyticsRollup: AnalyticsRollupJob?

    /// The periodic jobs this server has, by their name in the admin API and the run log.
    var periodic: [String: any PeriodicJob] {
        let jobs: [(String, (any PeriodicJob)?)] = [
            ("catch_up", catchUp), ("renewal_sweep", sweep), ("consumption_responder", responder), ("reconciliation", reconciler),
            ("finish_transactions", finisher), ("set_account_tokens", tokenSetter), ("app_transactions", installs),
            ("expire_guests", guestExpiry), ("prune", dataRetention), ("acknowledge_purchases", acknowledger),
            ("play_catch_up", playCatchUp), ("play_reconciliation", playReconciler), ("analytics_rollup", analyticsRollup),
        ]
        return jobs.reduce(into: [:]) { periodic, entry in periodic[entry.0] = entry.1 }
    }
}

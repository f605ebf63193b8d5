import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage
import Synchronization

/// The catalog every request reads, held in memory and reloaded from the database on an interval, so a change made
/// through one process's admin API reaches every process.
public final class CatalogService: Service, Sendable {
    private let store: CatalogStore
    /// The catalog, and the number of the reload that produced it.
    private let current: Mutex<(catalog: Catalog, reload: UInt64)>
    private let nextReload = Atomic<UInt64>(1)
    /// The invalid products reported last, so an unchanged problem is logged once, not at every reload.
    private let lastInvalid = Mutex(Set<String>())
    private let interval: Duration
    private let logger: Logger

    public init(store: CatalogStore, interval: Duration, logger: Logger) {
        self.store = store
        self.current = Mutex((Catalog(), 0))
        // Never a tight loop, whatever the caller passes.
        self.interval = max(interval, .milliseconds(100))
        self.logger = logger
    }

    public var catalog: Catalog { current.withLock { $0.catalog } }

    /// Reads the database's catalog now.
    public func reload() async throws {
        // A slow periodic read that began before a newer one (the seed at startup, an admin change) must not land
        // after it and bring back an older catalog.
        let number = nextReload.wrappingAdd(1, ordering: .relaxed).oldValue
        var loaded = try await store.load()
        // A definition that got into the database without validation (an older release, a hand edit) is left out
        // and reported, never used: a purchase of it is parked until it is fixed.
        let invalid = loaded.products.filter { $0.problem != nil }
        loaded.products.removeAll { $0.problem != nil }
        let reported = Set(invalid.map(\.id))
        let changed = lastInvalid.withLock { last in
            defer { last = reported }
            return last != reported
        }
        if changed, !invalid.isEmpty {
            logger.error(
                "catalog products left out until fixed",
                metadata: ["products": "\(invalid.map(\.id))", "problems": "\(invalid.compactMap(\.problem))"]
            )
        }
        current.withLock { state in
            if number > state.reload { state = (loaded, number) }
        }
    }

    /// Saves a product (validated against the rest of the catalog) through the ledger and applies it here at once.
    public func save(_ product: CatalogProduct, with ledger: Ledger) async throws {
        var candidate = catalog
        candidate.upsert(product)
        try candidate.validate()
        try await ledger.save(product)
        try await reload()
    }

    /// Saves a campaign (validated) through the ledger and applies it here at once.
    public func save(_ campaign: OfferCampaign, with ledger: Ledger) async throws {
        var candidate = catalog
        if let index = candidate.campaigns.firstIndex(where: { $0.id == campaign.id }) {
            candidate.campaigns[index] = campaign
        } else {
            candidate.campaigns.append(campaign)
        }
        try candidate.validate()
        try await ledger.save(campaign)
        try await reload()
    }

    public func run() async throws {
        // The wait between reloads ends at shutdown: a plain sleep held SIGTERM for up to one interval.
        try await untilGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: self.interval)
                do {
                    try await self.reload()
                } catch  where Task.isCancelled || error is CancellationError {
                    return
                } catch {
                    self.logger.warning("catalog reload failed; keeping the previous one", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}

import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperStorage
import Synchronization

/// The catalog every request reads, held in memory and reloaded from the database on an interval, so a change made
/// through one process's admin API reaches every process.
public final class CatalogService: Service, Sendable {
    private let store: CatalogStore
    private let current: Mutex<Catalog>
    private let interval: Duration
    private let logger: Logger

    public init(store: CatalogStore, interval: Duration, logger: Logger) {
        self.store = store
        self.current = Mutex(Catalog())
        self.interval = interval
        self.logger = logger
    }

    public var catalog: Catalog { current.withLock { $0 } }

    /// Reads the database's catalog now.
    public func reload() async throws {
        let loaded = try await store.load()
        current.withLock { $0 = loaded }
    }

    /// Saves a product (validated against the rest of the catalog) and applies it here at once.
    public func save(_ product: CatalogProduct) async throws {
        var candidate = catalog
        candidate.upsert(product)
        try candidate.validate()
        try await store.save(product)
        try await reload()
    }

    /// Saves a campaign (validated) and applies it here at once.
    public func save(_ campaign: OfferCampaign) async throws {
        var candidate = catalog
        if let index = candidate.campaigns.firstIndex(where: { $0.id == campaign.id }) {
            candidate.campaigns[index] = campaign
        } else {
            candidate.campaigns.append(campaign)
        }
        try candidate.validate()
        try await store.save(campaign)
        try await reload()
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully {
            try? await Task.sleep(for: interval)
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
            do {
                try await reload()
            } catch {
                logger.warning("catalog reload failed; keeping the previous one", metadata: ["error": "\(error)"])
            }
        }
    }
}

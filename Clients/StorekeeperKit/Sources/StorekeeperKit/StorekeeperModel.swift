import Foundation
import Observation

/// What SwiftUI binds to: the user's customer info, the paywall's offerings and the purchase in progress, kept
/// current from a ``Storekeeper``.
///
/// Run ``observe()`` from the root view's `.task`: it loads both and then follows every change of customer info
/// (purchases, restores, listener deliveries, renewals seen on the device) until SwiftUI cancels it.
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
@MainActor
@Observable
public final class StorekeeperModel {
    /// What the user has (`nil` until the first answer).
    public private(set) var customerInfo: CustomerInfo?
    /// The paywall (`nil` until loaded).
    public private(set) var offerings: Offerings?
    /// The product being bought now, for a spinner on its button; `nil` when no purchase runs.
    public private(set) var purchaseInProgress: String?
    /// What the last purchase came to.
    public private(set) var lastOutcome: Storekeeper.PurchaseOutcome?
    /// The last failure of a load, a purchase or a restore, for an alert; cleared by the next success.
    public var lastError: StorekeeperError?

    @ObservationIgnored public let storekeeper: Storekeeper

    public init(_ storekeeper: Storekeeper) {
        self.storekeeper = storekeeper
    }

    /// Whether the user has `entitlement` now (as ``CustomerInfo/isEntitled(to:now:)`` says; `false` before the
    /// first answer).
    public func isEntitled(to entitlement: String) -> Bool {
        customerInfo?.isEntitled(to: entitlement) ?? false
    }

    /// Whether a purchase is running (to disable the other buttons).
    public var isPurchasing: Bool { purchaseInProgress != nil }

    /// Loads customer info and offerings, then follows customer info until the task is cancelled.
    public func observe() async {
        let updates = await storekeeper.customerInfoUpdates()
        await refresh()
        for await info in updates {
            customerInfo = info
        }
    }

    /// Reads customer info and offerings again (a pull to refresh).
    public func refresh() async {
        // Each on its own: a paywall still shows when customer info cannot be had, and the other way round.
        var failure: StorekeeperError?
        do { customerInfo = try await storekeeper.customerInfo() } catch {
            failure = StorekeeperError.wrapping(error, doing: "reading customer info")
        }
        do { offerings = try await storekeeper.offerings() } catch {
            failure = failure ?? StorekeeperError.wrapping(error, doing: "reading the offerings")
        }
        lastError = failure
    }

    /// Buys a package; one purchase at a time (a second tap while one runs is ignored and answers `nil`).
    @discardableResult
    public func purchase(_ package: Offering.Package) async -> Storekeeper.PurchaseOutcome? {
        await run(package.product.id) { try await $0.purchase(package) }
    }

    /// Buys a product (a coin pack, a pass) at `offer` if given.
    @discardableResult
    public func purchase(_ product: StoreProduct, offer offerId: String? = nil) async -> Storekeeper.PurchaseOutcome? {
        await run(product.id) { try await $0.purchase(product, offer: offerId) }
    }

    /// "Restore Purchases".
    public func restore() async {
        do {
            customerInfo = try await storekeeper.restore()
            lastError = nil
        } catch {
            lastError = StorekeeperError.wrapping(error, doing: "restoring purchases")
        }
    }

    private func run(
        _ productId: String,
        _ buy: @Sendable (Storekeeper) async throws -> Storekeeper.PurchaseOutcome
    ) async -> Storekeeper.PurchaseOutcome? {
        guard purchaseInProgress == nil else { return nil }
        purchaseInProgress = productId
        defer { purchaseInProgress = nil }
        do {
            let outcome = try await buy(storekeeper)
            lastOutcome = outcome
            lastError = nil
            if case .delivered = outcome {
                customerInfo = await storekeeper.cachedCustomerInfo ?? customerInfo
                // The purchase refreshed customer info already; the stream brings it. A package sold as a variant
                // changes once the trial is used: the paywall is read again.
                offerings = try? await storekeeper.offerings()
            }
            return outcome
        } catch {
            lastError = StorekeeperError.wrapping(error, doing: "buying \(productId)")
            return nil
        }
    }
}

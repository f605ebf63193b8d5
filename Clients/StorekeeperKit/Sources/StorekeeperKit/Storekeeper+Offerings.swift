import Foundation
import StorekeeperAPI

#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif

/// Paywall data: the server's catalog for this user joined with StoreKit's products, and purchases of them.
extension Storekeeper {
    /// What to show on a paywall, in one call: the server's catalog for the signed-in user (kinds, entitlements,
    /// groups, the variant to sell once the user had an introductory offer, the campaign offer their A/B variant
    /// grants) joined with StoreKit's `Product`s (localized price, period, offers, intro eligibility per group).
    ///
    /// The catalog is asked with the tag of the copy held (`If-None-Match`), so an unchanged catalog costs a 304;
    /// when the server cannot be reached, the copy held is used (purchases still need the server). A product the
    /// App Store does not return is left out and named in ``Offerings/unavailable``; a promotional offer StoreKit
    /// does not list is left off its package. Both are logged as warnings (a catalog that disagrees with App Store
    /// Connect).
    public func offerings() async throws -> Offerings {
        let listed = try await currentCatalog()
        let storeKitProducts: [Product]
        do { storeKitProducts = try await store.products(Set(listed.products.map(\.id))) } catch {
            throw StorekeeperError.wrapping(error, doing: "reading the App Store's products")
        }
        let byId = Dictionary(storeKitProducts.map { ($0.id, $0) }) { first, _ in first }
        // StoreKit decides intro eligibility per subscription group: ask once per group.
        var introEligible: [String: Bool] = [:]
        for product in storeKitProducts {
            guard let subscription = product.subscription, introEligible[subscription.subscriptionGroupID] == nil else { continue }
            introEligible[subscription.subscriptionGroupID] = await subscription.isEligibleForIntroOffer
        }
        var products: [StoreProduct] = []
        var unavailable: [String] = []
        for entry in listed.products {
            guard let storeKitProduct = byId[entry.id] else {
                unavailable.append(entry.id)
                continue
            }
            let group = storeKitProduct.subscription?.subscriptionGroupID
            let product = StoreProduct(entry, storeKitProduct: storeKitProduct, introEligible: group.flatMap { introEligible[$0] } ?? false)
            if !product.storeKitTypeMatches {
                log(.warning, "\(entry.id) is \(entry.kind.rawValue) in the server's catalog but not in the App Store's")
            }
            products.append(product)
        }
        if !unavailable.isEmpty { log(.warning, "the App Store does not sell these catalog products here: \(unavailable)") }
        let sold = Dictionary(products.map { ($0.id, $0) }) { first, _ in first }
        var offerings: [Offering] = []
        for offering in listed.offerings {
            var packages: [Offering.Package] = []
            for package in offering.packages {
                guard let product = sold[package.productId] else { continue }
                var offer: Offering.Package.Offer?
                if let granted = package.offer {
                    if let storeKitOffer = product.promotionalOffers.first(where: { $0.id == granted.offerId }) {
                        offer = .init(
                            campaignId: granted.campaignId,
                            variant: granted.variant,
                            offerId: granted.offerId,
                            storeKitOffer: storeKitOffer
                        )
                    } else {
                        log(.warning, "campaign \(granted.campaignId) grants \(granted.offerId), which the App Store does not list on \(product.id)")
                    }
                }
                packages.append(.init(id: package.id, product: product, offer: offer))
            }
            if !packages.isEmpty {
                offerings.append(.init(id: offering.id, introductoryOfferEligible: offering.introductoryOfferEligible, packages: packages))
            }
        }
        return Offerings(products: products, all: offerings, unavailable: unavailable)
    }

    /// Every product on sale that the App Store sells here, joined with the catalog (``offerings()``'s products).
    public func products() async throws -> [StoreProduct] {
        try await offerings().products
    }

    /// Buys a package: its product, at the campaign offer the server grants this user when there is one.
    public func purchase(_ package: Offering.Package) async throws -> PurchaseOutcome {
        try await purchase(package.product.id, offer: package.offer?.offerId)
    }

    /// Buys a product from ``offerings()`` or ``products()``; with `offer`, at that promotional offer (the server
    /// signs it if a campaign grants it to this user).
    public func purchase(_ product: StoreProduct, offer offerId: String? = nil) async throws -> PurchaseOutcome {
        try await purchase(product.id, offer: offerId)
    }

    /// The catalog for this user: the held copy when the server says it is current (304), a new one otherwise,
    /// the held one when the server cannot be reached.
    private func currentCatalog() async throws -> Components.Schemas.ClientCatalog {
        let held = catalog
        let output: Operations.GetCatalog.Output
        do {
            output = try await api.getCatalog(headers: .init(ifNoneMatch: held?.tag))
        } catch {
            let failure = StorekeeperError.wrapping(error, doing: "reading the catalog")
            if failure.code == .network, let held {
                log(.warning, "the catalog from the copy held: \(failure)")
                return held.body
            }
            throw failure
        }
        switch output {
        case .ok(let ok):
            let body = try ok.body.json
            catalog = (ok.headers.eTag, body)
            return body
        case .notModified:
            guard let held else { throw StorekeeperError(.server, status: 304, message: "the server answered 304 to a request without a tag") }
            return held.body
        case .badRequest(let failure): throw StorekeeperError.server(400, try? failure.body.json.code, doing: "reading the catalog")
        case .unauthorized(let failure): throw StorekeeperError.server(401, try? failure.body.json.code, doing: "reading the catalog")
        case .internalServerError(let failure):
            if let held { return heldCatalog(held.body, status: 500) }
            throw StorekeeperError.server(500, try? failure.body.json.code, doing: "reading the catalog")
        case .undocumented(let status, _):
            if status >= 500, let held { return heldCatalog(held.body, status: status) }
            throw StorekeeperError.server(status, doing: "reading the catalog")
        }
    }

    private func heldCatalog(_ body: Components.Schemas.ClientCatalog, status: Int) -> Components.Schemas.ClientCatalog {
        log(.warning, "the catalog from the copy held: the server answered \(status)")
        return body
    }
}

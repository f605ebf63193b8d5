import Foundation
import GooglePlayWire
import StorekeeperCore

/// A purchase's price, from Google's order (`orders.get`): the Play Developer API's one-time purchase resource has
/// none, and a subscription's names only the plan's list price (`recurringPrice`), not what a prorated plan change or
/// an introductory price charged. A lookup that fails leaves the purchase without a price — delivered all the same, and left out of revenue
/// (counted as skipped) — since money reports must never hold back a delivery.
enum PlayOrderPricing {
    /// What an order charged, and the service fee Google took on it (thousandths of the price net of tax: 150, or 300
    /// past a developer's first US$1 million a year), when Google said.
    struct Price: Sendable, Hashable {
        var total: Money
        var feePermille: Int?

        init(total: Money, feePermille: Int? = nil) {
            self.total = total
            self.feePermille = feePermille
        }

        init?(_ order: PlayOrder) {
            guard let total = order.total else { return nil }
            self.total = total
            // (net − revenue) / net, where net is the total less its tax: Google's fee as it took it.
            if let gross = total.milliunits, let revenue = order.developerRevenueInBuyerCurrency?.milliunits {
                let net = gross - (order.tax?.milliunits ?? 0)
                feePermille = net > 0 && revenue >= 0 && revenue <= net ? Int(((net - revenue) * 1000 + net / 2) / net) : nil
            } else {
                feePermille = nil
            }
        }
    }

    /// What the buyer paid for order `orderId`, tax included, and Google's fee; nil when Google did not say.
    static func total(api: PlayDeveloperAPIClient, packageName: String, orderId: String?, metrics: ServerMetrics) async -> Price? {
        guard let orderId, orderId.hasPrefix("GPA.") else { return nil }
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let order = try await api.getOrder(packageName: packageName, orderId: orderId)
            metrics.googleCall(endpoint: "orders.get", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            return Price(order)
        } catch {
            metrics.googleCall(endpoint: "orders.get", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            return nil
        }
    }

    /// Sets the transaction's price, currency and Google's fee from an order (a valid total only).
    static func apply(_ order: Price?, to transaction: inout VerifiedTransaction) {
        guard let order, let price = order.total.milliunits, price >= 0, let currency = order.total.currencyCode, currency.utf8.count == 3
        else { return }
        transaction.commerce.price = price
        transaction.commerce.currency = currency
        transaction.commerce.storeFeePermille = order.feePermille
    }
}

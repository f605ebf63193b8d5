import Foundation
import GooglePlayWire
import StorekeeperCore

/// A purchase's price, from Google's order (`orders.get`): the Play Developer API's one-time purchase resource has
/// none, and a subscription's names only the plan's list price (`recurringPrice`), not what a prorated plan change or
/// an introductory price charged. A lookup that fails leaves the purchase without a price — delivered all the same, and left out of revenue
/// (counted as skipped) — since money reports must never hold back a delivery.
enum PlayOrderPricing {
    /// What the buyer paid for order `orderId`, tax included; nil when Google did not say.
    static func total(api: PlayDeveloperAPIClient, packageName: String, orderId: String?, metrics: ServerMetrics) async -> Money? {
        guard let orderId, orderId.hasPrefix("GPA.") else { return nil }
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let order = try await api.getOrder(packageName: packageName, orderId: orderId)
            metrics.googleCall(endpoint: "orders.get", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            return order.total
        } catch {
            metrics.googleCall(endpoint: "orders.get", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            return nil
        }
    }

    /// Sets the transaction's price and currency from an order's total (a valid one only).
    static func apply(_ total: Money?, to transaction: inout VerifiedTransaction) {
        guard let total, let price = total.milliunits, price >= 0, let currency = total.currencyCode, currency.utf8.count == 3 else { return }
        transaction.commerce.price = price
        transaction.commerce.currency = currency
    }
}

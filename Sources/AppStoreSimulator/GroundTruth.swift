import AppStoreWire
import Foundation

/// What a customer should have at a moment, computed from the simulator's own record of every transaction, so
/// tests can compare Storekeeper's state with the truth.
public struct GroundTruth: Sendable, Hashable {
    /// Products the customer is entitled to at the moment, with when the entitlement ends (`nil`: permanent).
    public var entitlements: [String: Date?]
    /// Units of each consumable bought and not refunded up to the moment.
    public var consumables: [String: Int]
    /// What the customer keeps of each consumable, in hundred-thousandths of a unit (Apple's `revocationPercentage`
    /// scale): a unit not refunded counts 100,000, one refunded in full 0, one refunded 25 % (`REFUND_PRORATED`,
    /// 25,000) 75,000. Three 100-coin units with a 25 % refund of one keep 275 coins: coins × shares / 100,000.
    public var consumableShares: [String: Int]
    /// Every transaction up to the moment (including refunded, revoked and family-shared ones).
    public var transactions: [JWSTransactionDecodedPayload]

    /// Whether the customer holds `productId` at the moment.
    public func isEntitled(to productId: String) -> Bool { entitlements.keys.contains(productId) }
}

extension SimulatedAppStore {
    /// The truth for one Apple account at `date` (now by default).
    public func groundTruth(account accountId: String, at date: Date? = nil) throws -> GroundTruth {
        guard accounts[accountId] != nil else { throw SimulatorError.unknownAccount(accountId) }
        return truth(for: transactionOrder.filter { transactionAccount[$0] == accountId }, at: date ?? now)
    }

    /// The truth for everything bought with one `appAccountToken` (one user of the developer's app).
    public func groundTruth(appAccountToken: UUID, at date: Date? = nil) -> GroundTruth {
        let token = appAccountToken.uuidString.lowercased()
        return truth(for: transactionOrder.filter { transactions[$0]?.appAccountToken == token }, at: date ?? now)
    }

    func truth(for ids: [String], at date: Date) -> GroundTruth {
        let all = ids.compactMap { transactions[$0] }.filter { ($0.purchaseDate ?? .distantFuture) <= date }
        func standing(_ transaction: JWSTransactionDecodedPayload) -> Bool {
            transaction.revocationDate.map { $0 > date } ?? true
        }
        func prorated(_ transaction: JWSTransactionDecodedPayload) -> Bool {
            transaction.revocationDate != nil && transaction.revocationType == .refundProrated && transaction.revocationPercentage != nil
        }
        // A prorated refund of a period keeps its unrefunded share (never less than was used before the refund).
        func keptEnd(_ transaction: JWSTransactionDecodedPayload, start: Date, end: Date) -> Date {
            let share = Double(100_000 - Int(transaction.revocationPercentage ?? 100_000)) / 100_000
            return min(end, max(start.addingTimeInterval(end.timeIntervalSince(start) * share), transaction.revocationDate ?? end))
        }
        var entitlements: [String: Date?] = [:]
        var consumables: [String: Int] = [:]
        var consumableShares: [String: Int] = [:]
        var passEnds: [String: Date] = [:]
        for transaction in all {
            guard let productId = transaction.productId, let product = catalog.product(productId) else { continue }
            switch product.kind {
            case .consumable:
                let units = Int(transaction.quantity ?? 1)
                if standing(transaction) {
                    consumables[productId, default: 0] += units
                    consumableShares[productId, default: 0] += units * 100_000
                } else if prorated(transaction) {
                    let refunded = min(max(Int(transaction.revocationPercentage ?? 100_000), 0), 100_000)
                    consumableShares[productId, default: 0] += units * (100_000 - refunded)
                }
            case .nonConsumable:
                if standing(transaction) { entitlements[productId] = .some(nil) }
            case .nonRenewing:
                // Passes stack: each starts at the later of its purchase and the end of the one before (seed 002).
                guard standing(transaction) || prorated(transaction), let period = product.period, let bought = transaction.purchaseDate
                else { continue }
                let start = max(bought, passEnds[productId] ?? bought)
                passEnds[productId] = prorated(transaction) ? keptEnd(transaction, start: start, end: period.advance(start)) : period.advance(start)
            case .autoRenewable:
                guard standing(transaction) || prorated(transaction), let start = transaction.purchaseDate, var end = transaction.expiresDate
                else {
                    continue
                }
                if prorated(transaction) { end = keptEnd(transaction, start: start, end: end) }
                if transaction.isUpgraded == true,
                    let next = all.first(where: {
                        $0.originalTransactionId == transaction.originalTransactionId
                            && ($0.purchaseDate ?? .distantPast) >= start && $0.transactionId != transaction.transactionId
                    })?.purchaseDate
                {
                    // An upgrade or crossgrade ends the replaced period when the new one starts.
                    end = min(end, next)
                }
                if let grace = graceEnd(after: transaction) { end = max(end, grace) }
                if start <= date, date < end {
                    let current = entitlements[productId] ?? nil
                    entitlements[productId] = .some(max(current ?? end, end))
                }
            }
        }
        for (productId, end) in passEnds where date < end { entitlements[productId] = .some(end) }
        return GroundTruth(entitlements: entitlements, consumables: consumables, consumableShares: consumableShares, transactions: all)
    }

    /// The end of a billing grace period that followed `transaction`, if one did.
    func graceEnd(after transaction: JWSTransactionDecodedPayload) -> Date? {
        guard let originalId = transaction.originalTransactionId, let windows = graceWindows[originalId],
            let expires = transaction.expiresDate
        else { return nil }
        return windows.first { $0.start == expires }?.end
    }
}

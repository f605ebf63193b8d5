import AppStoreWire
import Foundation

/// The subscription analytics as the simulator's own records say they should be, computed day by day from every
/// transaction it signed and every expiry it decided — by a different method from Storekeeper's rollups (each day
/// counted directly, no running sums of changes), so tests can hold the server's charts against it.
public struct SimulatorAnalyticsTruth: Sendable {
    /// Day (`YYYY-MM-DD`) → metric → value. Counts are keyed by the metric's name (`active`, `trials`, `new`,
    /// `reactivation`, `trial_start`, `conversion`, `renewal`, `churn_voluntary`, `churn_involuntary`, `refunds`,
    /// `paid`); money by name and currency (`mrr|USD`, `revenue|EUR`, `refunded|USD`), in milliunits.
    public var days: [String: [String: Int64]] = [:]
    /// Cohort month (`YYYY-MM`) → subscribers, and those subscribed at each whole month of age (index 0 … 24).
    public var cohortSubscribers: [String: Int64] = [:]
    public var cohortActive: [String: [Int64]] = [:]

    public func value(_ key: String, on day: String) -> Int64 { days[day]?[key] ?? 0 }
}

extension SimulatedAppStore {
    /// The truth for the days `[from, to)` (UTC), production purchases only (family members' copies left out).
    public func analyticsTruth(from: Date, to: Date) -> SimulatorAnalyticsTruth {
        var truth = SimulatorAnalyticsTruth()
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let formatter = DateFormatter()
        formatter.calendar = utc
        formatter.timeZone = utc.timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        func day(_ date: Date) -> String { formatter.string(from: date) }
        func add(_ key: String, _ date: Date, _ value: Int64) {
            guard date >= from, date < to else { return }
            truth.days[day(date), default: [:]][key, default: 0] += value
        }
        var byOriginal: [String: [JWSTransactionDecodedPayload]] = [:]
        for id in transactionOrder {
            guard let t = transactions[id], t.type == .autoRenewable, t.environment == environment,
                t.inAppOwnershipType == nil || t.inAppOwnershipType == .purchased, let original = t.originalTransactionId
            else { continue }
            byOriginal[original, default: []].append(t)
        }
        // Midnight after each day in range: a period counts on a day when it is in force at the day's end.
        var ends: [Date] = []
        var cursor = utc.startOfDay(for: from)
        while cursor < to {
            cursor = utc.date(byAdding: .day, value: 1, to: cursor)!
            ends.append(cursor)
        }
        for (original, all) in byOriginal {
            let periods = all.filter { $0.purchaseDate != nil && $0.expiresDate != nil }.sorted { $0.purchaseDate! < $1.purchaseDate! }
            guard !periods.isEmpty else { continue }
            let expiries = expirations.filter { $0.originalTransactionId == original }.sorted { $0.at < $1.at }
            func isTrial(_ t: JWSTransactionDecodedPayload) -> Bool { (t.price ?? 0) == 0 || t.offerDiscountType == .freeTrial }
            var churnedAfter: [Int: (at: Date, involuntary: Bool)] = [:]
            for expiry in expiries {
                // The period the expiry ended: the last that began before it.
                guard let index = periods.lastIndex(where: { $0.purchaseDate! <= expiry.at }), churnedAfter[index] == nil else { continue }
                churnedAfter[index] = (expiry.at, expiry.involuntary)
            }
            let first = periods[0]
            let cohort = String(day(first.purchaseDate!).prefix(7))
            truth.cohortSubscribers[cohort, default: 0] += 1
            var activeByAge = truth.cohortActive[cohort] ?? Array(repeating: 0, count: 25)
            activeByAge[0] += 1
            for (index, period) in periods.enumerated() {
                let start = period.purchaseDate!
                var end = period.expiresDate!
                if let revoked = period.revocationDate { end = min(end, revoked) }
                if index + 1 < periods.count { end = min(end, max(periods[index + 1].purchaseDate!, start)) }
                let trial = isTrial(period)
                let afterChurn = index > 0 && churnedAfter[index - 1] != nil
                if index == 0 { add("new", start, 1) } else if afterChurn { add("reactivation", start, 1) }
                let currency = period.currency ?? ""
                if trial {
                    add("trial_start", start, 1)
                } else {
                    add("paid", start, 1)
                    add("revenue|\(currency)", start, period.price ?? 0)
                    if index > 0, !afterChurn { add(isTrial(periods[index - 1]) ? "conversion" : "renewal", start, 1) }
                    if let revoked = period.revocationDate, period.isUpgraded != true {
                        add("refunds", revoked, 1)
                        let share = period.revocationType == .refundProrated ? Int64(period.revocationPercentage ?? 100_000) : 100_000
                        add("refunded|\(currency)", revoked, (period.price ?? 0) * share / 100_000)
                    }
                }
                // In force at each day's end.
                for midnight in ends where start <= midnight && midnight < end {
                    let key = day(midnight.addingTimeInterval(-1))
                    truth.days[key, default: [:]][trial ? "trials" : "active", default: 0] += 1
                    if !trial {
                        truth.days[key, default: [:]]["mrr|\(currency)", default: 0] += Self.monthlyPrice(
                            period.price ?? 0,
                            start,
                            period.expiresDate!
                        )
                    }
                }
                if let expiry = churnedAfter[index] {
                    add(expiry.involuntary ? "churn_involuntary" : "churn_voluntary", min(end, expiry.at), 1)
                }
                for age in 1...24 {
                    let moment = utc.date(byAdding: .month, value: age, to: first.purchaseDate!)!
                    if start <= moment, moment < end { activeByAge[age] += 1 }
                }
            }
            truth.cohortActive[cohort] = activeByAge
        }
        return truth
    }

    /// A period's price per month: weekly periods 52/12 times theirs, longer ones divided by their months; half up.
    static func monthlyPrice(_ price: Int64, _ start: Date, _ end: Date) -> Int64 {
        let days = end.timeIntervalSince(start) / 86_400
        if days < 25 {
            let weeks = Int64(max(1, (days / 7).rounded()))
            return (price * 104 + 12 * weeks) / (24 * weeks)
        }
        let months = Int64(max(1, (days / 30.436875).rounded()))
        return (price * 2 + months) / (2 * months)
    }
}

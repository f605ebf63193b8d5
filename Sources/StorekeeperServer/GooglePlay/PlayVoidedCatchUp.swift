import Foundation
import GooglePlayWire
import Logging
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Catch-up for Google Play refunds: lists the voided purchases (`voidedpurchases.list`, subscriptions and
/// quantity-based partial refunds included) since the last run, with an hour of overlap, and stores each in the
/// inbox, where the processor takes it back with the same policies as a voided-purchase notification. Pub/Sub keeps
/// a message only seven days and a push endpoint can be down longer; Google's list looks back 30 days, so the job runs
/// at least daily (hourly by default). An entry the inbox has already is stored once; a refund the notification
/// already took back is not taken again.
public struct PlayVoidedCatchUp: PeriodicJob {
    let apps: AppRegistry
    let ledger: Ledger
    let lease: JobLease
    let metrics: ServerMetrics
    let logger: Logger
    let onStored: @Sendable () -> Void

    /// Google keeps voided purchases this long.
    static let window: TimeInterval = 30 * 86_400

    /// Stores the voided purchases of every app selling on Google Play not seen yet; returns how many.
    @discardableResult
    public func runOnce(now: Date = Date()) async throws -> Int {
        var added = 0
        for app in apps.apps {
            guard let play = app.googlePlay else { continue }
            let name = "play-voided:\(play.configuration.packageName)"
            let (acquired, cursor) = try await lease.acquire(name, for: .seconds(600), now: now)
            guard acquired else { continue }
            do {
                added += try await fetch(play, cursor: cursor, now: now)
                try await lease.release(name, cursor: String(now.millis))
            } catch {
                try? await lease.release(name, cursor: nil)
                throw error
            }
        }
        if added > 0 {
            onStored()
            logger.notice("Play catch-up found voided purchases not stored before", metadata: ["count": "\(added)"])
        }
        metrics.jobRun("play_catch_up", items: added)
        return added
    }

    private func fetch(_ play: AppRegistry.PlayApp, cursor: String?, now: Date) async throws -> Int {
        let package = play.configuration.packageName
        let earliest = now.addingTimeInterval(-Self.window + 60)
        let since = cursor.flatMap { Int64($0) }.map { Date(millis: $0).addingTimeInterval(-3_600) } ?? earliest
        let start = max(earliest, min(since, now))
        var added = 0
        var page: String?
        var pages = 0
        repeat {
            let started = DispatchTime.now().uptimeNanoseconds
            let response: VoidedPurchasesListResponse
            do {
                // No end: Google refuses one past its own clock, and ends at its now by default.
                response = try await play.api.listVoidedPurchases(packageName: package, startTime: page == nil ? start : nil, pageToken: page)
                metrics.googleCall(endpoint: "voidedpurchases.list", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            } catch {
                metrics.googleCall(endpoint: "voidedpurchases.list", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                throw error
            }
            for item in response.voidedPurchases ?? [] where try await store(item, package: package) { added += 1 }
            page = response.tokenPagination?.nextPageToken
            pages += 1
        } while page != nil && pages < 1_000
        return added
    }

    /// Stores one entry as Google listed it; whether it was new.
    private func store(_ item: VoidedPurchase, package: String) async throws -> Bool {
        guard let key = item.orderId ?? item.purchaseToken, key.utf8.count <= 1_024, let voided = item.voidedTimeMillis else { return false }
        let body = String(decoding: try PlayJSON.encode(item), as: UTF8.self)
        return try await ledger.store(
            .init(
                id: "play-voided:\(key):\(voided.value)",
                format: "play-voided",
                bundleId: package,
                notificationType: "VOIDED_PURCHASE",
                subtype: item.voidedQuantity == nil ? nil : "QUANTITY",
                originalTransactionId: nil,
                transactionId: item.orderId.flatMap { $0.utf8.count <= 100 ? $0 : nil },
                signedDate: voided.date,
                environment: nil,
                body: body
            ),
            applying: nil
        )
    }
}

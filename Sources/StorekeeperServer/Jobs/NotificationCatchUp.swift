import AppStoreWire
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Notification catch-up: asks Get Notification History for everything since the last run (and for every
/// notification whose delivery failed), and feeds what is missing through the same verified inbox. Apple stops
/// retrying after a few days; a team that was down must not lose its refunds.
public struct NotificationCatchUp: PeriodicJob {
    let apps: AppRegistry
    let intake: NotificationIntake
    let lease: JobLease
    let lookback: TimeInterval
    let metrics: ServerMetrics
    let logger: Logger

    /// One pass over every app and environment; returns how many notifications were new.
    @discardableResult
    public func runOnce(now: Date = Date()) async throws -> Int {
        var added = 0
        for app in apps.apps {
            var seen = Set<String>()
            for environment in app.serverAPI.keys.sorted() {
                guard let client = app.serverAPI[environment], seen.insert(client.baseURL.url.absoluteString).inserted else {
                    continue
                }
                added += try await catchUp(app: app, environment: environment, client: client, now: now)
            }
        }
        metrics.jobRun("catch_up", items: added)
        return added
    }

    private func catchUp(app: AppRegistry.App, environment: String, client: AppStoreServerAPIClient, now: Date) async throws -> Int {
        let name = "catch-up:\(app.configuration.bundleId):\(environment)"
        let (acquired, cursor) = try await lease.acquire(name, for: .seconds(600), now: now)
        guard acquired else { return 0 }
        do {
            let added = try await fetchMissed(app: app, client: client, cursor: cursor, now: now)
            // Saved before returning (and before the process may exit), not in a task left running behind.
            try await lease.release(name, cursor: String(now.millis))
            if added > 0 {
                logger.notice("catch-up found missed notifications", metadata: ["app": "\(app.configuration.name)", "count": "\(added)"])
            }
            return added
        } catch {
            try? await lease.release(name, cursor: nil)
            throw error
        }
    }

    /// Asks for everything signed since the cursor (with an hour of overlap) up to and including `now`, then for
    /// every notification whose delivery failed in Apple's whole window; stores what is new.
    private func fetchMissed(app: AppRegistry.App, client: AppStoreServerAPIClient, cursor: String?, now: Date) async throws -> Int {
        var added = 0
        // Apple keeps 180 days and refuses an older start; a minute of margin for clocks.
        let earliest = now.addingTimeInterval(-180 * 86_400 + 60)
        let since =
            cursor.flatMap { Double($0) }.map { Date(timeIntervalSince1970: $0 / 1000).addingTimeInterval(-3_600) }
            ?? now.addingTimeInterval(-lookback)
        let start = max(earliest, min(since, now))
        // Apple's end date is exclusive: a second past now includes what was signed at now (duplicates are free,
        // the inbox stores each notification once; Apple treats a future end date as now).
        let end = now.addingTimeInterval(1)
        for onlyFailures in [false, true] {
            let request = NotificationHistoryRequest(
                startDate: onlyFailures ? max(earliest, now.addingTimeInterval(-lookback)) : start,
                endDate: end,
                onlyFailures: onlyFailures ? true : nil
            )
            let started = DispatchTime.now().uptimeNanoseconds
            let items: [NotificationHistoryResponseItem]
            do {
                items = try await client.getAllNotificationHistory(request: request)
                metrics.appleCall(endpoint: "notificationHistory", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            } catch {
                metrics.appleCall(endpoint: "notificationHistory", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                throw error
            }
            for item in items {
                guard let signed = item.signedPayload else { continue }
                let body = String(decoding: try JSONSerialization.data(withJSONObject: ["signedPayload": signed]), as: UTF8.self)
                do {
                    if try await intake.storeV2(signed, body: body, app: app, path: "catch_up").isNew { added += 1 }
                } catch let failure as any StorekeeperFailure where failure.apiError.outcome == .rejected {
                    let error = failure.apiError
                    logger.error("notification from history refused", metadata: ["error": "\(error)"])
                }
            }
        }
        return added
    }
}

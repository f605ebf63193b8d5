import AppStoreWire
import Crypto
import Foundation

/// One Analytics Reports request the simulator holds.
struct AnalyticsRequestRecord: Sendable, Hashable {
    var id: String
    var appAppleId: String
    var accessType: AnalyticsReports.AccessType
    /// The simulated day it was made (`YYYY-MM-DD`, Pacific Time).
    var createdDay: String
}

/// App Store Connect's Analytics Reports (reference §12.5) from the simulator's record: report requests per app and
/// access type, the Subscription Event and Subscription State Standard reports, one DAILY instance per processing
/// date (data of the day before, available once that day is over and any report delay has passed), and segments of
/// at most ``analyticsSegmentRows`` rows. An `ONGOING` request covers the days from the one it was made on; a
/// `ONE_TIME_SNAPSHOT` the days before it. The rows are the simulator's Sales and Trends subscription reports of the
/// same day in the Analytics vocabulary, so both describe the same truth (download source: every account came from
/// `App Store search`; plan changes and reactivations are counted as `Renewals`, returns from billing retry as
/// `Recoveries from Billing Issue`).
extension SimulatedAppStore {
    static let analyticsReportNames = [
        ("event", AnalyticsReports.subscriptionEventStandard),
        ("state", AnalyticsReports.subscriptionStateStandard),
    ]

    /// Why an Analytics Reports call was refused.
    public enum AnalyticsError: Error, Sendable, Equatable {
        case notFound(String)
        case conflict(String)
        case invalid(String)
    }

    /// How many rows one segment holds at most (tests split small reports into several segments).
    public func setAnalyticsSegmentRows(_ rows: Int) { analyticsSegmentRows = max(1, rows) }

    public func createAnalyticsRequest(
        appAppleId: String,
        accessType: AnalyticsReports.AccessType
    ) throws(AnalyticsError)
        -> AnalyticsReports.Request
    {
        guard appAppleId == String(catalog.appAppleId) else { throw .notFound("there is no app \(appAppleId)") }
        if analyticsRequests.values.contains(where: { $0.appAppleId == appAppleId && $0.accessType == accessType }) {
            throw .conflict("the app already has a \(accessType.rawValue) report request")
        }
        let record = AnalyticsRequestRecord(
            id: generator.uuid().uuidString.lowercased(),
            appAppleId: appAppleId,
            accessType: accessType,
            createdDay: reportCalendar.day(of: now).description
        )
        analyticsRequests[record.id] = record
        return Self.resource(record)
    }

    public func analyticsRequests(appAppleId: String, accessType: AnalyticsReports.AccessType?) -> [AnalyticsReports.Request] {
        analyticsRequests.values.filter { $0.appAppleId == appAppleId && (accessType == nil || $0.accessType == accessType) }
            .sorted { $0.id < $1.id }.map(Self.resource)
    }

    public func analyticsRequest(id: String) throws(AnalyticsError) -> AnalyticsReports.Request {
        guard let record = analyticsRequests[id] else { throw .notFound("there is no report request \(id)") }
        return Self.resource(record)
    }

    public func deleteAnalyticsRequest(id: String) throws(AnalyticsError) {
        guard analyticsRequests.removeValue(forKey: id) != nil else { throw .notFound("there is no report request \(id)") }
    }

    public func analyticsReports(requestId: String, name: String?) throws(AnalyticsError) -> [AnalyticsReports.Report] {
        guard analyticsRequests[requestId] != nil else { throw .notFound("there is no report request \(requestId)") }
        return Self.analyticsReportNames.filter { name == nil || $0.1.lowercased() == name?.lowercased() }.map { kind, title in
            AnalyticsReports.Report(id: "\(requestId)_\(kind)", attributes: .init(name: title, category: "COMMERCE"))
        }
    }

    /// The report's instances: at most one, DAILY, for `processingDate`.
    public func analyticsInstances(
        reportId: String,
        granularity: String?,
        processingDate: String?
    ) throws(AnalyticsError)
        -> [AnalyticsReports.Instance]
    {
        let (record, _) = try analyticsReport(reportId)
        guard granularity == nil || granularity == "DAILY" else { return [] }
        let dates: [ReportCalendar.Day]
        if let processingDate {
            guard let day = ReportCalendar.Day(processingDate) else { throw .invalid("filter[processingDate] must be YYYY-MM-DD") }
            dates = [day]
        } else {
            // Without a date filter: the last 30 processing dates.
            let today = reportCalendar.day(of: now)
            dates = (0..<30).map { today.adding(days: -$0) }
        }
        return dates.filter { served(record, dataDay: $0.adding(days: -1)) }.map {
            AnalyticsReports.Instance(id: "\(reportId)_\($0.description)", attributes: .init(granularity: "DAILY", processingDate: $0.description))
        }
    }

    /// The instance's segments, with download URLs under `baseURL` signed to expire after 5 minutes (`expiresAt`).
    public func analyticsSegments(instanceId: String, baseURL: String, expiresAt: Date) throws(AnalyticsError) -> [AnalyticsReports.Segment] {
        let (record, kind, dataDay) = try analyticsInstance(instanceId)
        guard served(record, dataDay: dataDay) else { throw .notFound("there is no report instance \(instanceId)") }
        return try analyticsFiles(kind: kind, dataDay: dataDay).enumerated().map { index, file in
            let id = "\(instanceId)_\(index + 1)"
            let expires = Int64(expiresAt.timeIntervalSince1970)
            return AnalyticsReports.Segment(
                id: id,
                attributes: .init(
                    checksum: Insecure.MD5.hash(data: file).map { String(format: "%02x", $0) }.joined(),
                    sizeInBytes: file.count,
                    url: "\(baseURL)/analytics-segments/\(id)?expires=\(expires)&signature=\(segmentSignature(id, expires: expires))"
                )
            )
        }
    }

    /// One segment's file, if the URL's signature holds and it has not expired at `now` (real time).
    public func analyticsSegmentFile(id: String, expires: Int64, signature: String, now: Date) throws(AnalyticsError) -> [UInt8] {
        guard signature == segmentSignature(id, expires: expires), Double(expires) >= now.timeIntervalSince1970 else {
            throw .invalid("the download link is not valid or has expired")
        }
        guard let cut = id.lastIndex(of: "_"), let index = Int(id[id.index(after: cut)...]), index >= 1 else {
            throw .notFound("there is no segment \(id)")
        }
        let (_, kind, dataDay) = try analyticsInstance(String(id[..<cut]))
        let files = try analyticsFiles(kind: kind, dataDay: dataDay)
        guard index <= files.count else { throw .notFound("there is no segment \(id)") }
        return files[index - 1]
    }

    // MARK: - Contents

    /// Whether the request covers the data of `dataDay`, and Apple would have processed it by now.
    func served(_ record: AnalyticsRequestRecord, dataDay: ReportCalendar.Day) -> Bool {
        guard environment == .production else { return false }
        let created = ReportCalendar.Day(record.createdDay)!
        let covered = record.accessType == .ongoing ? dataDay >= created : dataDay < created
        return covered && now >= reportCalendar.interval(of: dataDay).end
    }

    func analyticsReport(_ reportId: String) throws(AnalyticsError) -> (AnalyticsRequestRecord, String) {
        guard let cut = reportId.lastIndex(of: "_"), let record = analyticsRequests[String(reportId[..<cut])] else {
            throw .notFound("there is no report \(reportId)")
        }
        let kind = String(reportId[reportId.index(after: cut)...])
        guard Self.analyticsReportNames.contains(where: { $0.0 == kind }) else { throw .notFound("there is no report \(reportId)") }
        return (record, kind)
    }

    func analyticsInstance(_ instanceId: String) throws(AnalyticsError) -> (AnalyticsRequestRecord, String, ReportCalendar.Day) {
        guard let cut = instanceId.lastIndex(of: "_"), let processed = ReportCalendar.Day(String(instanceId[instanceId.index(after: cut)...]))
        else { throw .notFound("there is no report instance \(instanceId)") }
        let (record, kind) = try analyticsReport(String(instanceId[..<cut]))
        return (record, kind, processed.adding(days: -1))
    }

    /// The gzip files of one report's data day.
    func analyticsFiles(kind: String, dataDay: ReportCalendar.Day) throws(AnalyticsError) -> [[UInt8]] {
        let columns: [String]
        let rows: [[String]]
        do {
            if kind == "event" {
                columns = AnalyticsSubscriptionEventRow.columns
                rows = try analyticsEventRows(dataDay).map(\.fields)
            } else {
                columns = AnalyticsSubscriptionStateRow.columns
                rows = try analyticsStateRows(dataDay).map(\.fields)
            }
        } catch {
            throw .invalid("\(error)")
        }
        let size = max(1, analyticsSegmentRows)
        let chunks = rows.isEmpty ? [[]] : stride(from: 0, to: rows.count, by: size).map { Array(rows[$0..<min($0 + size, rows.count)]) }
        return chunks.map { Gzip.compress(Array(ReportTable.tsv(columns: columns, rows: $0).utf8)) }
    }

    func analyticsEventRows(_ day: ReportCalendar.Day) throws -> [AnalyticsSubscriptionEventRow] {
        guard case .report(let text) = try dailySubscriptionEventReport(day: day.description) else { return [] }
        var counts: [AnalyticsSubscriptionEventRow: Int] = [:]
        for row in try SubscriptionEventReportRow.rows(of: try ReportTable(tsv: text)) {
            let offer = row.offerType
            let mapped: (grouping: String, subType: String, plan: String?, reason: String?)
            switch row.event {
            case "Subscribe": mapped = ("Paid Subscription Starts", "New Paid Subscriptions", nil, nil)
            case "Start Introductory Offer", "Start Offer Code", "Start Promotional Offer":
                mapped = ("Offer Starts", "\(offer ?? "Pay As You Go") Starts", nil, nil)
            case "Renew":
                mapped = offer == nil ? ("Renewals", "Paid Renewals", nil, nil) : ("Offer Renewals", "\(offer!) Renewals", nil, nil)
            case "Paid Subscription from Introductory Offer": mapped = ("Paid Subscriptions from Offers", "Paid Subscriptions from Offers", nil, nil)
            case "Upgrade", "Downgrade", "Crossgrade": mapped = ("Renewals", "Plan Changes", row.event, nil)
            case "Reactivate": mapped = ("Renewals", "Reactivations", nil, nil)
            case "Renewal from Billing Retry": mapped = ("Recoveries from Billing Issue", "Recoveries from Billing Retry", nil, nil)
            case "Cancel": mapped = ("Voluntary Churn", "Voluntary Churn", nil, row.cancellationReason ?? "Turned off auto-renew")
            case "Canceled from Billing Retry": mapped = ("Involuntary Churn", "Involuntary Churn", nil, "Billing Issue")
            case "Grace Period from Paid Subscription": mapped = ("Entered Billing Issue", "Grace Period", nil, nil)
            case "Billing Retry from Paid Subscription": mapped = ("Entered Billing Issue", "Billing Retry", nil, nil)
            default: continue
            }
            let key = AnalyticsSubscriptionEventRow(
                eventDate: day.description,
                appName: row.appName,
                appAppleId: row.appAppleId,
                eventGrouping: mapped.grouping,
                eventSubType: mapped.subType,
                subscriptionName: row.subscriptionName,
                subscriptionId: row.subscriptionAppleId,
                subscriptionGroupId: row.subscriptionGroupId,
                offerType: offer,
                planChangeType: mapped.plan,
                cancellationReason: mapped.reason,
                downloadSource: "App Store search",
                territory: row.country,
                counts: 0
            )
            counts[key, default: 0] += row.quantity
        }
        return counts.map { key, count in
            var row = key
            row.counts = count
            return row
        }
        .sorted {
            ($0.eventGrouping, $0.eventSubType, $0.subscriptionName, $0.territory) < (
                $1.eventGrouping, $1.eventSubType, $1.subscriptionName, $1.territory
            )
        }
    }

    func analyticsStateRows(_ day: ReportCalendar.Day) throws -> [AnalyticsSubscriptionStateRow] {
        guard case .report(let text) = try dailySubscriptionReport(day: day.description) else { return [] }
        var counts: [AnalyticsSubscriptionStateRow: Int] = [:]
        for row in try SubscriptionReportRow.rows(of: try ReportTable(tsv: text)) {
            let freeTrials = row.activeFreeTrialIntroductory + row.freeTrialPromotional + row.freeTrialOfferCode + row.freeTrialWinBack
            let paidOffers =
                row.activePayUpFrontIntroductory + row.activePayAsYouGoIntroductory + row.payUpFrontPromotional + row.payAsYouGoPromotional
                + row.payUpFrontOfferCode + row.payAsYouGoOfferCode + row.payUpFrontWinBack + row.payAsYouGoWinBack
            for (metric, grouping, count) in [
                ("Full price", "Paid plans", row.activeStandardPrice), ("Free trials", "Subscription offers", freeTrials),
                ("Paid offers", "Subscription offers", paidOffers), ("Grace period", "Billing issue", row.gracePeriod),
                ("Billing retry", "Billing issue", row.billingRetry),
            ] where count > 0 {
                let key = AnalyticsSubscriptionStateRow(
                    date: day.description,
                    appName: row.appName,
                    appAppleId: row.appAppleId,
                    stateMetric: metric,
                    stateMetricGrouping: grouping,
                    subscriptionName: row.subscriptionName,
                    subscriptionId: row.subscriptionAppleId,
                    downloadSource: "App Store search",
                    territory: row.country,
                    counts: 0
                )
                counts[key, default: 0] += count
            }
        }
        return counts.map { key, count in
            var row = key
            row.counts = count
            return row
        }
        .sorted { ($0.stateMetric, $0.subscriptionName, $0.territory) < ($1.stateMetric, $1.subscriptionName, $1.territory) }
    }

    func segmentSignature(_ id: String, expires: Int64) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(id).\(expires)".utf8), using: analyticsURLKey)
        return Base64URL.encode(Array(mac))
    }

    static func resource(_ record: AnalyticsRequestRecord) -> AnalyticsReports.Request {
        AnalyticsReports.Request(id: record.id, attributes: .init(accessType: record.accessType, stoppedDueToInactivity: false))
    }
}

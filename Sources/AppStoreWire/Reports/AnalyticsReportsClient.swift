import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// App Store Connect's Analytics Reports API (reference §12.5): finds or creates an app's `ONGOING` report request,
/// finds a report by name, its daily instance for a processing date, and downloads the instance's segments — each a
/// gzip TSV behind a short-lived URL fetched without the JWT, its MD5 checked against the segment's `checksum` — as one
/// ``ReportTable``. JSON:API lists are followed through `links.next` (bounded).
public struct AnalyticsReportsClient: Sendable {
    public let baseURL: String
    public let requestTimeout: Duration
    /// The largest answer accepted: a JSON document, or a segment compressed and inflated.
    public let maximumBytes: Int
    /// The most pages of one list followed.
    public static let maximumPages = 50
    private let httpClient: HTTPClient
    private let tokens: AppStoreConnectTokenGenerator

    public init(
        httpClient: HTTPClient,
        tokens: AppStoreConnectTokenGenerator,
        baseURL: String = AppStoreConnectReportsClient.appleBaseURL,
        requestTimeout: Duration = .seconds(120),
        maximumBytes: Int = 512 * 1024 * 1024
    ) {
        self.httpClient = httpClient
        self.tokens = tokens
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.requestTimeout = requestTimeout
        self.maximumBytes = maximumBytes
    }

    /// The app's report requests of `accessType`.
    public func requests(
        appAppleId: String,
        accessType: AnalyticsReports.AccessType
    ) async throws(AppStoreConnectReportError)
        -> [AnalyticsReports.Request]
    {
        try await list(
            "/v1/apps/\(Self.segment(appAppleId))/analyticsReportRequests",
            query: [("filter[accessType]", accessType.rawValue)],
            as: AnalyticsReports.Request.self
        )
    }

    /// Asks Apple to start producing the app's reports (needs the Admin role).
    public func createRequest(
        appAppleId: String,
        accessType: AnalyticsReports.AccessType
    ) async throws(AppStoreConnectReportError)
        -> AnalyticsReports.Request
    {
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(AnalyticsReports.CreateRequest(appAppleId: appAppleId, accessType: accessType)))
        } catch {
            throw AppStoreConnectReportError(.invalidRequest, "\(error)")
        }
        let data = try await send(.POST, baseURL + "/v1/analyticsReportRequests", body: body, expect: 201)
        do {
            return try JSONDecoder().decode(AnalyticsReports.Single<AnalyticsReports.Request>.self, from: Data(data)).data
        } catch {
            throw AppStoreConnectReportError(.malformed, "the created report request could not be read: \(error)")
        }
    }

    /// The request's reports named `name`.
    public func reports(requestId: String, name: String) async throws(AppStoreConnectReportError) -> [AnalyticsReports.Report] {
        try await list(
            "/v1/analyticsReportRequests/\(Self.segment(requestId))/reports",
            query: [("filter[name]", name)],
            as: AnalyticsReports.Report.self
        ).filter { $0.attributes?.name?.lowercased() == name.lowercased() }
    }

    /// The report's instances of `granularity` processed on `processingDate` (`YYYY-MM-DD`).
    public func instances(
        reportId: String,
        granularity: String = "DAILY",
        processingDate: String
    ) async throws(AppStoreConnectReportError)
        -> [AnalyticsReports.Instance]
    {
        try await list(
            "/v1/analyticsReports/\(Self.segment(reportId))/instances",
            query: [("filter[granularity]", granularity), ("filter[processingDate]", processingDate)],
            as: AnalyticsReports.Instance.self
        )
    }

    /// The instance's segments.
    public func segments(instanceId: String) async throws(AppStoreConnectReportError) -> [AnalyticsReports.Segment] {
        try await list(
            "/v1/analyticsReportInstances/\(Self.segment(instanceId))/segments",
            query: [("limit", "200")],
            as: AnalyticsReports.Segment.self
        )
    }

    /// Every segment of the instance as one table (their data rows concatenated under the first header).
    public func table(instanceId: String) async throws(AppStoreConnectReportError) -> ReportTable {
        var columns: [String]?
        var rows: [[String]] = []
        for segment in try await segments(instanceId: instanceId) {
            let table = try await download(segment)
            if let columns, columns != table.columns {
                throw AppStoreConnectReportError(.malformed, "segment \(segment.id) has other columns than the first")
            }
            columns = table.columns
            rows += table.rows
        }
        guard let columns else { throw AppStoreConnectReportError(.notAvailable, "instance \(instanceId) has no segments") }
        do {
            return try ReportTable(tsv: ReportTable.tsv(columns: columns, rows: rows))
        } catch {
            throw AppStoreConnectReportError(.malformed, "\(error)")
        }
    }

    /// One segment: fetched from its URL without the JWT, checked against its checksum, inflated and read.
    public func download(_ segment: AnalyticsReports.Segment) async throws(AppStoreConnectReportError) -> ReportTable {
        guard let url = segment.attributes?.url, url.hasPrefix("https://") || url.hasPrefix("http://") else {
            throw AppStoreConnectReportError(.malformed, "segment \(segment.id) has no download URL")
        }
        let compressed = try await send(.GET, url, authorized: false, expect: 200)
        if let expected = segment.attributes?.checksum?.lowercased() {
            let actual = Insecure.MD5.hash(data: compressed).map { String(format: "%02x", $0) }.joined()
            guard actual == expected else {
                throw AppStoreConnectReportError(.malformed, "segment \(segment.id) does not match its checksum (\(actual), not \(expected))")
            }
        }
        do {
            let inflated = try Gzip.decompress(compressed, limit: maximumBytes)
            guard let text = String(validating: inflated, as: UTF8.self) else {
                throw AppStoreConnectReportError(.malformed, "segment \(segment.id) is not UTF-8 text")
            }
            return try ReportTable(tsv: text)
        } catch let error as AppStoreConnectReportError {
            throw error
        } catch {
            throw AppStoreConnectReportError(.malformed, "segment \(segment.id): \(error)")
        }
    }

    static func segment(_ text: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    private func list<Item: Codable & Sendable & Hashable>(
        _ path: String,
        query: [(String, String)],
        as: Item.Type
    ) async throws(AppStoreConnectReportError) -> [Item] {
        var url: String? =
            baseURL + path + "?"
            + query.map { AppStoreConnectReportsClient.encode($0.0) + "=" + AppStoreConnectReportsClient.encode($0.1) }.joined(separator: "&")
        var items: [Item] = []
        var pages = 0
        while let next = url {
            pages += 1
            guard pages <= Self.maximumPages else {
                throw AppStoreConnectReportError(.malformed, "more than \(Self.maximumPages) pages of \(path)")
            }
            // Apple's `next` links are absolute; only ones on the API's own host are followed.
            guard next.hasPrefix(baseURL + "/") else { throw AppStoreConnectReportError(.malformed, "a next link off the API host: \(next)") }
            let data = try await send(.GET, next, expect: 200)
            let page: AnalyticsReports.List<Item>
            do {
                page = try JSONDecoder().decode(AnalyticsReports.List<Item>.self, from: Data(data))
            } catch {
                throw AppStoreConnectReportError(.malformed, "\(path) answered a document that could not be read: \(error)")
            }
            items += page.data
            url = page.links?.next
        }
        return items
    }

    private func send(
        _ method: HTTPMethod,
        _ url: String,
        body: [UInt8]? = nil,
        authorized: Bool = true,
        expect: Int
    ) async throws(AppStoreConnectReportError) -> [UInt8] {
        var request = HTTPClientRequest(url: url)
        request.method = method
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            if authorized { request.headers.add(name: "Authorization", value: "Bearer \(try tokens.makeToken())") }
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: body))
            }
            response = try await httpClient.execute(request, timeout: .seconds(Int64(requestTimeout.components.seconds)))
            bytes = try await response.body.collect(upTo: maximumBytes)
        } catch let error as NIOTooManyBytesError {
            throw AppStoreConnectReportError(.malformed, "the answer is larger than \(maximumBytes) bytes: \(error)")
        } catch {
            throw AppStoreConnectReportError(.unavailable, "App Store Connect did not answer: \(error)")
        }
        let status = Int(response.status.code)
        guard status == expect else {
            let detail = (try? JSONDecoder().decode(AppStoreConnectErrorBody.self, from: Data(Array(buffer: bytes))))?.errors.first
            let message = detail.map { "\($0.code ?? "") \($0.detail ?? $0.title ?? "")" } ?? "status \(status)"
            switch status {
            case 404: throw AppStoreConnectReportError(.notAvailable, message, status: status)
            case 401, 403: throw AppStoreConnectReportError(.unauthorized, message, status: status)
            case 429:
                let retryAfter = response.headers.first(name: "Retry-After").flatMap(Int.init)
                throw AppStoreConnectReportError(.rateLimited, message, status: status, retryAfterSeconds: retryAfter)
            case 400..<500: throw AppStoreConnectReportError(.invalidRequest, message, status: status)
            default: throw AppStoreConnectReportError(.unavailable, message, status: status)
            }
        }
        return Array(buffer: bytes)
    }
}

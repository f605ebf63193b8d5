import Foundation

/// Google Play's financial reports from the developer account's Cloud Storage bucket (`pubsite_prod_rev_…`), read
/// through the Cloud Storage JSON API (`storage/v1`) with a service account that has the Play Console's "View
/// financial data" permission and the `devstorage.read_only` scope.
public struct PlayReportsClient: Sendable {
    public static let googleStorageURL = "https://storage.googleapis.com/"
    /// The scope reading a bucket needs.
    public static let storageReadScope = "https://www.googleapis.com/auth/devstorage.read_only"
    /// The most a report inflates to (a month of a busy app is tens of megabytes).
    public static let maximumReportBytes = 256 * 1024 * 1024

    public let bucket: String
    private let api: PlayDeveloperAPIClient

    /// One object of the bucket.
    public struct Object: Sendable, Hashable, Decodable {
        public var name: String
        /// Bytes, as Cloud Storage writes it (a decimal string).
        public var size: String?
        public var updated: String?
    }

    struct ObjectList: Decodable {
        var items: [Object]?
        var nextPageToken: String?
    }

    public init(
        baseURL: String = PlayReportsClient.googleStorageURL,
        bucket: String,
        tokens: AccessTokenProvider,
        transport: any PlayHTTPTransport,
        maximumAttempts: Int = 4,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.bucket = bucket
        api = PlayDeveloperAPIClient(baseURL: baseURL, tokens: tokens, transport: transport, maximumAttempts: maximumAttempts, sleep: sleep)
    }

    /// The objects whose names start with `prefix`, every page.
    public func list(prefix: String) async throws -> [Object] {
        var objects: [Object] = []
        var pageToken: String?
        repeat {
            var query = [("prefix", prefix)]
            if let pageToken { query.append(("pageToken", pageToken)) }
            let response = try await api.exchange("GET", "storage/v1/b/\(api.segment(bucket))/o", query: query, body: nil as String?)
            let page: ObjectList
            do { page = try JSONDecoder().decode(ObjectList.self, from: Data(response.body)) } catch {
                throw PlayDeveloperAPIError(status: response.status, reason: nil, message: "the object list is not JSON: \(error)")
            }
            objects += page.items ?? []
            pageToken = page.nextPageToken
            // A bucket answering pages without end is cut off rather than followed forever.
            if objects.count > 100_000 { break }
        } while pageToken != nil
        return objects
    }

    /// One object's bytes.
    public func download(_ name: String) async throws -> [UInt8] {
        try await api.exchange("GET", "storage/v1/b/\(api.segment(bucket))/o/\(api.segment(name))", query: [], body: nil as String?, alt: "media")
            .body
    }

    /// The earnings report of `month` (`YYYY-MM`): every `earnings/earnings_YYYYMM_*.zip` (Google writes one per
    /// payment profile), each CSV inside read; nil when the month has none yet (Google publishes a month's in the
    /// first days of the next).
    public func earningsReport(month: String) async throws -> PlayEarningsReport? {
        let prefix = "earnings/earnings_\(month.replacingOccurrences(of: "-", with: ""))"
        let objects = try await list(prefix: prefix).filter { $0.name.hasPrefix(prefix + "_") && $0.name.hasSuffix(".zip") }
        guard !objects.isEmpty else { return nil }
        var rows: [PlayEarningsReport.Row] = []
        for object in objects.sorted(by: { $0.name < $1.name }) {
            let archive = try await download(object.name)
            for entry in try ZipArchive.entries(archive, limit: Self.maximumReportBytes) where entry.name.lowercased().hasSuffix(".csv") {
                rows += try PlayEarningsReport(csv: entry.bytes).rows
            }
        }
        return PlayEarningsReport(rows: rows)
    }
}

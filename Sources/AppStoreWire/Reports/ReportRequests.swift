import Foundation

/// `GET /v1/salesReports`: one Sales and Trends report. Dates are Apple's: `YYYY-MM-DD` for a daily report.
public struct SalesReportRequest: Sendable, Hashable {
    public var vendorNumber: String
    /// `SALES`, `SUBSCRIPTION`, `SUBSCRIPTION_EVENT`, `SUBSCRIBER`, ...
    public var reportType: String
    /// `SUMMARY`, `DETAILED`, ...
    public var reportSubType: String
    /// `DAILY`, `WEEKLY`, `MONTHLY`, `YEARLY`.
    public var frequency: String
    public var reportDate: String
    /// `1_0` … `1_3` for sales.
    public var version: String

    public init(
        vendorNumber: String,
        reportDate: String,
        reportType: String = "SALES",
        reportSubType: String = "SUMMARY",
        frequency: String = "DAILY",
        version: String = "1_3"
    ) {
        self.vendorNumber = vendorNumber
        self.reportType = reportType
        self.reportSubType = reportSubType
        self.frequency = frequency
        self.reportDate = reportDate
        self.version = version
    }

    public var queryItems: [(String, String)] {
        [
            ("filter[frequency]", frequency), ("filter[reportDate]", reportDate), ("filter[reportSubType]", reportSubType),
            ("filter[reportType]", reportType), ("filter[vendorNumber]", vendorNumber), ("filter[version]", version),
        ]
    }
}

/// `GET /v1/financeReports`: one fiscal month's financial report for a region (`ZZ`: all, consolidated).
public struct FinanceReportRequest: Sendable, Hashable {
    public var vendorNumber: String
    /// `YYYY-MM`, Apple's fiscal month.
    public var reportDate: String
    public var regionCode: String
    /// `FINANCIAL` or `FINANCE_DETAIL`.
    public var reportType: String

    public init(vendorNumber: String, reportDate: String, regionCode: String = "ZZ", reportType: String = "FINANCIAL") {
        self.vendorNumber = vendorNumber
        self.reportDate = reportDate
        self.regionCode = regionCode
        self.reportType = reportType
    }

    public var queryItems: [(String, String)] {
        [
            ("filter[regionCode]", regionCode), ("filter[reportDate]", reportDate), ("filter[reportType]", reportType),
            ("filter[vendorNumber]", vendorNumber),
        ]
    }
}

/// Why a report could not be had.
public struct AppStoreConnectReportError: Error, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// 404: not there yet (a day's report comes the next day), or nothing was sold (``noSales``).
        case notAvailable
        /// 404 saying there were no sales for the date: an empty report.
        case noSales
        /// 401 / 403: the key, its role or the vendor number is wrong.
        case unauthorized
        /// 429, with Apple's `Retry-After` when it sent one.
        case rateLimited
        /// 5xx or the connection failed: try again later.
        case unavailable
        /// An answer that is not a gzip TSV report Storekeeper can read.
        case malformed
        /// A request Apple refused as malformed (400).
        case invalidRequest
    }

    public let kind: Kind
    public let message: String
    public let status: Int?
    public let retryAfterSeconds: Int?

    public init(_ kind: Kind, _ message: String, status: Int? = nil, retryAfterSeconds: Int? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
        self.retryAfterSeconds = retryAfterSeconds
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}

/// Apple's App Store Connect error body: `{"errors": [{"status", "code", "title", "detail"}]}`.
public struct AppStoreConnectErrorBody: Codable, Sendable, Hashable {
    public struct Item: Codable, Sendable, Hashable {
        public var status: String?
        public var code: String?
        public var title: String?
        public var detail: String?

        public init(status: String?, code: String?, title: String?, detail: String?) {
            self.status = status
            self.code = code
            self.title = title
            self.detail = detail
        }
    }

    public var errors: [Item]

    public init(errors: [Item]) { self.errors = errors }

    /// Apple's words when a date had no sales (a 404 that means "empty", not "later").
    public static let noSalesDetail = "There were no sales for the date specified."
}

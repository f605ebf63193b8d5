import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Downloads App Store Connect's Sales and Trends and Finance reports (reference §11): a fresh team-key JWT per
/// request, `Accept: application/a-gzip`, the gzip body inflated (bounded) and read as a ``ReportTable``.
public struct AppStoreConnectReportsClient: Sendable {
    public static let appleBaseURL = "https://api.appstoreconnect.apple.com"

    public let baseURL: String
    public let requestTimeout: Duration
    /// The largest report accepted, compressed and inflated.
    public let maximumBytes: Int
    private let httpClient: HTTPClient
    private let tokens: AppStoreConnectTokenGenerator

    public init(
        httpClient: HTTPClient,
        tokens: AppStoreConnectTokenGenerator,
        baseURL: String = Self.appleBaseURL,
        requestTimeout: Duration = .seconds(120),
        maximumBytes: Int = 512 * 1024 * 1024
    ) {
        self.httpClient = httpClient
        self.tokens = tokens
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.requestTimeout = requestTimeout
        self.maximumBytes = maximumBytes
    }

    /// A Sales and Trends report.
    public func salesReport(_ request: SalesReportRequest) async throws(AppStoreConnectReportError) -> ReportTable {
        try await fetch("/v1/salesReports", query: request.queryItems)
    }

    /// A financial report.
    public func financeReport(_ request: FinanceReportRequest) async throws(AppStoreConnectReportError) -> ReportTable {
        try await fetch("/v1/financeReports", query: request.queryItems)
    }

    static func encode(_ text: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+[]")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    private func fetch(_ path: String, query: [(String, String)]) async throws(AppStoreConnectReportError) -> ReportTable {
        let url = baseURL + path + "?" + query.map { Self.encode($0.0) + "=" + Self.encode($0.1) }.joined(separator: "&")
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: "Accept", value: "application/a-gzip")
        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            request.headers.add(name: "Authorization", value: "Bearer \(try tokens.makeToken())")
            response = try await httpClient.execute(request, timeout: .seconds(Int64(requestTimeout.components.seconds)))
            body = try await response.body.collect(upTo: maximumBytes)
        } catch let error as NIOTooManyBytesError {
            throw AppStoreConnectReportError(.malformed, "the report is larger than \(maximumBytes) bytes: \(error)")
        } catch {
            throw AppStoreConnectReportError(.unavailable, "App Store Connect did not answer: \(error)")
        }
        let status = Int(response.status.code)
        guard status == 200 else {
            let detail = (try? JSONDecoder().decode(AppStoreConnectErrorBody.self, from: Data(Array(buffer: body))))?.errors.first
            let message = detail.map { "\($0.code ?? "") \($0.detail ?? $0.title ?? "")" } ?? "status \(status)"
            switch status {
            case 404:
                let kind: AppStoreConnectReportError.Kind = detail?.detail == AppStoreConnectErrorBody.noSalesDetail ? .noSales : .notAvailable
                throw AppStoreConnectReportError(kind, message, status: status)
            case 401, 403: throw AppStoreConnectReportError(.unauthorized, message, status: status)
            case 429:
                let retryAfter = response.headers.first(name: "Retry-After").flatMap(Int.init)
                throw AppStoreConnectReportError(.rateLimited, message, status: status, retryAfterSeconds: retryAfter)
            case 400..<500: throw AppStoreConnectReportError(.invalidRequest, message, status: status)
            default: throw AppStoreConnectReportError(.unavailable, message, status: status)
            }
        }
        let text: String
        do {
            let inflated = try Gzip.decompress(Array(buffer: body), limit: maximumBytes)
            guard let decoded = String(validating: inflated, as: UTF8.self) else {
                throw AppStoreConnectReportError(.malformed, "the report is not UTF-8 text")
            }
            text = decoded
        } catch let error as AppStoreConnectReportError {
            throw error
        } catch {
            throw AppStoreConnectReportError(.malformed, "\(error)")
        }
        do {
            return try ReportTable(tsv: text)
        } catch {
            throw AppStoreConnectReportError(.malformed, "\(error)")
        }
    }
}

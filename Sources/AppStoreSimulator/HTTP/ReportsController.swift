import AppStoreWire
import Foundation
import Hummingbird
import NIOCore

/// App Store Connect's report downloads (`GET /v1/salesReports`, `GET /v1/financeReports`, reference §11) from the
/// simulator's ground truth, gzip TSV as Apple sends them, behind the team-key JWT check (`aud`
/// `appstoreconnect-v1`, no `bid`), with Apple's JSON error bodies and switchable faults (late, not yet available,
/// malformed).
struct ReportsController<Context: RequestContext>: Sendable {
    let store: SimulatedAppStore
    let tokens: ServerAPITokenVerifier
    let vendorNumber: String
    let faults: AppleEndpointFaults

    func add(to router: some RouterMethods<Context>) {
        router.get("v1/salesReports") { request, _ in
            try await guarded(request) { query in
                let type = query["filter[reportType]"] ?? ""
                guard ["SALES", "SUBSCRIPTION", "SUBSCRIPTION_EVENT"].contains(type), query["filter[reportSubType]"] == "SUMMARY" else {
                    return try error(
                        .badRequest,
                        "PARAMETER_ERROR.INVALID",
                        "the simulator serves SALES, SUBSCRIPTION and SUBSCRIPTION_EVENT SUMMARY reports"
                    )
                }
                guard query["filter[frequency]"] == "DAILY" else {
                    // Apple's answer to a monthly subscription report: an invalid combination.
                    return try error(.badRequest, "PARAMETER_ERROR.INVALID.INVALID_COMBINATION", "the simulator serves DAILY reports")
                }
                if type != "SALES" && query["filter[version]"] != "1_3" {
                    return try error(.badRequest, "PARAMETER_ERROR.INVALID", "subscription reports are version 1_3")
                }
                guard let date = query["filter[reportDate]"] else {
                    return try error(.badRequest, "PARAMETER_ERROR.REQUIRED", "filter[reportDate] is required")
                }
                let delay = faults.settings.reportDelayHours
                switch type {
                case "SUBSCRIPTION": return try answer(try await store.dailySubscriptionReport(day: date, delayHours: delay))
                case "SUBSCRIPTION_EVENT": return try answer(try await store.dailySubscriptionEventReport(day: date, delayHours: delay))
                default: return try answer(try await store.dailySalesReport(day: date, delayHours: delay))
                }
            }
        }
        router.get("v1/financeReports") { request, _ in
            try await guarded(request) { query in
                guard query["filter[reportType]"] == "FINANCIAL", query["filter[regionCode]"] == "ZZ" else {
                    return try error(.badRequest, "PARAMETER_ERROR.INVALID", "the simulator serves FINANCIAL reports for region ZZ")
                }
                guard let month = query["filter[reportDate]"] else {
                    return try error(.badRequest, "PARAMETER_ERROR.REQUIRED", "filter[reportDate] is required")
                }
                return try answer(try await store.financeReport(month: month, delayHours: faults.settings.reportDelayHours))
            }
        }
    }

    private func guarded(_ request: Request, _ body: ([String: String]) async throws -> Response) async throws -> Response {
        do {
            try tokens.verify(authorization: request.headers[.authorization], now: Date())
        } catch {
            return try self.error(.unauthorized, "NOT_AUTHORIZED", "Provide a properly configured and signed bearer token")
        }
        var query: [String: String] = [:]
        // Clients percent-encode the brackets of `filter[...]`.
        for (key, value) in request.uri.queryParameters {
            query[String(key).removingPercentEncoding ?? String(key)] = String(value).removingPercentEncoding ?? String(value)
        }
        guard query["filter[vendorNumber]"] == vendorNumber else {
            return try error(.forbidden, "FORBIDDEN_ERROR", "the vendor number is not this account's")
        }
        switch faults.takeReportFault() {
        case .notAvailable:
            return try error(.notFound, "NOT_FOUND", "Report is not available yet. Please try again later.")
        case .malformed:
            var response = Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "<html>maintenance</html>")))
            response.headers[.contentType] = "application/a-gzip"
            return response
        case nil:
            break
        }
        do {
            return try await body(query)
        } catch let failure as SimulatorError {
            return try error(.badRequest, "PARAMETER_ERROR.INVALID", failure.description)
        }
    }

    private func answer(_ report: SimulatedAppStore.ReportAnswer) throws -> Response {
        switch report {
        case .report(let text):
            var response = Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: Gzip.compress(Array(text.utf8)))))
            response.headers[.contentType] = "application/a-gzip"
            return response
        case .notYetAvailable:
            return try error(.notFound, "NOT_FOUND", "Report is not available yet. Please try again later.")
        case .noSales:
            return try error(.notFound, "NOT_FOUND", AppStoreConnectErrorBody.noSalesDetail)
        }
    }

    private func error(_ status: HTTPResponse.Status, _ code: String, _ detail: String) throws -> Response {
        try HTTPJSON.response(
            AppStoreConnectErrorBody(
                errors: [.init(status: String(status.code), code: code, title: status.reasonPhrase, detail: detail)]
            ),
            status: status
        )
    }
}

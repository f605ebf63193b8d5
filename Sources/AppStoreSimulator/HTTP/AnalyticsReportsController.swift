import AppStoreWire
import Foundation
import Hummingbird
import NIOCore

/// App Store Connect's Analytics Reports API (reference §12.5) over the simulator's record: report requests, reports,
/// instances and segments as JSON:API documents behind the team-key JWT check, and the segments' gzip files behind
/// signed links that expire after 5 minutes and need no JWT, as Apple's pre-signed URLs do.
struct AnalyticsReportsController<Context: RequestContext>: Sendable {
    let store: SimulatedAppStore
    let tokens: ServerAPITokenVerifier
    let faults: AppleEndpointFaults

    /// How long a segment's download link works.
    static var linkLifetime: TimeInterval { 300 }

    func add(to router: some RouterMethods<Context>) {
        router.post("v1/analyticsReportRequests") { request, _ in
            try await guarded(request) { _ in
                let body = try await HTTPJSON.decode(AnalyticsReports.CreateRequest.self, from: request)
                guard body.data.type == "analyticsReportRequests", let access = body.data.attributes.accessType,
                    body.data.relationships.app.data.type == "apps"
                else { return try error(.unprocessableContent, "ENTITY_ERROR", "a report request names its accessType and app") }
                let created = try await store.createAnalyticsRequest(appAppleId: body.data.relationships.app.data.id, accessType: access)
                return try HTTPJSON.response(AnalyticsReports.Single(data: created), status: .created)
            }
        }
        router.get("v1/apps/:app/analyticsReportRequests") { request, context in
            try await guarded(request) { query in
                let app = try PathParameter.require("app", in: context)
                let access = query["filter[accessType]"].flatMap(AnalyticsReports.AccessType.init(rawValue:))
                return try HTTPJSON.response(AnalyticsReports.List(data: await store.analyticsRequests(appAppleId: app, accessType: access)))
            }
        }
        router.get("v1/analyticsReportRequests/:id") { request, context in
            try await guarded(request) { _ in
                try HTTPJSON.response(AnalyticsReports.Single(data: try await store.analyticsRequest(id: PathParameter.require("id", in: context))))
            }
        }
        router.delete("v1/analyticsReportRequests/:id") { request, context in
            try await guarded(request) { _ in
                try await store.deleteAnalyticsRequest(id: PathParameter.require("id", in: context))
                return Response(status: .noContent)
            }
        }
        router.get("v1/analyticsReportRequests/:id/reports") { request, context in
            try await guarded(request) { query in
                let reports = try await store.analyticsReports(requestId: PathParameter.require("id", in: context), name: query["filter[name]"])
                return try HTTPJSON.response(AnalyticsReports.List(data: reports))
            }
        }
        router.get("v1/analyticsReports/:id/instances") { request, context in
            try await guarded(request) { query in
                let instances = try await store.analyticsInstances(
                    reportId: PathParameter.require("id", in: context),
                    granularity: query["filter[granularity]"],
                    processingDate: query["filter[processingDate]"]
                )
                return try HTTPJSON.response(AnalyticsReports.List(data: instances))
            }
        }
        router.get("v1/analyticsReportInstances/:id/segments") { request, context in
            try await guarded(request) { _ in
                let segments = try await store.analyticsSegments(
                    instanceId: PathParameter.require("id", in: context),
                    baseURL: "http://\(request.head.authority ?? "127.0.0.1")",
                    expiresAt: Date().addingTimeInterval(Self.linkLifetime)
                )
                return try HTTPJSON.response(AnalyticsReports.List(data: segments))
            }
        }
        router.get("analytics-segments/:id") { request, context in
            let id = try PathParameter.require("id", in: context)
            let query = request.uri.queryParameters
            do {
                let file = try await store.analyticsSegmentFile(
                    id: id,
                    expires: query["expires"].flatMap { Int64(String($0)) } ?? 0,
                    signature: query["signature"].map(String.init) ?? "",
                    now: Date()
                )
                var response = Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: file)))
                response.headers[.contentType] = "application/a-gzip"
                return response
            } catch {
                // An expired or forged link: what a pre-signed storage URL answers.
                return Response(status: .forbidden, body: .init(byteBuffer: ByteBuffer(string: "AccessDenied")))
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
        for (key, value) in request.uri.queryParameters {
            query[String(key).removingPercentEncoding ?? String(key)] = String(value).removingPercentEncoding ?? String(value)
        }
        if case .notAvailable? = faults.takeReportFault() {
            return try error(.internalServerError, "UNEXPECTED_ERROR", "An unexpected error occurred on the server side.")
        }
        do {
            return try await body(query)
        } catch let failure as SimulatedAppStore.AnalyticsError {
            switch failure {
            case .notFound(let detail): return try error(.notFound, "NOT_FOUND", detail)
            case .conflict(let detail): return try error(.conflict, "ENTITY_ERROR", detail)
            case .invalid(let detail): return try error(.badRequest, "PARAMETER_ERROR.INVALID", detail)
            }
        }
    }

    private func error(_ status: HTTPResponse.Status, _ code: String, _ detail: String) throws -> Response {
        try HTTPJSON.response(
            AppStoreConnectErrorBody(errors: [.init(status: String(status.code), code: code, title: status.reasonPhrase, detail: detail)]),
            status: status
        )
    }
}

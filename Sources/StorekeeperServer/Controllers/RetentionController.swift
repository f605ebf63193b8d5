import AppStoreWire
import Foundation
import Hummingbird
import Logging
import NIOCore
import StorekeeperCore

/// Apple's realtime retention requests: `POST /apple/retention` (Retention Messaging's Get Retention Message; set
/// it as the realtime URL). Answered 200 with the chosen answer; 404 `no_rule` when no rule applies (Apple then
/// shows the default message); 4xx with a JSON error for a request that fails verification, counted and logged.
struct RetentionController {
    let responder: RetentionResponder
    let recorder: RetentionRecorder?
    let metrics: ServerMetrics

    struct SignedBody: Decodable { var signedPayload: String }

    func add(to routes: APIRoutes) {
        routes.router.post("apple/retention") { request, context in
            let started = ContinuousClock.now
            func elapsed() -> UInt64 {
                let duration = ContinuousClock.now - started
                return UInt64(max(0, duration.components.seconds)) * 1_000_000_000 + UInt64(max(0, duration.components.attoseconds) / 1_000_000_000)
            }
            do {
                let text = try await request.body.collectBody(limit: min(context.maxUploadSize, 64 * 1024))
                guard let signed = try? AppStoreJSON.decodePayload(SignedBody.self, from: Array(text.readableBytesView)) else {
                    throw StorekeeperError.invalidInput("malformed_json", "expected {\"signedPayload\": \"…\"}")
                }
                let decision = try await responder.answer(signedPayload: signed.signedPayload)
                guard let body = decision.body, let rule = decision.rule else {
                    metrics.retentionAnswered("none", nanoseconds: elapsed())
                    throw StorekeeperError.notFound("no_rule", "no retention rule applies: Apple shows the default message")
                }
                let data = try AppStoreJSON.makeEncoder().encode(body)
                metrics.retentionAnswered(rule.answer.kind, nanoseconds: elapsed())
                if let user = decision.history.user, let recorder {
                    let locale = decision.request.userLocale ?? "?"
                    var detail = "rule \(rule.id): \(rule.answer.kind) (message \(rule.answer.messageId)"
                    var offerId: String?
                    switch rule.answer {
                    case .alternateProduct(_, let product, let plan): detail += ", product \(product)" + (plan.map { " \($0)" } ?? "")
                    case .promotionalOffer(_, let offer):
                        detail += ", offer \(offer)"
                        offerId = offer
                    case .message: break
                    }
                    detail += ") for \(decision.request.productId ?? "?") in \(locale)"
                    recorder.record(
                        .init(
                            user: user,
                            originalTransactionId: decision.request.originalTransactionId ?? "",
                            detail: detail,
                            ruleId: rule.id,
                            kind: rule.answer.kind,
                            offerId: offerId
                        )
                    )
                }
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
            } catch let failure as any StorekeeperFailure
                where failure.apiError.kind != .notFound && failure.apiError.kind != .internal && failure.apiError.kind != .unavailable
            {
                let error = failure.apiError
                metrics.retentionAnswered("refused", nanoseconds: elapsed())
                metrics.verificationFailed(reason: "retention_\(error.code)")
                context.logger.notice(
                    "retention request refused",
                    metadata: ["code": "\(error.code)", "source": "\(context.clientAddress ?? "unknown")"]
                )
                throw error
            }
        }
    }
}

import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Verifies receipts with Apple's legacy `verifyReceipt` endpoint.
///
/// Calls production first and follows Apple's routing rule once: 21007 → sandbox, 21008 → production.
/// A genuine receipt of another app (its `bundle_id`, or an iOS 6-style receipt's `bid`, is not
/// ``ReceiptVerificationConfiguration/bundleId``) is ``ReceiptVerificationOutcome/invalid(status:reason:)``.
/// Network failures, HTTP errors and unreadable answers become ``ReceiptVerificationOutcome/retryLater(reason:)``;
/// the receipt and the shared secret are never logged.
public struct ReceiptVerificationClient: Sendable {
    public let configuration: ReceiptVerificationConfiguration
    private let httpClient: HTTPClient
    private let logger: Logger

    /// - Parameter httpClient: a client the caller owns and shuts down.
    public init(
        httpClient: HTTPClient,
        configuration: ReceiptVerificationConfiguration,
        logger: Logger = Logger(label: "AppStoreWire.ReceiptVerificationClient")
    ) {
        self.httpClient = httpClient
        self.configuration = configuration
        self.logger = logger
    }

    /// Verifies `receiptData` (base64) with the configured shared secret and `exclude-old-transactions`.
    public func verify(receiptData: String) async -> ReceiptVerificationOutcome {
        await verify(
            VerifyReceiptRequest(
                receiptData: receiptData,
                password: configuration.sharedSecret,
                excludeOldTransactions: configuration.excludeOldTransactions ? true : nil
            )
        )
    }

    /// Verifies a receipt with exactly the given request body.
    public func verify(_ request: VerifyReceiptRequest) async -> ReceiptVerificationOutcome {
        var environment: AppStoreEnvironment = configuration.firstEnvironment == .sandbox ? .sandbox : .production
        var hasResent = false
        while true {
            let response: VerifyReceiptResponse
            switch await exchange(request, environment: environment) {
            case .failure(let failure):
                return .retryLater(reason: failure.reason)
            case .success(let decoded):
                response = decoded
            }
            logger.debug(
                "verifyReceipt answered",
                metadata: ["environment": "\(environment)", "status": "\(response.status.rawValue)"]
            )

            let target: AppStoreEnvironment
            switch response.disposition {
            case .valid:
                // Apple answers 0 for a genuine receipt of any app: only the bundle id ties it to ours.
                if let mismatch = bundleIdMismatch(response.receipt) {
                    logger.info("verifyReceipt receipt of another app", metadata: ["environment": "\(environment)"])
                    return .invalid(status: response.status, reason: mismatch)
                }
                var response = response
                // Old answers omit `environment`; the endpoint that answered says it just as well.
                if response.environment == nil { response.environment = environment }
                return .valid(response)
            case .invalid:
                return .invalid(status: response.status, reason: Self.describe(response))
            case .retryLater:
                return .retryLater(reason: Self.describe(response))
            case .resendToSandbox:
                target = .sandbox
            case .resendToProduction:
                target = .production
            }
            // One resend only: a second redirect, or one pointing where we already are, is Apple being
            // inconsistent, and following it would loop.
            guard !hasResent, target != environment else {
                return .retryLater(
                    reason: "verifyReceipt redirected again (status \(response.status.rawValue) from \(environment))"
                )
            }
            hasResent = true
            environment = target
        }
    }

    /// Why `receipt` is not the configured app's, or nil when it is.
    private func bundleIdMismatch(_ receipt: LegacyReceipt?) -> String? {
        let expected = configuration.bundleId
        // App receipts carry `bundle_id`, iOS 6-style ones `bid`; a receipt naming no app is not ours either.
        let claimed = [receipt?.bundleId, receipt?.bid].compactMap(\.self)
        guard claimed.isEmpty || claimed.contains(where: { $0 != expected }) else { return nil }
        let found = claimed.first { $0 != expected }.map { $0.isEmpty ? "(empty)" : $0 } ?? "(none)"
        return "wrong app: receipt bundle id \(found) is not \(expected)"
    }

    private struct ExchangeFailure: Error {
        let reason: String
    }

    private func exchange(
        _ body: VerifyReceiptRequest,
        environment: AppStoreEnvironment
    ) async -> Result<VerifyReceiptResponse, ExchangeFailure> {
        let url = environment == .sandbox ? configuration.sandboxURL : configuration.productionURL
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json")
        do {
            request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body)))
        } catch {
            return .failure(ExchangeFailure(reason: "could not encode the request: \(error)"))
        }

        let status: HTTPResponseStatus
        let bytes: ByteBuffer
        do {
            let response = try await httpClient.execute(
                request,
                timeout: TimeAmount(configuration.requestTimeout),
                logger: logger
            )
            status = response.status
            bytes = try await response.body.collect(upTo: configuration.maxResponseBytes)
        } catch {
            logger.info(
                "verifyReceipt unreachable",
                metadata: ["environment": "\(environment)", "error": "\(error)"]
            )
            return .failure(ExchangeFailure(reason: "\(environment) verifyReceipt unreachable: \(error)"))
        }
        // Apple answers 200 even for logical errors, so anything else is a transport-level problem.
        guard status == .ok else {
            logger.info(
                "verifyReceipt HTTP error",
                metadata: ["environment": "\(environment)", "http": "\(status.code)"]
            )
            return .failure(ExchangeFailure(reason: "\(environment) verifyReceipt answered HTTP \(status.code)"))
        }
        do {
            return .success(try JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(bytes.readableBytesView)))
        } catch {
            return .failure(ExchangeFailure(reason: "\(environment) verifyReceipt answer unreadable: \(error)"))
        }
    }

    private static func describe(_ response: VerifyReceiptResponse) -> String {
        var text = "verifyReceipt status \(response.status.rawValue)"
        switch response.status {
        case .unreadableRequest: text += ": request unreadable"
        case .noLongerSent: text += ": unexpected status"
        case .malformedReceiptData: text += ": receipt data malformed or service issue"
        case .notAuthenticated: text += ": receipt could not be authenticated"
        case .sharedSecretMismatch: text += ": shared secret does not match"
        case .serverUnavailable: text += ": receipt server unavailable"
        case .internalDataAccessError: text += ": internal data access error"
        case .accountNotFound: text += ": user account not found or deleted"
        default: break
        }
        if response.status.isInternalDataAccessRange {
            text += ": internal data access error (is-retryable: \(response.isRetryable.map(String.init) ?? "absent"))"
        }
        if let exception = response.exception { text += " [\(exception)]" }
        return text
    }
}

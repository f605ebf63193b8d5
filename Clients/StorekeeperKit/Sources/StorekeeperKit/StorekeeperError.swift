import Foundation
import OpenAPIRuntime

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every failure StorekeeperKit throws from its public calls: one type to switch on, with the server's error code and
/// `outcome` when the server answered one.
public struct StorekeeperError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed.
    public enum Code: String, Sendable, Hashable {
        /// The server could not be reached (no network, a timeout, a refused connection).
        case network
        /// The server answered with a failure (`status`, `serverCode`, `outcome`).
        case server
        /// The server's answer did not pass the pinned key's check: nothing from it was believed.
        case untrusted
        /// The App Store has no such product here, or no such offer for this customer.
        case productUnavailable
        /// The server would not sign the offer for this user.
        case offerRefused
        /// StoreKit failed (payments disabled, the App Store unreachable, a sheet that could not be shown).
        case storeKit
        /// Nothing is known yet: no answer from the server and none kept from before.
        case noCustomerInfo
    }

    public var code: Code
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// The server's error code (`unknown_product`, `offer_not_granted`, …).
    public var serverCode: String?
    /// The server's `outcome` for a purchase failure: `retry` or `rejected`.
    public var outcome: String?
    /// What happened, for logs.
    public var message: String

    public init(_ code: Code, status: Int? = nil, serverCode: String? = nil, outcome: String? = nil, message: String) {
        self.code = code
        self.status = status
        self.serverCode = serverCode
        self.outcome = outcome
        self.message = message
    }

    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let status { text += " (\(status)\(serverCode.map { " \($0)" } ?? "")\(outcome.map { ", outcome \($0)" } ?? ""))" }
        return text
    }

    /// The server answered `status` (with `serverCode`), `doing` something.
    static func server(_ status: Int, _ serverCode: String? = nil, outcome: String? = nil, doing: String) -> StorekeeperError {
        StorekeeperError(.server, status: status, serverCode: serverCode, outcome: outcome, message: "the server refused \(doing)")
    }

    /// `error` as a StorekeeperError: a transport failure is `network`, a refused signature `untrusted`.
    static func wrapping(_ error: any Error, doing: String) -> StorekeeperError {
        if let known = error as? StorekeeperError { return known }
        if let untrusted = error as? AnswerVerifier.Untrusted { return StorekeeperError(.untrusted, message: untrusted.reason) }
        if let client = error as? ClientError { return wrapping(client.underlyingError, doing: doing) }
        if error is URLError { return StorekeeperError(.network, message: "\(doing): \(error)") }
        return StorekeeperError(.storeKit, message: "\(doing): \(error)")
    }
}

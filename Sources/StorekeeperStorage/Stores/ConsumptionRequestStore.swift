import Foundation
import SQLKit
import StorekeeperCore

/// Apple's refund questions waiting for (or given) an answer, and the facts the answer is built from.
public struct ConsumptionRequestStore: Sendable {
    /// One question.
    public struct Request: Sendable, Hashable {
        public var id: String
        public var bundleId: String
        public var environment: String
        public var transactionId: String
        public var originalTransactionId: String?
        public var user: UserID?
        public var reason: String?
        public var requestedAt: Date
        public var deadline: Date
        public var status: String
        public var attempts: Int
        public var answer: String?
        public var lastError: String?
        public var answeredAt: Date?

        public init(row: any SQLRow) throws {
            id = try row.decode(column: "id", as: String.self)
            bundleId = try row.decode(column: "bundle_id", as: String.self)
            environment = try row.decode(column: "environment", as: String.self)
            transactionId = try row.decode(column: "transaction_id", as: String.self)
            originalTransactionId = try row.decode(column: "original_transaction_id", as: String?.self)
            user = try row.decode(column: "user_id", as: String?.self).map(UserID.init(rawValue:))
            reason = try row.decode(column: "reason", as: String?.self)
            requestedAt = Date(millis: try row.decode(column: "requested_at", as: Int64.self))
            deadline = Date(millis: try row.decode(column: "deadline_at", as: Int64.self))
            status = try row.decode(column: "status", as: String.self)
            attempts = Int(try row.decode(column: "attempts", as: Int64.self))
            answer = try row.decode(column: "answer", as: String?.self)
            lastError = try row.decode(column: "last_error", as: String?.self)
            answeredAt = try row.decode(column: "answered_at", as: Int64?.self).map(Date.init(millis:))
        }
    }

    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    public func find(_ id: String) async throws -> Request? {
        try await provider.withSession { db in
            try await db.raw("SELECT * FROM consumption_requests WHERE id = \(bind: id)").first().map(Request.init(row:))
        }
    }

    /// Questions, newest first, optionally in one status.
    public func list(status: String? = nil, limit: Int = 100) async throws -> [Request] {
        try await provider.withSession { db in
            if let status {
                return try await db.raw(
                    "SELECT * FROM consumption_requests WHERE status = \(bind: status) ORDER BY requested_at DESC LIMIT \(bind: limit)"
                ).all().map(Request.init(row:))
            }
            return try await db.raw("SELECT * FROM consumption_requests ORDER BY requested_at DESC LIMIT \(bind: limit)")
                .all().map(Request.init(row:))
        }
    }

    /// The product of a delivered or parked transaction.
    public func productId(transactionId: String) async throws -> String? {
        try await provider.withSession { db in
            if let row = try await db.raw(
                "SELECT product_id FROM store_transactions WHERE transaction_id = \(bind: transactionId)"
            ).first() {
                return try row.decode(column: "product_id", as: String.self)
            }
            return try await db.raw(
                "SELECT product_id FROM pending_transactions WHERE transaction_id = \(bind: transactionId)"
            ).first()?.decode(column: "product_id", as: String.self)
        }
    }

    /// What Storekeeper knows about the purchase in question, for the answer.
    public func facts(transactionId: String, now: Date) async throws -> ConsumptionAnswer.Facts {
        try await provider.withSession { db in
            guard
                let row = try await db.raw(
                    "SELECT user_id, product_kind, ownership_type FROM store_transactions WHERE transaction_id = \(bind: transactionId)"
                ).first()
            else { return ConsumptionAnswer.Facts(kind: nil, delivered: false, now: now) }
            let user = try row.decode(column: "user_id", as: String.self)
            let kind = ProductKind(rawValue: try row.decode(column: "product_kind", as: String.self))
            var facts = ConsumptionAnswer.Facts(
                kind: kind,
                delivered: true,
                now: now,
                ownershipType: try row.decode(column: "ownership_type", as: String?.self)
            )
            if kind == .consumable,
                let credit = try await db.raw(
                    "SELECT currency, amount FROM wallet_entries WHERE cause = \(bind: "transaction:\(transactionId)")"
                ).first()
            {
                facts.coinsCredited = try credit.decode(column: "amount", as: Int64.self)
                facts.balance =
                    try await db.raw(
                        """
                        SELECT balance FROM wallets WHERE user_id = \(bind: user)
                          AND currency = \(bind: try credit.decode(column: "currency", as: String.self))
                        """
                    ).first()?.decode(column: "balance", as: Int64.self) ?? 0
            }
            if let grant = try await db.raw(
                "SELECT starts_at, ends_at FROM entitlement_grants WHERE transaction_id = \(bind: transactionId)"
            ).first() {
                facts.periodStart = Date(millis: try grant.decode(column: "starts_at", as: Int64.self))
                facts.periodEnd = try grant.decode(column: "ends_at", as: Int64?.self).map(Date.init(millis:))
            }
            return facts
        }
    }
}

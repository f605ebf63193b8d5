import Foundation
import SQLKit
import StorekeeperCore

/// `team_seats`: the roster of each multiseat subscription whose developer manages invitations. A row is an
/// invitation (`invited`), a claim under way at Apple (`claiming`: its id is the Claim Seat request identifier,
/// persisted before the call), a claimed seat (`claimed`, with Apple's `seatClaimId`), or ended (`released`: the seat
/// was unclaimed or Apple released it; `cancelled`: the invitation was withdrawn). A member's access is the
/// purchaser's subscription between `claimed_at` and `released_at`.
public enum TeamSeatsTable {
    /// The states of a row.
    public enum Status: String, Sendable, Hashable, CaseIterable {
        case invited, claiming, claimed, released, cancelled

        /// Whether the row holds (or is about to hold) one of the purchase's seats.
        public var holdsSeat: Bool { self == .claiming || self == .claimed }
    }

    /// One row.
    public struct Row: Sendable, Hashable {
        public var id: String
        public var bundleId: String
        public var environment: String
        public var originalTransactionId: String
        public var purchaser: UserID
        public var member: UserID?
        public var invitationExpiresAt: Date?
        public var status: Status
        public var seatClaimId: String?
        public var appTransactionId: String?
        public var createdAt: Date
        public var claimedAt: Date?
        public var releasedAt: Date?
        public var releaseReason: String?

        public init(
            id: String,
            bundleId: String,
            environment: String,
            originalTransactionId: String,
            purchaser: UserID,
            member: UserID? = nil,
            invitationExpiresAt: Date? = nil,
            status: Status,
            seatClaimId: String? = nil,
            appTransactionId: String? = nil,
            createdAt: Date,
            claimedAt: Date? = nil,
            releasedAt: Date? = nil,
            releaseReason: String? = nil
        ) {
            self.id = id
            self.bundleId = bundleId
            self.environment = environment
            self.originalTransactionId = originalTransactionId
            self.purchaser = purchaser
            self.member = member
            self.invitationExpiresAt = invitationExpiresAt
            self.status = status
            self.seatClaimId = seatClaimId
            self.appTransactionId = appTransactionId
            self.createdAt = createdAt
            self.claimedAt = claimedAt
            self.releasedAt = releasedAt
            self.releaseReason = releaseReason
        }
    }

    static let columns = """
        id, bundle_id, environment, original_transaction_id, purchaser_id, member_id, invitation_expires_at, status, seat_claim_id,
        app_transaction_id, created_at, claimed_at, released_at, release_reason
        """

    static func row(_ row: any SQLRow) throws -> Row {
        Row(
            id: try row.decode(column: "id", as: String.self),
            bundleId: try row.decode(column: "bundle_id", as: String.self),
            environment: try row.decode(column: "environment", as: String.self),
            originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
            purchaser: UserID(rawValue: try row.decode(column: "purchaser_id", as: String.self)),
            member: try row.decode(column: "member_id", as: String?.self).map(UserID.init(rawValue:)),
            invitationExpiresAt: try row.decode(column: "invitation_expires_at", as: Int64?.self).map(Date.init(millis:)),
            status: Status(rawValue: try row.decode(column: "status", as: String.self)) ?? .cancelled,
            seatClaimId: try row.decode(column: "seat_claim_id", as: String?.self),
            appTransactionId: try row.decode(column: "app_transaction_id", as: String?.self),
            createdAt: Date(millis: try row.decode(column: "created_at", as: Int64.self)),
            claimedAt: try row.decode(column: "claimed_at", as: Int64?.self).map(Date.init(millis:)),
            releasedAt: try row.decode(column: "released_at", as: Int64?.self).map(Date.init(millis:)),
            releaseReason: try row.decode(column: "release_reason", as: String?.self)
        )
    }

    public static func insert(_ row: Row, invitationHash: String?, on db: any SQLDatabase) async throws {
        var insert = BulkInsert(
            into: "team_seats",
            columns: [
                "id", "bundle_id", "environment", "original_transaction_id", "purchaser_id", "member_id", "invitation_hash",
                "invitation_expires_at", "status", "seat_claim_id", "app_transaction_id", "created_at", "claimed_at", "released_at",
                "release_reason",
            ]
        )
        insert.values([
            row.id, row.bundleId, row.environment, row.originalTransactionId, row.purchaser.rawValue, row.member?.rawValue, invitationHash,
            row.invitationExpiresAt?.millis, row.status.rawValue, row.seatClaimId, row.appTransactionId, row.createdAt.millis,
            row.claimedAt?.millis, row.releasedAt?.millis, row.releaseReason,
        ])
        try await insert.run(on: db)
    }

    /// One row by id.
    public static func find(id: String, on db: any SQLDatabase) async throws -> Row? {
        try await db.raw("SELECT \(unsafeRaw: columns) FROM team_seats WHERE id = \(bind: id)").first().map(row)
    }

    /// The row an invitation code's hash names.
    public static func find(invitationHash: String, on db: any SQLDatabase) async throws -> Row? {
        try await db.raw("SELECT \(unsafeRaw: columns) FROM team_seats WHERE invitation_hash = \(bind: invitationHash)").first().map(row)
    }

    /// Every row of one subscription's team, oldest first.
    public static func team(_ originalTransactionId: String, on db: any SQLDatabase) async throws -> [Row] {
        try await db.raw(
            """
            SELECT \(unsafeRaw: columns) FROM team_seats WHERE original_transaction_id = \(bind: originalTransactionId)
            ORDER BY created_at, id
            """
        ).all().map(row)
    }

    /// The rows `user` buys (as purchaser) or holds (as member), oldest first.
    public static func rows(of user: UserID, on db: any SQLDatabase) async throws -> [Row] {
        try await db.raw(
            """
            SELECT \(unsafeRaw: columns) FROM team_seats WHERE purchaser_id = \(bind: user.rawValue) OR member_id = \(bind: user.rawValue)
            ORDER BY created_at, id
            """
        ).all().map(row)
    }

    /// The claimed seats of the subscriptions `originals` (for telling their members about the subscription).
    public static func claimed(originals: [String], on db: any SQLDatabase) async throws -> [Row] {
        guard !originals.isEmpty else { return [] }
        // Most apps have no team at all: one statement without parameters says so, instead of matching every
        // subscription of the batch (measured: 6 % more CPU per renewal notification without this check).
        guard try await db.raw("SELECT 1 AS any_seat FROM team_seats WHERE status = 'claimed' LIMIT 1").first() != nil else { return [] }
        return try await db.raw(
            """
            SELECT \(unsafeRaw: columns) FROM team_seats
            WHERE original_transaction_id IN (\(binds: Array(Set(originals)).sorted())) AND status = 'claimed'
            ORDER BY original_transaction_id, claimed_at, id
            """
        ).all().map(row)
    }

    /// The claimed seats with these Apple claim ids.
    public static func claimed(seatClaimIds: [String], on db: any SQLDatabase) async throws -> [Row] {
        guard !seatClaimIds.isEmpty else { return [] }
        return try await db.raw(
            """
            SELECT \(unsafeRaw: columns) FROM team_seats WHERE seat_claim_id IN (\(binds: Array(Set(seatClaimIds)).sorted())) AND status = 'claimed'
            ORDER BY claimed_at, id
            """
        ).all().map(row)
    }

    /// Moves a row from one of `from` to `to`, setting the given columns; returns whether it was in one of `from`.
    public static func transition(
        id: String,
        from: [Status],
        to: Status,
        member: UserID?? = .none,
        clearInvitation: Bool = false,
        seatClaimId: String? = nil,
        appTransactionId: String? = nil,
        claimedAt: Date? = nil,
        releasedAt: Date? = nil,
        releaseReason: String? = nil,
        on db: any SQLDatabase
    ) async throws -> Bool {
        var sets: [SQLQueryString] = ["status = \(bind: to.rawValue)"]
        if case .some(let member) = member { sets.append("member_id = \(bind: member?.rawValue)") }
        if clearInvitation { sets.append("invitation_hash = NULL, invitation_expires_at = NULL") }
        if let seatClaimId { sets.append("seat_claim_id = \(bind: seatClaimId)") }
        if let appTransactionId { sets.append("app_transaction_id = \(bind: appTransactionId)") }
        if let claimedAt { sets.append("claimed_at = \(bind: claimedAt.millis)") }
        if let releasedAt { sets.append("released_at = \(bind: releasedAt.millis)") }
        if let releaseReason { sets.append("release_reason = \(bind: releaseReason)") }
        let rows = try await db.raw(
            """
            UPDATE team_seats SET \(sets.joined(separator: ", "))
            WHERE id = \(bind: id) AND status IN (\(binds: from.map(\.rawValue))) RETURNING id
            """
        ).all()
        return !rows.isEmpty
    }

    /// What a team's subscription is, from its latest delivered transaction.
    public struct Subscription: Sendable, Hashable {
        public var bundleId: String
        public var environment: String
        public var productId: String
        public var productKind: ProductKind
        public var holder: UserID
        public var ownershipType: String?
    }

    /// The subscription `originalTransactionId` as Storekeeper delivered it (nil: never delivered).
    public static func subscription(_ originalTransactionId: String, on db: any SQLDatabase) async throws -> Subscription? {
        guard
            let row = try await db.raw(
                """
                SELECT bundle_id, environment, product_id, product_kind, user_id, ownership_type FROM store_transactions
                WHERE original_transaction_id = \(bind: originalTransactionId) ORDER BY purchase_date DESC, transaction_id DESC LIMIT 1
                """
            ).first()
        else { return nil }
        return Subscription(
            bundleId: try row.decode(column: "bundle_id", as: String.self),
            environment: try row.decode(column: "environment", as: String.self),
            productId: try row.decode(column: "product_id", as: String.self),
            productKind: ProductKind(rawValue: try row.decode(column: "product_kind", as: String.self)) ?? .consumable,
            holder: UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
            ownershipType: try row.decode(column: "ownership_type", as: String?.self)
        )
    }

    /// How many open invitations and live seats the team has.
    public static func openRows(_ originalTransactionId: String, on db: any SQLDatabase) async throws -> Int {
        let row = try await db.raw(
            """
            SELECT COUNT(*) AS n FROM team_seats WHERE original_transaction_id = \(bind: originalTransactionId)
                AND status IN ('invited', 'claiming', 'claimed')
            """
        ).first()
        return Int(try row?.decode(column: "n", as: Int64.self) ?? 0)
    }

    /// The live seats (claiming or claimed) `member` holds on the subscription.
    public static func liveSeat(of member: UserID, on originalTransactionId: String, on db: any SQLDatabase) async throws -> Row? {
        try await db.raw(
            """
            SELECT \(unsafeRaw: columns) FROM team_seats
            WHERE original_transaction_id = \(bind: originalTransactionId) AND member_id = \(bind: member.rawValue)
                AND status IN ('claiming', 'claimed')
            """
        ).first().map(row)
    }
}

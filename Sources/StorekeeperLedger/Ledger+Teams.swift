import Foundation
import StorekeeperCore
import StorekeeperStorage

/// The rosters of multiseat subscriptions whose developer manages invitations (API 1.23). The ledger keeps each step
/// before and after Apple is asked: an invitation, a claim under way (its id is the Claim Seat request identifier, so
/// a retry claims the same seat), the claimed seat, and its release — each audited on the member and announced to the
/// member as a `team.seat_changed` event. A member's access is read from the purchaser's grants (see
/// `AccountStore`), so it follows renewals, refunds and expiry without copies.
extension Ledger {
    /// The most open invitations and live seats one subscription's team may hold at once.
    public static let maximumTeamRows = 1_000

    /// Invites someone to a seat on `originalTransactionId`, which `purchaser` must hold: an `invited` row whose
    /// code's hash is `invitationHash` until `expiresAt`.
    public func inviteToTeam(
        originalTransactionId: String,
        purchaser: UserID,
        invitationHash: String,
        expiresAt: Date,
        cause: AuditCause
    ) async throws -> TeamSeatsTable.Row {
        try await write { uow in
            let subscription = try await Self.teamSubscription(originalTransactionId, purchaser: purchaser, in: uow)
            let row = TeamSeatsTable.Row(
                id: UUID().uuidString.lowercased(),
                bundleId: subscription.bundleId,
                environment: subscription.environment,
                originalTransactionId: originalTransactionId,
                purchaser: purchaser,
                invitationExpiresAt: expiresAt,
                status: .invited,
                createdAt: uow.now
            )
            try await TeamSeatsTable.insert(row, invitationHash: invitationHash, on: uow.db)
            uow.record(
                AuditEntry(
                    action: .teamInvited,
                    user: purchaser,
                    subject: originalTransactionId,
                    periodEnd: expiresAt,
                    cause: cause,
                    detail: "invitation \(row.id) to a seat on \(subscription.productId)",
                    createdAt: uow.now
                )
            )
            return row
        }
    }

    /// Starts claiming a seat for `member` with the invitation whose code hashes to `invitationHash`: the row turns
    /// `claiming` (persisted before Apple is asked). A claim of the same member already under way is returned as it
    /// is, so the caller asks Apple again with the same request identifier.
    public func beginSeatClaim(invitationHash: String, member: UserID, appTransactionId: String?) async throws -> TeamSeatsTable.Row {
        try await write { uow in
            guard var row = try await TeamSeatsTable.find(invitationHash: invitationHash, on: uow.db) else {
                throw TeamError.invitationNotFound
            }
            if row.status == .claiming, row.member == member { return row }
            guard row.status == .invited else {
                throw TeamError.invitationNotFound
            }
            if let expires = row.invitationExpiresAt, expires <= uow.now {
                throw TeamError.invitationExpired
            }
            try await Self.checkNewMember(member, row: row, in: uow)
            try await UsersTable.ensure([member], now: uow.now, on: uow.db)
            _ = try await TeamSeatsTable.transition(
                id: row.id,
                from: [.invited],
                to: .claiming,
                member: .some(member),
                appTransactionId: appTransactionId,
                on: uow.db
            )
            row.status = .claiming
            row.member = member
            row.appTransactionId = appTransactionId ?? row.appTransactionId
            return row
        }
    }

    /// An operator adds `member` to the team of `originalTransactionId` without an invitation: a `claiming` row (or
    /// the member's claim already under way).
    public func addTeamMember(
        originalTransactionId: String,
        member: UserID,
        appTransactionId: String?,
        admin: String
    ) async throws -> TeamSeatsTable.Row {
        try await write { uow in
            let subscription = try await Self.teamSubscription(originalTransactionId, purchaser: nil, in: uow)
            if let live = try await TeamSeatsTable.liveSeat(of: member, on: originalTransactionId, on: uow.db), live.status == .claiming {
                return live
            }
            let row = TeamSeatsTable.Row(
                id: UUID().uuidString.lowercased(),
                bundleId: subscription.bundleId,
                environment: subscription.environment,
                originalTransactionId: originalTransactionId,
                purchaser: subscription.holder,
                member: member,
                status: .claiming,
                appTransactionId: appTransactionId,
                createdAt: uow.now
            )
            try await Self.checkNewMember(member, row: row, in: uow)
            try await UsersTable.ensure([member], now: uow.now, on: uow.db)
            try await TeamSeatsTable.insert(row, invitationHash: nil, on: uow.db)
            uow.record(
                AuditEntry(
                    action: .teamInvited,
                    user: subscription.holder,
                    subject: originalTransactionId,
                    cause: .admin(admin),
                    detail: "\(member.rawValue) added to a seat on \(subscription.productId) (\(row.id))",
                    createdAt: uow.now
                )
            )
            return row
        }
    }

    /// Apple claimed the seat: the member shares the subscription from now.
    public func completeSeatClaim(id: String, seatClaimId: String, cause: AuditCause) async throws -> TeamSeatsTable.Row {
        try await write { uow in
            guard var row = try await TeamSeatsTable.find(id: id, on: uow.db) else {
                throw TeamError.seatNotFound(id)
            }
            if row.status == .claimed { return row }
            guard row.status == .claiming, let member = row.member else {
                throw TeamError.seatNotClaiming(id, status: row.status.rawValue)
            }
            _ = try await TeamSeatsTable.transition(
                id: id,
                from: [.claiming],
                to: .claimed,
                clearInvitation: true,
                seatClaimId: seatClaimId,
                claimedAt: uow.now,
                on: uow.db
            )
            row.status = .claimed
            row.seatClaimId = seatClaimId
            row.claimedAt = uow.now
            row.invitationExpiresAt = nil
            uow.record(
                AuditEntry(
                    action: .teamSeatClaimed,
                    user: member,
                    subject: row.originalTransactionId,
                    periodStart: uow.now,
                    cause: cause,
                    detail: "seat \(seatClaimId) on \(row.purchaser.rawValue)'s subscription (\(row.id))",
                    createdAt: uow.now
                )
            )
            uow.emit(Self.seatEvent(row, member: member, change: "claimed", at: uow.now))
            return row
        }
    }

    /// Apple associated the claimed seat with the member's app install (Associate Seat).
    public func associateSeat(id: String, appTransactionId: String, cause: AuditCause) async throws -> TeamSeatsTable.Row {
        try await write { uow in
            guard var row = try await TeamSeatsTable.find(id: id, on: uow.db), row.status == .claimed, let member = row.member else {
                throw TeamError.seatNotClaimed(id, status: nil)
            }
            _ = try await TeamSeatsTable.transition(id: id, from: [.claimed], to: .claimed, appTransactionId: appTransactionId, on: uow.db)
            row.appTransactionId = appTransactionId
            uow.record(
                AuditEntry(
                    action: .teamSeatAssociated,
                    user: member,
                    subject: row.originalTransactionId,
                    cause: cause,
                    detail: "seat \(row.seatClaimId ?? id) associated with app install \(appTransactionId)",
                    createdAt: uow.now
                )
            )
            return row
        }
    }

    /// Apple had no seat free (or refused the claim for good): an invitation is open again, an operator's addition
    /// is withdrawn.
    public func abandonSeatClaim(id: String) async throws {
        try await write { uow in
            guard let row = try await TeamSeatsTable.find(id: id, on: uow.db), row.status == .claiming else { return }
            if row.invitationExpiresAt != nil {
                _ = try await TeamSeatsTable.transition(id: id, from: [.claiming], to: .invited, member: .some(nil), on: uow.db)
            } else {
                _ = try await TeamSeatsTable.transition(
                    id: id,
                    from: [.claiming],
                    to: .cancelled,
                    releasedAt: uow.now,
                    releaseReason: "no_available_seats",
                    on: uow.db
                )
            }
        }
    }

    /// Ends a claimed seat (Apple unclaimed it) or withdraws an invitation; returns the row as it ends up.
    @discardableResult
    public func releaseSeat(id: String, reason: String, cause: AuditCause) async throws -> TeamSeatsTable.Row {
        try await write { uow in
            guard let row = try await TeamSeatsTable.find(id: id, on: uow.db) else {
                throw TeamError.seatNotFound(id)
            }
            switch row.status {
            case .invited:
                _ = try await TeamSeatsTable.transition(
                    id: id,
                    from: [.invited],
                    to: .cancelled,
                    clearInvitation: true,
                    releasedAt: uow.now,
                    releaseReason: reason,
                    on: uow.db
                )
                uow.record(
                    AuditEntry(
                        action: .teamInvitationCancelled,
                        user: row.purchaser,
                        subject: row.originalTransactionId,
                        cause: cause,
                        detail: "invitation \(id) withdrawn (\(reason))",
                        createdAt: uow.now
                    )
                )
            case .claimed:
                try await Self.release(row, at: uow.now, reason: reason, cause: cause, in: uow)
            case .claiming, .released, .cancelled:
                break
            }
            return try await TeamSeatsTable.find(id: id, on: uow.db) ?? row
        }
    }

    /// The subscription a team belongs to, which `purchaser` (when given) must hold.
    static func teamSubscription(_ original: String, purchaser: UserID?, in uow: UnitOfWork) async throws -> TeamSeatsTable.Subscription {
        guard let subscription = try await TeamSeatsTable.subscription(original, on: uow.db) else {
            throw TeamError.subscriptionNotFound(original)
        }
        if let purchaser, subscription.holder != purchaser {
            throw TeamError.subscriptionNotFound(original, ofYours: true)
        }
        guard subscription.productKind == .autoRenewable else {
            throw TeamError.notAutoRenewable(productId: subscription.productId)
        }
        guard TransactionCommerce.isSale(ownershipType: subscription.ownershipType) else {
            throw TeamError.notThePurchaser
        }
        guard try await TeamSeatsTable.openRows(original, on: uow.db) < maximumTeamRows else {
            throw TeamError.teamLimit(maximumTeamRows)
        }
        return subscription
    }

    static func checkNewMember(_ member: UserID, row: TeamSeatsTable.Row, in uow: UnitOfWork) async throws {
        guard member != row.purchaser else {
            throw TeamError.purchaserHasSubscription
        }
        if try await TeamSeatsTable.liveSeat(of: member, on: row.originalTransactionId, on: uow.db) != nil {
            throw TeamError.alreadyAMember(member)
        }
    }

    /// Releases Apple's claims `seatClaimIds` from `at` (`UNCLAIM_SEATS`: Apple already unclaimed them).
    static func releaseClaims(_ seatClaimIds: [String], at: Date, reason: String, cause: AuditCause, in uow: UnitOfWork) async throws {
        for row in try await TeamSeatsTable.claimed(seatClaimIds: seatClaimIds, on: uow.db) {
            try await release(row, at: max(at, row.claimedAt ?? at), reason: reason, cause: cause, in: uow)
        }
    }

    private static func release(_ row: TeamSeatsTable.Row, at: Date, reason: String, cause: AuditCause, in uow: UnitOfWork) async throws {
        guard
            try await TeamSeatsTable.transition(id: row.id, from: [.claimed], to: .released, releasedAt: at, releaseReason: reason, on: uow.db),
            let member = row.member
        else { return }
        var released = row
        released.status = .released
        released.releasedAt = at
        released.releaseReason = reason
        uow.record(
            AuditEntry(
                action: .teamSeatReleased,
                user: member,
                subject: row.originalTransactionId,
                periodStart: row.claimedAt,
                periodEnd: at,
                cause: cause,
                detail: "seat \(row.seatClaimId ?? row.id) on \(row.purchaser.rawValue)'s subscription released (\(reason))",
                createdAt: uow.now
            )
        )
        uow.emit(seatEvent(released, member: member, change: "released", at: uow.now))
    }

    static func seatEvent(_ row: TeamSeatsTable.Row, member: UserID, change: String, at: Date, extra: [String: String] = [:]) -> LedgerEvent {
        var details = [
            "change": change, "originalTransactionId": row.originalTransactionId, "seatId": row.id, "purchaserId": row.purchaser.rawValue,
            "environment": row.environment,
        ]
        if let claim = row.seatClaimId { details["seatClaimId"] = claim }
        if let reason = row.releaseReason { details["reason"] = reason }
        details.merge(extra) { _, new in new }
        return LedgerEvent(type: .teamSeatChanged, user: member, subject: row.originalTransactionId, occurredAt: at, details: details)
    }
}

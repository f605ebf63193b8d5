import AppStoreWire
import Crypto
import Foundation
import Logging
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Teams of multiseat subscriptions whose developer manages invitations (API 1.23): the purchaser invites members
/// (a single-use code, kept only as its hash), a member who accepts gets a seat claimed at Apple (Claim Seat, with the
/// request identifier persisted first, so a retry after a timeout claims the same seat), and the purchaser, the member
/// or an operator can give the seat back (Unclaim Seat). Apple's own releases arrive as `UNCLAIM_SEATS` and are applied
/// by the notification processor. A claimed seat lends the member the purchaser's entitlement for as long as both last.
public struct TeamService: Sendable {
    /// How long an invitation code can be accepted.
    public static let invitationLifetime: TimeInterval = 7 * 86_400

    let apps: AppRegistry
    let ledger: Ledger
    let provider: any DatabaseProvider
    let metrics: ServerMetrics
    let logger: Logger

    init(apps: AppRegistry, ledger: Ledger, provider: any DatabaseProvider, metrics: ServerMetrics, logger: Logger) {
        self.apps = apps
        self.ledger = ledger
        self.provider = provider
        self.metrics = metrics
        self.logger = logger
    }

    /// Who asks to give a seat back.
    public enum Actor: Sendable {
        /// The signed-in user: the purchaser (any seat of their team) or the member (their own seat).
        case user(UserID)
        case admin(String)
    }

    /// A team as one subscription's rows, and Apple's count of its seats when Apple answered.
    public struct Team: Sendable {
        public var originalTransactionId: String
        public var rows: [TeamSeatsTable.Row]
        public var seats: SeatInfoResponse?
        public var seatsError: String?
    }

    /// The hash an invitation code is kept under.
    static func hash(_ code: String) -> String { Base64URL.encode(Array(SHA256.hash(data: Data(code.utf8)))) }

    /// Invites someone to a seat on `originalTransactionId` (which `purchaser` must hold); returns the row and the code,
    /// shown once.
    public func invite(originalTransactionId: String, purchaser: UserID) async throws -> (row: TeamSeatsTable.Row, code: String) {
        let code = "ski_" + GuestStore.randomBase64URL(bytes: 32)
        let row = try await ledger.inviteToTeam(
            originalTransactionId: originalTransactionId,
            purchaser: purchaser,
            invitationHash: Self.hash(code),
            expiresAt: Date().addingTimeInterval(Self.invitationLifetime),
            cause: .teamSeat(originalTransactionId)
        )
        return (row, code)
    }

    /// `member` accepts an invitation: a seat is claimed at Apple for them.
    public func accept(code: String, member: UserID, appTransactionId: String?) async throws -> TeamSeatsTable.Row {
        let row = try await ledger.beginSeatClaim(invitationHash: Self.hash(code), member: member, appTransactionId: appTransactionId)
        return try await claim(row)
    }

    /// An operator gives `member` a seat on `originalTransactionId`.
    public func addMember(
        originalTransactionId: String,
        member: UserID,
        appTransactionId: String?,
        admin: String
    ) async throws
        -> TeamSeatsTable.Row
    {
        let row = try await ledger.addTeamMember(
            originalTransactionId: originalTransactionId,
            member: member,
            appTransactionId: appTransactionId,
            admin: admin
        )
        return try await claim(row)
    }

    /// Gives a seat back (Unclaim Seat) or withdraws an invitation.
    public func remove(originalTransactionId: String, seatId: String, by actor: Actor) async throws -> TeamSeatsTable.Row {
        guard var row = try await provider.withSession({ db in try await TeamSeatsTable.find(id: seatId, on: db) }),
            row.originalTransactionId == originalTransactionId
        else { throw TeamError.seatNotFound("\(seatId) on \(originalTransactionId)") }
        let reason: String
        let cause: AuditCause
        switch actor {
        case .user(let user):
            guard user == row.purchaser || (user == row.member && row.status != .invited) else {
                throw TeamError.seatNotFound("\(seatId) on \(originalTransactionId)")
            }
            reason = user == row.purchaser ? "removed_by_purchaser" : "left_by_member"
            cause = .teamSeat(row.id)
        case .admin(let name):
            reason = "removed_by_operator"
            cause = .admin(name)
        }
        if row.status == .claiming {
            // A claim whose answer never came: settled first with its request identifier (Apple answers the claim it
            // made, or makes it now) so that it can be given back. One Apple refuses is withdrawn by `claim`; an
            // outage answers 503 and the seat stays as it was.
            do {
                row = try await claim(row)
            } catch let error as any StorekeeperFailure where error.apiError.kind != .unavailable {
                guard let settled = try await provider.withSession({ db in try await TeamSeatsTable.find(id: seatId, on: db) }) else { throw error }
                row = settled
            }
            // The member's own seat went back to an open invitation: the purchaser's invitation stays theirs.
            if case .user(let user) = actor, user != row.purchaser, row.status == .invited { return row }
        }
        switch row.status {
        case .claimed:
            guard let claim = row.seatClaimId else { break }
            let client = try client(for: row)
            do {
                try await timed("unclaimSeat") {
                    try await client.unclaimSeat(originalTransactionId: row.originalTransactionId, seatClaimId: claim)
                }
            } catch let error as AppStoreServerAPIError where error.errorCode == .seatClaimIdNotFound {
                // Apple no longer has the claim (it released it and the notification is still on its way): release it here.
                logger.notice("Apple did not know a seat claim being unclaimed", metadata: ["seat": "\(row.id)", "claim": "\(claim)"])
            }
        case .claiming:
            throw TeamError.seatClaimInProgress
        case .invited, .released, .cancelled:
            break
        }
        return try await ledger.releaseSeat(id: row.id, reason: reason, cause: cause)
    }

    /// The member tells which app install uses their seat (Associate Seat), when it was not known at the claim.
    public func associate(
        originalTransactionId: String,
        seatId: String,
        member: UserID,
        appTransactionId: String
    ) async throws
        -> TeamSeatsTable.Row
    {
        guard let row = try await provider.withSession({ db in try await TeamSeatsTable.find(id: seatId, on: db) }),
            row.originalTransactionId == originalTransactionId, row.member == member
        else { throw TeamError.seatNotFound("\(seatId) of yours on \(originalTransactionId)") }
        guard row.status == .claimed, let claim = row.seatClaimId else {
            throw TeamError.seatNotClaimed(seatId, status: row.status.rawValue)
        }
        let client = try client(for: row)
        do {
            try await timed("associateSeat") {
                try await client.associateSeat(
                    originalTransactionId: originalTransactionId,
                    seatClaimId: claim,
                    request: AssociateSeatRequest(appTransactionId: appTransactionId)
                )
            }
        } catch let error as AppStoreServerAPIError where error.errorCode == .appTransactionIdNotFound {
            throw TeamError.unknownAppTransaction(appTransactionId)
        } catch let error as AppStoreServerAPIError where !error.isRetryable {
            throw TeamError.storeRefusedAssociation("\(error)")
        } catch is AppStoreServerAPIError {
            throw TeamError.storeUnavailable("Apple did not answer; try again")
        }
        return try await ledger.associateSeat(id: seatId, appTransactionId: appTransactionId, cause: .teamSeat(seatId))
    }

    /// The team of `originalTransactionId`, with Apple's seat count (the purchaser's own view is checked by the caller).
    public func team(_ originalTransactionId: String) async throws -> Team {
        let rows = try await provider.withSession { db in try await TeamSeatsTable.team(originalTransactionId, on: db) }
        guard let subscription = try await provider.withSession({ db in try await TeamSeatsTable.subscription(originalTransactionId, on: db) })
        else { throw TeamError.subscriptionNotFound(originalTransactionId) }
        var team = Team(originalTransactionId: originalTransactionId, rows: rows)
        guard let client = apps.apps.first(where: { $0.configuration.bundleId == subscription.bundleId })?.serverAPI(for: subscription.environment)
        else {
            team.seatsError = "no App Store Server API for the \(subscription.environment) environment"
            return team
        }
        do {
            team.seats = try await timed("getSeatInfo") { try await client.getSeatInfo(originalTransactionId: originalTransactionId) }
        } catch let error as AppStoreServerAPIError {
            team.seatsError = error.description
        }
        return team
    }

    /// The subscriptions' holder, for checking who may see a team.
    public func holder(of originalTransactionId: String) async throws -> UserID? {
        try await provider.withSession { db in try await TeamSeatsTable.subscription(originalTransactionId, on: db)?.holder }
    }

    /// Every row `user` is purchaser or member of.
    public func rows(of user: UserID) async throws -> [TeamSeatsTable.Row] {
        try await provider.withSession { db in try await TeamSeatsTable.rows(of: user, on: db) }
    }

    /// Asks Apple for the seat of a `claiming` row and records the answer.
    private func claim(_ row: TeamSeatsTable.Row) async throws -> TeamSeatsTable.Row {
        guard row.status == .claiming else { return row }
        let client = try client(for: row)
        let answer: ClaimSeatResponse
        do {
            answer = try await timed("claimSeat") {
                try await client.claimSeat(
                    originalTransactionId: row.originalTransactionId,
                    request: ClaimSeatRequest(requestIdentifier: row.id, appTransactionId: row.appTransactionId)
                )
            }
        } catch let error as AppStoreServerAPIError where !error.isRetryable {
            try await ledger.abandonSeatClaim(id: row.id)
            switch error.errorCode {
            case .noAvailableSeats?:
                throw TeamError.noAvailableSeats
            case .transactionNotDevManagedGroup?:
                throw TeamError.notDeveloperManaged
            case .appTransactionIdNotFound?:
                throw TeamError.unknownAppTransaction(row.appTransactionId ?? "")
            default:
                throw TeamError.storeRefusedClaim("\(error)")
            }
        } catch let error as AppStoreServerAPIError {
            // A timeout or an outage: the claim stays under way; asking again uses the same request identifier.
            logger.notice("claiming a seat at Apple failed; it can be asked again", metadata: ["seat": "\(row.id)", "error": "\(error)"])
            throw TeamError.storeUnavailable("Apple did not answer the seat claim; try again")
        }
        guard let seatClaimId = answer.seatClaimId, !seatClaimId.isEmpty, seatClaimId.utf8.count <= 100 else {
            throw TeamError.storeUnavailable("Apple's seat claim answer had no seatClaimId")
        }
        return try await ledger.completeSeatClaim(id: row.id, seatClaimId: seatClaimId, cause: .teamSeat(row.id))
    }

    private func client(for row: TeamSeatsTable.Row) throws -> AppStoreServerAPIClient {
        guard let client = apps.apps.first(where: { $0.configuration.bundleId == row.bundleId })?.serverAPI(for: row.environment) else {
            throw TeamError.noServerAPI(bundleId: row.bundleId, environment: row.environment)
        }
        return client
    }

    private func timed<T: Sendable>(_ endpoint: String, _ body: () async throws -> T) async throws -> T {
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let value = try await body()
            metrics.appleCall(endpoint: endpoint, outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            return value
        } catch {
            metrics.appleCall(endpoint: endpoint, outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            throw error
        }
    }
}

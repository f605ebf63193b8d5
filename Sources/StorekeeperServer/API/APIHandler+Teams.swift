import AppStoreWire
import Foundation
import Logging
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLedger
import StorekeeperServerAPI
import StorekeeperStorage

/// Teams of multiseat subscriptions (see ``TeamService``): the purchaser's and member's operations under `/v1/me`, and
/// support's under `/v1/admin/teams`.
extension APIHandler {
    var teams: TeamService {
        get throws {
            guard let teamService else { throw StorekeeperError(.internal, code: "no_team_service", message: "teams are not configured") }
            return teamService
        }
    }

    static func original(_ text: String) throws -> String {
        try InputText.check(text, field: "original", maxBytes: 100)
    }

    static func seatId(_ text: String) throws -> String {
        try InputText.check(text, field: "seat", maxBytes: 100)
    }

    func getMyTeams(_ input: Operations.GetMyTeams.Input) async throws -> Operations.GetMyTeams.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let rows = try await teams.rows(of: user)
        var purchased: [String: [TeamSeatsTable.Row]] = [:]
        var order: [String] = []
        for row in rows where row.purchaser == user {
            if purchased[row.originalTransactionId] == nil { order.append(row.originalTransactionId) }
            purchased[row.originalTransactionId, default: []].append(row)
        }
        let list = Components.Schemas.TeamList(
            teams: try order.map { original in
                try Components.Schemas.Team(TeamService.Team(originalTransactionId: original, rows: purchased[original] ?? []), purchaser: user)
            },
            memberships: try rows.filter { $0.member == user && $0.purchaser != user }.map(Components.Schemas.TeamSeat.init)
        )
        return .ok(.init(body: .json(list)))
    }

    func getMyTeam(_ input: Operations.GetMyTeam.Input) async throws -> Operations.GetMyTeam.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let original = try Self.original(input.path.original)
        guard try await teams.holder(of: original) == user else {
            throw StorekeeperError.notFound("subscription_not_found", "no subscription \(original) of yours")
        }
        return .ok(.init(body: .json(try Components.Schemas.Team(try await teams.team(original), purchaser: user))))
    }

    func createTeamInvitation(_ input: Operations.CreateTeamInvitation.Input) async throws -> Operations.CreateTeamInvitation.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let original = try Self.original(input.path.original)
        let (row, code) = try await teams.invite(originalTransactionId: original, purchaser: user)
        return .created(.init(body: .json(.init(invitationCode: code, seat: try .init(row)))))
    }

    func acceptTeamInvitation(_ input: Operations.AcceptTeamInvitation.Input) async throws -> Operations.AcceptTeamInvitation.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let body =
            switch input.body {
            case .json(let value): value
            }
        let code = try InputText.check(body.invitationCode, field: "invitationCode", maxBytes: 200)
        let install = try InputText.check(body.appTransactionId, field: "appTransactionId", maxBytes: 100)
        let row = try await teams.accept(code: code, member: user, appTransactionId: install)
        return .ok(.init(body: .json(try .init(row))))
    }

    func removeTeamSeat(_ input: Operations.RemoveTeamSeat.Input) async throws -> Operations.RemoveTeamSeat.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let row = try await teams.remove(
            originalTransactionId: try Self.original(input.path.original),
            seatId: try Self.seatId(input.path.seat),
            by: .user(user)
        )
        return .ok(.init(body: .json(try .init(row))))
    }

    func associateTeamSeat(_ input: Operations.AssociateTeamSeat.Input) async throws -> Operations.AssociateTeamSeat.Output {
        let (user, _) = try RequestScope.current().clientUser()
        let body =
            switch input.body {
            case .json(let value): value
            }
        let row = try await teams.associate(
            originalTransactionId: try Self.original(input.path.original),
            seatId: try Self.seatId(input.path.seat),
            member: user,
            appTransactionId: try InputText.check(body.appTransactionId, field: "appTransactionId", maxBytes: 100)
        )
        return .ok(.init(body: .json(try .init(row))))
    }

    func adminGetTeam(_ input: Operations.AdminGetTeam.Input) async throws -> Operations.AdminGetTeam.Output {
        let original = try Self.original(input.path.original)
        guard let holder = try await teams.holder(of: original) else {
            throw StorekeeperError.notFound("subscription_not_found", "no subscription \(original)")
        }
        return .ok(.init(body: .json(try Components.Schemas.Team(try await teams.team(original), purchaser: holder))))
    }

    func adminAddTeamMember(_ input: Operations.AdminAddTeamMember.Input) async throws -> Operations.AdminAddTeamMember.Output {
        let admin = try RequestScope.current().admin()
        let body =
            switch input.body {
            case .json(let value): value
            }
        let row = try await teams.addMember(
            originalTransactionId: try Self.original(input.path.original),
            member: try Self.user(body.userId),
            appTransactionId: try InputText.check(body.appTransactionId, field: "appTransactionId", maxBytes: 100),
            admin: admin
        )
        return .ok(.init(body: .json(try .init(row))))
    }

    func adminRemoveTeamSeat(_ input: Operations.AdminRemoveTeamSeat.Input) async throws -> Operations.AdminRemoveTeamSeat.Output {
        let admin = try RequestScope.current().admin()
        let row = try await teams.remove(
            originalTransactionId: try Self.original(input.path.original),
            seatId: try Self.seatId(input.path.seat),
            by: .admin(admin)
        )
        return .ok(.init(body: .json(try .init(row))))
    }
}

extension Components.Schemas.TeamSeat {
    init(_ row: TeamSeatsTable.Row) throws {
        self.init(
            seatId: row.id,
            originalTransactionId: row.originalTransactionId,
            purchaserId: row.purchaser.rawValue,
            environment: row.environment,
            status: try documented(row.status.rawValue),
            memberId: row.member?.rawValue,
            seatClaimId: row.seatClaimId,
            appTransactionId: row.appTransactionId,
            invitationExpiresAt: row.status == .invited ? row.invitationExpiresAt : nil,
            createdAt: row.createdAt,
            claimedAt: row.claimedAt,
            releasedAt: row.releasedAt,
            releaseReason: row.releaseReason
        )
    }
}

extension Components.Schemas.Team {
    init(_ team: TeamService.Team, purchaser: UserID) throws {
        self.init(
            originalTransactionId: team.originalTransactionId,
            purchaserId: purchaser.rawValue,
            seats: try team.rows.map(Components.Schemas.TeamSeat.init),
            totalSeatCount: team.seats?.totalSeatCount.map(Int.init),
            availableSeatCount: team.seats?.availableSeatCount.map(Int.init),
            appleSeatClaimIds: team.seats?.assignedSeatClaimIds,
            appleError: team.seatsError
        )
    }
}

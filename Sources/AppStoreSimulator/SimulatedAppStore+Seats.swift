import AppStoreWire
import Foundation

/// The seats claimed on one multiseat purchase: each claim's member app install (nil until associated), in claim
/// order, and the developer's request ids already answered.
struct SeatClaims: Sendable {
    var members: [String: String?] = [:]
    var order: [String] = []
    var requests: [String: String] = [:]
}

/// Why a seat endpoint refused (Apple's names; the numbers are ``APIErrorCode``'s provisional ones).
public enum SeatError: Error, Sendable, Equatable {
    case unknownTransaction
    case notDeveloperManaged
    case noAvailableSeats
    case seatClaimNotFound
    case appTransactionNotFound
}

/// Apple's seat endpoints for multiseat subscriptions whose developer manages invitations (API 1.23, sandbox only):
/// claim a seat for a member, see the seats, unclaim and associate; and Apple unclaiming seats itself
/// (`UNCLAIM_SEATS`).
extension SimulatedAppStore {
    /// The purchaser's subscription of a developer-managed multiseat purchase, and its seats this period.
    func managedSeats(_ originalTransactionId: String) throws(SeatError) -> (subscription: SubscriptionRecord, seats: Int) {
        guard environment == .sandbox, let subscription = subscriptions[originalTransactionId],
            let latest = transactions[subscription.latestTransactionId]
        else { throw .unknownTransaction }
        guard subscription.seats != nil, latest.multiSeatInfo?.invitationManagement == .developer else { throw .notDeveloperManaged }
        let seats = Int(latest.quantity ?? 1) - Int(latest.multiSeatInfo?.revokedSeatQuantity ?? 0)
        return (subscription, max(0, seats))
    }

    /// Get Seat Info.
    public func seatInfo(originalTransactionId: String) throws(SeatError) -> SeatInfoResponse {
        let (_, seats) = try managedSeats(originalTransactionId)
        let claims = seatClaims[originalTransactionId] ?? SeatClaims()
        return SeatInfoResponse(
            totalSeatCount: Int32(seats),
            availableSeatCount: Int32(max(0, seats - claims.order.count)),
            assignedSeatClaimIds: claims.order
        )
    }

    /// Claim Seat: a new claim id, or the one a request with the same `requestIdentifier` got before.
    public func claimSeat(originalTransactionId: String, requestIdentifier: String, appTransactionId: String?) throws(SeatError) -> String {
        let (_, seats) = try managedSeats(originalTransactionId)
        var claims = seatClaims[originalTransactionId] ?? SeatClaims()
        if let claimed = claims.requests[requestIdentifier] { return claimed }
        if let appTransactionId, !accounts.values.contains(where: { $0.appTransactionId == appTransactionId }) {
            throw .appTransactionNotFound
        }
        guard claims.order.count < seats else { throw .noAvailableSeats }
        let id = generator.uuid().uuidString.lowercased()
        claims.members[id] = .some(appTransactionId)
        claims.order.append(id)
        claims.requests[requestIdentifier] = id
        seatClaims[originalTransactionId] = claims
        return id
    }

    /// Unclaim Seat: the seat is free again.
    public func unclaimSeat(originalTransactionId: String, seatClaimId: String) throws(SeatError) {
        _ = try managedSeats(originalTransactionId)
        guard var claims = seatClaims[originalTransactionId], claims.members[seatClaimId] != nil else { throw .seatClaimNotFound }
        claims.members[seatClaimId] = nil
        claims.order.removeAll { $0 == seatClaimId }
        seatClaims[originalTransactionId] = claims
    }

    /// Associate Seat: the claimed seat belongs to this app install.
    public func associateSeat(originalTransactionId: String, seatClaimId: String, appTransactionId: String) throws(SeatError) {
        _ = try managedSeats(originalTransactionId)
        guard var claims = seatClaims[originalTransactionId], claims.members[seatClaimId] != nil else { throw .seatClaimNotFound }
        guard accounts.values.contains(where: { $0.appTransactionId == appTransactionId }) else { throw .appTransactionNotFound }
        claims.members[seatClaimId] = .some(appTransactionId)
        seatClaims[originalTransactionId] = claims
    }

    /// The member install a claim is associated with (nil: none yet).
    public func seatMember(originalTransactionId: String, seatClaimId: String) -> String? {
        seatClaims[originalTransactionId]?.members[seatClaimId] ?? nil
    }

    /// Apple unclaims seats itself (a member left the group, the purchaser changed it in Settings): `UNCLAIM_SEATS`
    /// naming the claims, which are already free.
    public func appleUnclaimsSeats(originalTransactionId: String, seatClaimIds: [String]) throws {
        let (subscription, _) = try managedSeats(originalTransactionId)
        guard var claims = seatClaims[originalTransactionId], !seatClaimIds.isEmpty,
            seatClaimIds.allSatisfy({ claims.members[$0] != nil })
        else { throw SeatError.seatClaimNotFound }
        for id in seatClaimIds {
            claims.members[id] = nil
            claims.order.removeAll { $0 == id }
        }
        seatClaims[originalTransactionId] = claims
        try notify(
            .unclaimSeats,
            nil,
            transaction: transactions[subscription.latestTransactionId],
            renewal: nil,
            status: nil,
            unclaimInfo: UnclaimInfo(unclaimSeatIds: seatClaimIds)
        )
    }

    // MARK: - Groups whose invitations Apple hosts

    /// A member accepts the purchaser's invitation from Apple's sheet (invitation management `APPLE`): the member's
    /// account gets a copy of its own, `ASSIGNED` (`SUBSCRIBED` / `INITIAL_BUY`), for the purchaser's current period,
    /// renewing while the purchaser's subscription does. One copy per seat.
    @discardableResult
    public func joinGroup(originalTransactionId: String, memberAccount: String, appAccountToken: UUID? = nil) throws -> SimulatedPurchase {
        guard let purchase = subscriptions[originalTransactionId], let seats = purchase.seats,
            let latest = transactions[purchase.latestTransactionId]
        else { throw SimulatorError.notAllowed("\(originalTransactionId) is not a multiseat subscription") }
        guard latest.multiSeatInfo?.invitationManagement == .apple else {
            throw SimulatorError.notAllowed("the developer hosts this group's invitations (claim seats through the seat endpoints)")
        }
        guard purchase.state == .active || purchase.state == .gracePeriod else {
            throw SimulatorError.notAllowed("the group subscription is not active")
        }
        guard memberAccount != purchase.accountId else { throw SimulatorError.notAllowed("the purchaser holds the subscription itself") }
        guard groupMembers(originalTransactionId: originalTransactionId).count < seats else {
            throw SimulatorError.notAllowed("every seat of \(originalTransactionId) is taken")
        }
        // The copy's period is the purchaser's: it renews when the purchaser's does.
        return try assign(productId: purchase.productId, to: memberAccount, appAccountToken: appAccountToken, group: purchase)
    }

    /// The original transaction ids of the group's live member copies, oldest first.
    public func groupMembers(originalTransactionId: String) -> [String] {
        subscriptions.values.filter { $0.groupPurchase == originalTransactionId && $0.state != .revoked && $0.state != .expired }
            .sorted { ($0.recentStart ?? .distantPast, $0.originalTransactionId) < ($1.recentStart ?? .distantPast, $1.originalTransactionId) }
            .map(\.originalTransactionId)
    }

    /// The simulator's truth about a multiseat purchase's seats: bought, refunded, the developer-hosted claims (and the
    /// install each is associated with) and the Apple-hosted members' copies.
    public func seatTruth(originalTransactionId: String) throws -> SeatTruth {
        guard let purchase = subscriptions[originalTransactionId], purchase.seats != nil, let latest = transactions[purchase.latestTransactionId]
        else { throw SimulatorError.notAllowed("\(originalTransactionId) is not a multiseat subscription") }
        let claims = seatClaims[originalTransactionId] ?? SeatClaims()
        return SeatTruth(
            invitationManagement: latest.multiSeatInfo?.invitationManagement?.rawValue ?? "",
            bought: Int(latest.quantity ?? 1),
            refunded: Int(latest.multiSeatInfo?.revokedSeatQuantity ?? 0),
            claims: claims.order.map { SeatTruth.Claim(seatClaimId: $0, appTransactionId: claims.members[$0] ?? nil) },
            members: groupMembers(originalTransactionId: originalTransactionId)
        )
    }
}

/// A multiseat purchase's seats as the simulator knows them (`GET /control/subscriptions/{original}/seats`).
public struct SeatTruth: Codable, Sendable, Hashable {
    public struct Claim: Codable, Sendable, Hashable {
        public var seatClaimId: String
        public var appTransactionId: String?
    }

    /// `APPLE` or `DEVELOPER`.
    public var invitationManagement: String
    public var bought: Int
    public var refunded: Int
    /// Developer-hosted: the seat claims, oldest first.
    public var claims: [Claim]
    /// Apple-hosted: the members' copies (original transaction ids), oldest first.
    public var members: [String]
}

/// Why a team of a multiseat subscription refused a change: invitations, seats and their claims at the store.
public enum TeamError: StorekeeperFailure, Hashable {
    case invitationNotFound
    case invitationExpired
    case seatNotFound(String)
    case seatNotClaiming(String, status: String)
    case seatNotClaimed(String, status: String?)
    case seatClaimInProgress
    case subscriptionNotFound(String, ofYours: Bool = false)
    case notAutoRenewable(productId: String)
    case notThePurchaser
    /// The store says the purchase is not a multiseat one whose developer manages invitations.
    case notDeveloperManaged
    case teamLimit(Int)
    case purchaserHasSubscription
    case alreadyAMember(UserID)
    case noAvailableSeats
    case unknownAppTransaction(String)
    case storeRefusedClaim(String)
    case storeRefusedAssociation(String)
    case storeUnavailable(String)
    case noServerAPI(bundleId: String, environment: String)

    public var apiError: StorekeeperError {
        switch self {
        case .invitationNotFound: .notFound("invitation_not_found", "no invitation has this code")
        case .invitationExpired: StorekeeperError(.conflict, code: "invitation_expired", message: "the invitation expired; ask for a new one")
        case .seatNotFound(let seat): .notFound("seat_not_found", "no seat \(seat)")
        case .seatNotClaiming(let seat, let status): StorekeeperError(.conflict, code: "seat_not_claiming", message: "seat \(seat) is \(status)")
        case .seatNotClaimed(let seat, let status):
            StorekeeperError(.conflict, code: "seat_not_claimed", message: "seat \(seat) is \(status ?? "not claimed")")
        case .seatClaimInProgress:
            StorekeeperError(.conflict, code: "seat_claim_in_progress", message: "the seat is being claimed; try again shortly")
        case .subscriptionNotFound(let original, let ofYours):
            .notFound("subscription_not_found", "no subscription \(original)\(ofYours ? " of yours" : "")")
        case .notAutoRenewable(let productId):
            StorekeeperError(.conflict, code: "not_a_team", message: "\(productId) is not an auto-renewable subscription")
        case .notThePurchaser:
            StorekeeperError(.conflict, code: "not_a_team", message: "only the purchaser of a multiseat subscription manages its seats")
        case .notDeveloperManaged:
            StorekeeperError(
                .conflict,
                code: "not_a_team",
                message: "Apple says this is not a multiseat purchase whose developer manages invitations"
            )
        case .teamLimit(let limit):
            StorekeeperError(.conflict, code: "team_limit", message: "a team holds at most \(limit) invitations and seats")
        case .purchaserHasSubscription:
            StorekeeperError(.conflict, code: "purchaser_has_subscription", message: "the purchaser holds the subscription itself")
        case .alreadyAMember(let member):
            StorekeeperError(.conflict, code: "already_a_member", message: "\(member.rawValue) already has a seat on this subscription")
        case .noAvailableSeats:
            StorekeeperError(.conflict, code: "no_available_seats", message: "every seat of this subscription is claimed")
        case .unknownAppTransaction(let install): .invalidInput("unknown_app_transaction", "Apple knows no app install \(install)")
        case .storeRefusedClaim(let why): StorekeeperError(.refused, code: "seat_claim_refused", message: "Apple refused the seat claim: \(why)")
        case .storeRefusedAssociation(let why):
            StorekeeperError(.refused, code: "seat_association_refused", message: "Apple refused to associate the seat: \(why)")
        case .storeUnavailable(let what): StorekeeperError(.unavailable, code: "apple_unavailable", message: what)
        case .noServerAPI(let bundleId, let environment):
            StorekeeperError(
                .conflict,
                code: "no_server_api",
                message: "no App Store Server API is configured for \(bundleId) in the \(environment) environment"
            )
        }
    }
}

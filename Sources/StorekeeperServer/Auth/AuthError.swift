import StorekeeperCore

/// Why a caller was not let in: who it is could not be proved, or it may not do this.
enum AuthError: StorekeeperFailure, Hashable {
    case bearerExpected
    case tokenRefused(String)
    case tokenSubjectUnusable
    case unknownAPIKey
    case actingUserUnusable
    case guestsDisabled
    case unknownGuestCredential
    case deviceIdNotACredential
    case noCredential
    /// An API-key call that acts for a user must name one.
    case userRequired
    case adminKeyRequired
    case insufficientScope(key: String, scope: String)
    case tooManyGuests(perHour: Int, retryAfterSeconds: Int)
    /// A route reached without its group's authentication (a wiring mistake): it fails closed.
    case unauthenticated

    var apiError: StorekeeperError {
        switch self {
        case .bearerExpected: StorekeeperError(.unauthenticated, code: "invalid_token", message: "expected a Bearer user token")
        case .tokenRefused(let why): StorekeeperError(.unauthenticated, code: "invalid_token", message: "user token refused: \(why)")
        case .tokenSubjectUnusable:
            StorekeeperError(.unauthenticated, code: "invalid_token", message: "the token's subject is not a usable user id")
        case .unknownAPIKey: StorekeeperError(.unauthenticated, code: "invalid_api_key", message: "unknown API key")
        case .actingUserUnusable: StorekeeperError(.invalidInput, code: "invalid_user", message: "X-Storekeeper-User is not a usable user id")
        case .guestsDisabled: StorekeeperError(.unauthenticated, code: "guests_disabled", message: "sign in first: guest purchases are off")
        case .unknownGuestCredential:
            StorekeeperError(.unauthenticated, code: "invalid_guest_token", message: "the guest credential is not one this server issued")
        case .deviceIdNotACredential:
            StorekeeperError(
                .unauthenticated,
                code: "device_id_not_accepted",
                message: "a device id is not a credential: get one from POST /v1/guests and send it as X-Storekeeper-Guest "
                    + "(guests from before credentials: POST /v1/guests/claim)"
            )
        case .noCredential:
            StorekeeperError(
                .unauthenticated,
                code: "unauthenticated",
                message: "send a Bearer user token, an X-API-Key, or an X-Storekeeper-Guest credential"
            )
        case .userRequired: StorekeeperError(.invalidInput, code: "user_required", message: "name the user with X-Storekeeper-User")
        case .adminKeyRequired: StorekeeperError(.unauthenticated, code: "admin_key_required", message: "a valid X-Admin-Key is required")
        case .insufficientScope(let key, let scope):
            StorekeeperError(
                .notPermitted,
                code: "insufficient_scope",
                message: "the admin key \(key) does not hold the scope \(scope) this operation needs"
            )
        case .tooManyGuests(let perHour, let seconds):
            StorekeeperError(
                .rateLimited,
                code: "too_many_guests",
                message: "this address was issued \(perHour) guests in the last hour; try again in \(seconds) s",
                details: ["retryAfterSeconds": String(seconds)]
            )
        case .unauthenticated: StorekeeperError(.unauthenticated, code: "unauthenticated", message: "authentication required")
        }
    }
}

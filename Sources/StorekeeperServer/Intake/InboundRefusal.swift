import StorekeeperCore

/// Why a message the store sent — a notification, a retention request — was refused. Refusals are final
/// (`rejected`): the same bytes would be refused again, so the store is told not to retry them.
enum InboundRefusal: StorekeeperFailure, Hashable {
    /// The signature or its format; `code` is the verifier's (`invalid_signature`, `malformed`, ...).
    case unverified(code: String, message: String, what: String)
    /// For an app (or environment) this server does not serve.
    case wrongApp(String)
    /// The URL names an app this server does not have.
    case unknownApp(String)
    case missingNotificationUUID
    /// A V1 notification whose `password` is not the app's shared secret (V1 bodies are unsigned).
    case wrongPassword
    case missingFields(String)
    /// Signed longer ago than the store's own deadline for an answer.
    case stale(String)
    /// Answered before.
    case replayed(String)

    var apiError: StorekeeperError {
        switch self {
        case .unverified(let code, let message, let what):
            .rejected(code == "malformed" ? .invalidInput : .refused, code, "\(what) refused: \(message)")
        case .wrongApp(let why): .rejected("wrong_app", why)
        case .unknownApp(let name): .notFound("unknown_app", "no app named \(name)")
        case .missingNotificationUUID: .rejected("missing_notification_uuid", "no notificationUUID")
        case .wrongPassword: .rejected(.notPermitted, "invalid_password", "the shared secret does not match (or none is configured)")
        case .missingFields(let why): .rejected(.invalidInput, "missing_fields", why)
        case .stale(let why): .rejected(.refused, "stale_request", why)
        case .replayed(let why): .rejected(.conflict, "replayed_request", why)
        }
    }
}

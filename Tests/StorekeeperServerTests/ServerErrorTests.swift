import HTTPTypes
import StorekeeperCore
import Testing

@testable import StorekeeperServer

/// The server's own domains — callers (`AuthError`) and what the store sends (`InboundRefusal`) — answer as the
/// codes openapi.yaml documents, with the status each kind maps to.
@Suite struct ServerErrorTests {
    @Test func callersThatAreNotLetIn() {
        let cases: [(AuthError, String, Int)] = [
            (.bearerExpected, "invalid_token", 401), (.tokenRefused("expired"), "invalid_token", 401),
            (.tokenSubjectUnusable, "invalid_token", 401), (.unknownAPIKey, "invalid_api_key", 401),
            (.actingUserUnusable, "invalid_user", 400), (.guestsDisabled, "guests_disabled", 401),
            (.unknownGuestCredential, "invalid_guest_token", 401), (.deviceIdNotACredential, "device_id_not_accepted", 401),
            (.noCredential, "unauthenticated", 401), (.userRequired, "user_required", 400),
            (.adminKeyRequired, "admin_key_required", 401), (.insufficientScope(key: "ops", scope: "wallet"), "insufficient_scope", 403),
            (.tooManyGuests(perHour: 30, retryAfterSeconds: 12), "too_many_guests", 429), (.unauthenticated, "unauthenticated", 401),
        ]
        for (error, code, status) in cases {
            #expect(error.apiError.code == code)
            #expect(error.apiError.kind.status.code == status, "\(code)")
        }
        #expect(AuthError.tooManyGuests(perHour: 30, retryAfterSeconds: 12).apiError.details == ["retryAfterSeconds": "12"])
    }

    @Test func storeMessagesThatAreRefusedForGood() {
        let cases: [(InboundRefusal, String, Int)] = [
            (.unverified(code: "invalid_signature", message: "x", what: "notification"), "invalid_signature", 422),
            (.unverified(code: "malformed", message: "x", what: "notification"), "malformed", 400),
            (.wrongApp("x"), "wrong_app", 422), (.unknownApp("b"), "unknown_app", 404),
            (.missingNotificationUUID, "missing_notification_uuid", 422), (.wrongPassword, "invalid_password", 403),
            (.missingFields("x"), "missing_fields", 400), (.stale("x"), "stale_request", 422),
            (.replayed("x"), "replayed_request", 409),
        ]
        for (refusal, code, status) in cases {
            #expect(refusal.apiError.code == code)
            #expect(refusal.apiError.kind.status.code == status, "\(code)")
        }
        // Refused for good: the store is told not to send the same bytes again (the unknown app aside: a wrong URL).
        #expect(InboundRefusal.wrongApp("x").apiError.outcome == .rejected)
    }
}

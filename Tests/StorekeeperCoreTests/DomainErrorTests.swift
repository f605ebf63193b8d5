import StorekeeperCore
import Testing

/// Each domain's typed errors answer as the API error codes clients already know (openapi.yaml), and code that
/// decides on an outcome sees a domain's error and the edge's alike.
@Suite struct DomainErrorTests {
    @Test func teamErrorsKeepTheirCodesAndKinds() {
        let cases: [(TeamError, String, StorekeeperError.Kind)] = [
            (.invitationNotFound, "invitation_not_found", .notFound),
            (.invitationExpired, "invitation_expired", .conflict),
            (.seatNotFound("s1"), "seat_not_found", .notFound),
            (.seatNotClaiming("s1", status: "invited"), "seat_not_claiming", .conflict),
            (.seatNotClaimed("s1", status: nil), "seat_not_claimed", .conflict),
            (.seatClaimInProgress, "seat_claim_in_progress", .conflict),
            (.subscriptionNotFound("1000"), "subscription_not_found", .notFound),
            (.notAutoRenewable(productId: "coins"), "not_a_team", .conflict),
            (.notThePurchaser, "not_a_team", .conflict),
            (.notDeveloperManaged, "not_a_team", .conflict),
            (.teamLimit(1000), "team_limit", .conflict),
            (.purchaserHasSubscription, "purchaser_has_subscription", .conflict),
            (.alreadyAMember(UserID(rawValue: "ann")), "already_a_member", .conflict),
            (.noAvailableSeats, "no_available_seats", .conflict),
            (.unknownAppTransaction("7"), "unknown_app_transaction", .invalidInput),
            (.storeRefusedClaim("x"), "seat_claim_refused", .refused),
            (.storeRefusedAssociation("x"), "seat_association_refused", .refused),
            (.storeUnavailable("x"), "apple_unavailable", .unavailable),
            (.noServerAPI(bundleId: "b", environment: "Sandbox"), "no_server_api", .conflict),
        ]
        for (error, code, kind) in cases {
            #expect(error.apiError.code == code)
            #expect(error.apiError.kind == kind, "\(code)")
        }
        #expect(TeamError.subscriptionNotFound("1000", ofYours: true).apiError.message == "no subscription 1000 of yours")
        #expect(TeamError.alreadyAMember(UserID(rawValue: "ann")).description.hasPrefix("already_a_member: ann "))
    }

    @Test func walletSupportAndLedgerErrorsKeepTheirCodesAndKinds() {
        let cases: [(any StorekeeperFailure, String, StorekeeperError.Kind)] = [
            (WalletError.invalidSpend, "invalid_amount", .invalidInput),
            (WalletError.invalidAdjustment, "invalid_amount", .invalidInput),
            (WalletError.balanceLimit("ann"), "balance_limit", .conflict),
            (WalletError.accountRequired, "account_required", .notPermitted),
            (SupportError.grantEndsInPast, "invalid_until", .invalidInput),
            (SupportError.entitlementNotActive("pro", user: UserID(rawValue: "ann")), "entitlement_not_active", .notFound),
            (SupportError.notPending(transactionId: "1"), "not_pending", .conflict),
            (SupportError.parkedWithoutDetails(transactionId: "1"), "missing_details", .conflict),
            (SupportError.alreadyDelivered(transactionId: "1"), "already_delivered", .conflict),
            (SupportError.notRetryable(notificationId: "n"), "not_retryable", .conflict),
            (LedgerError.noResult, "ledger_no_result", .internal),
            (LedgerError.inconsistent("x"), "ledger_inconsistent", .internal),
            (LedgerError.deliveryDidNotSettle, "delivery_rounds", .internal),
            (LedgerError.noEventSequence(UserID(rawValue: "ann")), "event_sequence", .internal),
            (LedgerError.guestIdReused, "guest_id", .internal),
        ]
        for (error, code, kind) in cases {
            #expect(error.apiError.code == code)
            #expect(error.apiError.kind == kind, "\(code)")
            #expect(error.apiError.outcome == nil, "only purchase submissions carry an outcome")
        }
        #expect(WalletLimits.limitReached("x") == .balanceLimit("x"))
    }

    @Test func purchaseRefusalsTellTheClientWhetherToFinish() {
        let cases: [(PurchaseRefusal, String, StorekeeperError.Kind, StorekeeperError.Outcome)] = [
            (.unverified(code: "invalid_signature", message: "x"), "invalid_signature", .refused, .rejected),
            (.unverified(code: "malformed", message: "x"), "malformed", .invalidInput, .rejected),
            (.wrongApp("x"), "wrong_app", .refused, .rejected),
            (.incompleteTransaction("x"), "incomplete_transaction", .refused, .rejected),
            (.sandboxNotAllowed, "sandbox_not_allowed", .refused, .rejected),
            (.revoked(transactionId: "1"), "revoked", .refused, .rejected),
            (.unknownProduct("p"), "unknown_product", .refused, .retry),
            (.ownedByAnotherUser(transactionId: "1"), "owned_by_another_user", .conflict, .rejected),
            (.quantityOutOfRange(20_000, maximum: 10_000), "quantity_out_of_range", .refused, .retry),
            (.catalogOutOfRange(productId: "p"), "invalid_catalog", .refused, .retry),
            (.malformedReceipt, "malformed_receipt", .invalidInput, .rejected),
            (.invalidReceipt(status: 21002, reason: "x"), "invalid_receipt", .refused, .rejected),
            (.storeUndecided("x"), "apple_unavailable", .unavailable, .retry),
            (.notInReceipt(transactionId: "1"), "transaction_not_in_receipt", .conflict, .retry),
            (.unattributed, "unattributed", .refused, .retry),
            (.notRecorded, "not_recorded", .unavailable, .retry),
        ]
        for (refusal, code, kind, outcome) in cases {
            #expect(refusal.apiError.code == code)
            #expect(refusal.apiError.kind == kind, "\(code)")
            #expect(refusal.apiError.outcome == outcome, "\(code)")
        }
        // Too large is refused before anything is decided: no outcome, the client sends something else.
        #expect(PurchaseRefusal.receiptTooLarge.apiError.kind == .tooLarge)
        #expect(PurchaseRefusal.receiptTooLarge.apiError.outcome == nil)
    }

    @Test func anyOfStorekeepersOwnErrorsIsItsAPIError() {
        struct Elsewhere: Error {}
        let team: any Error = TeamError.noAvailableSeats
        #expect(StorekeeperError(team)?.code == "no_available_seats")
        let api: any Error = StorekeeperError.invalidInput("invalid_json", "x")
        #expect(StorekeeperError(api)?.code == "invalid_json")
        #expect(StorekeeperError(Elsewhere()) == nil)
    }
}

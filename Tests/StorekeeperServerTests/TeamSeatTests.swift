import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperCore
import Testing

@testable import StorekeeperServer

/// Issue 31, item 2 (the team's side): a multiseat subscription whose developer manages invitations has its team kept
/// in Storekeeper — invitations, seats claimed at Apple with a persisted request identifier, members' access following
/// the purchaser's renewals, and seats given back, refunded or released by Apple taking that access away — checked
/// against the simulator's own seat claims (its ground truth) at every step.
@Suite("Teams of multiseat subscriptions")
struct TeamSeatTests {
    static let teams = MultiSeatTests.teams
    static let readerKey = "team-reader-key-0123456789abcdef"

    /// Storekeeper's claimed seats on `original` (Apple claim ids).
    static func claimed(_ server: ServerHarness, _ original: String) async throws -> Set<String> {
        let team = try await server.call(.GET, "/v1/admin/teams/\(original)", headers: ServerHarness.adminHeaders).body
        let seats = team["seats"] as? [[String: Any]] ?? []
        return Set(seats.filter { $0["status"] as? String == "claimed" }.compactMap { $0["seatClaimId"] as? String })
    }

    /// The simulator's claims on `original`: what Apple holds.
    static func truth(_ store: SimulatedAppStore, _ original: String) async throws -> Set<String> {
        Set(try await store.seatInfo(originalTransactionId: original).assignedSeatClaimIds ?? [])
    }

    static func invite(_ server: ServerHarness, _ original: String, by user: String) async throws -> String {
        let reply = try await server.call(.POST, "/v1/me/teams/\(original)/invitations", headers: ServerHarness.userHeaders(user))
        #expect(reply.status == 201, "\(reply.text)")
        return try #require(reply.body["invitationCode"] as? String)
    }

    static func accept(_ server: ServerHarness, code: String, by user: String, install: String? = nil) async throws -> ServerHarness.Reply {
        var body: [String: Any] = ["invitationCode": code]
        if let install { body["appTransactionId"] = install }
        return try await server.call(.POST, "/v1/me/team-invitations/accept", json: body, headers: ServerHarness.userHeaders(user))
    }

    static func events(_ server: ServerHarness, _ user: String) async throws -> [Components.Schemas.Event] {
        try await server.api(ServerHarness.adminHeaders).adminListEvents(query: .init(userId: user)).ok.body.json.events
    }

    @Test(
        "3 seats: members claim with invitations, share renewals, lose access when removed, leaving or released by Apple after a seat refund",
        arguments: TestDatabase.available
    )
    func team(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            // Seats are claimed on the server's clock: the simulator runs ahead of it, so what was claimed is in the past.
            try await store.advance(by: 600)
            let account = try await store.createAccount().id
            let order = try await server.api(ServerHarness.userHeaders("olga")).createOrder(body: .json(.init(productId: Self.teams)))
                .created.body.json
            let bought = try await store.purchase(
                productId: Self.teams,
                account: account,
                options: PurchaseOptions(appAccountToken: try #require(UUID(uuidString: order.appAccountToken)), quantity: 3)
            )
            let submitted = try await server.submit(bought.signedTransaction, headers: ServerHarness.userHeaders("olga"), orderId: order.orderId)
            #expect(submitted.status == 200, "\(submitted.text)")
            try await server.deliverAndApply()
            let original = try #require(bought.transaction.originalTransactionId)

            // Only the purchaser invites.
            let foreign = try await server.call(.POST, "/v1/me/teams/\(original)/invitations", headers: ServerHarness.userHeaders("mallory"))
            #expect(foreign.status == 404 && foreign.code == "subscription_not_found", "\(foreign.text)")
            let codes = try await [
                Self.invite(server, original, by: "olga"), Self.invite(server, original, by: "olga"),
                Self.invite(server, original, by: "olga"), Self.invite(server, original, by: "olga"),
            ]
            #expect(Set(codes).count == 4 && codes.allSatisfy { $0.hasPrefix("ski_") && $0.count == 47 })

            // Ann takes a seat for her install: Apple holds the claim, Ann has the subscription's entitlement.
            let annInstall = try await store.createAccount().appTransactionId
            let ann = try await Self.accept(server, code: codes[0], by: "ann", install: annInstall)
            #expect(ann.status == 200 && ann.body["status"] as? String == "claimed", "\(ann.text)")
            let annClaim = try #require(ann.body["seatClaimId"] as? String)
            let annSeat = try #require(ann.body["seatId"] as? String)
            #expect(try await Self.truth(store, original) == [annClaim])
            #expect(await store.seatMember(originalTransactionId: original, seatClaimId: annClaim) == annInstall)
            #expect(try await server.activeEntitlements("ann", at: await server.simulatedNow).contains("teams"))
            let annEntitlement = try #require(server.entitlement("teams", of: try await server.me("ann")))
            #expect(annEntitlement.sources.map(\.seatClaimId) == [annClaim])
            #expect(try await server.audit("ann").contains { $0.action == "team.seat_claimed" && $0.subject == original })
            #expect(
                try await Self.events(server, "ann").contains {
                    $0._type == "team.seat_changed" && $0.details.additionalProperties["change"] == "claimed"
                }
            )
            // A used code is gone; the purchaser and a member cannot take another seat.
            #expect(try await Self.accept(server, code: codes[0], by: "zoe").code == "invitation_not_found")
            #expect(try await Self.accept(server, code: codes[1], by: "olga").code == "purchaser_has_subscription")
            #expect(try await Self.accept(server, code: codes[1], by: "ann").code == "already_a_member")
            #expect(try await Self.accept(server, code: "ski_" + String(repeating: "A", count: 43), by: "zoe").code == "invitation_not_found")

            // Bob's claim: Apple claims the seat but the answer is lost. Asking again uses the same request
            // identifier, and Apple answers the claim it made instead of taking a second seat.
            server.faults.settings = .init(serverErrorNext: 50)
            let lost = try await Self.accept(server, code: codes[1], by: "bob")
            server.faults.settings = .init()
            #expect(lost.status == 503 && lost.code == "apple_unavailable", "\(lost.text)")
            let mine = try await server.call(.GET, "/v1/me/teams", headers: ServerHarness.userHeaders("bob")).body
            let pending = try #require((mine["memberships"] as? [[String: Any]])?.first)
            #expect(pending["status"] as? String == "claiming")
            let requestId = try #require(pending["seatId"] as? String)
            let appleClaim = try await store.claimSeat(originalTransactionId: original, requestIdentifier: requestId, appTransactionId: nil)
            let bob = try await Self.accept(server, code: codes[1], by: "bob")
            #expect(bob.status == 200 && bob.body["seatClaimId"] as? String == appleClaim, "\(bob.text)")
            #expect(try await Self.truth(store, original) == [annClaim, appleClaim])

            // Carl takes the last seat, and tells Apple his install afterwards; Dave finds none, and his invitation
            // stays open.
            let carl = try await Self.accept(server, code: codes[2], by: "carl")
            #expect(carl.status == 200 && carl.body["appTransactionId"] == nil, "\(carl.text)")
            let carlSeat = try #require(carl.body["seatId"] as? String)
            let carlClaim = try #require(carl.body["seatClaimId"] as? String)
            let carlInstall = try await store.createAccount().appTransactionId
            let path = "/v1/me/teams/\(original)/seats/\(carlSeat)/associate"
            #expect(
                try await server.call(.POST, path, json: ["appTransactionId": carlInstall], headers: ServerHarness.userHeaders("bob")).status == 404
            )
            let unknown = try await server.call(.POST, path, json: ["appTransactionId": "999999"], headers: ServerHarness.userHeaders("carl"))
            #expect(unknown.status == 400 && unknown.code == "unknown_app_transaction", "\(unknown.text)")
            let associated = try await server.call(.POST, path, json: ["appTransactionId": carlInstall], headers: ServerHarness.userHeaders("carl"))
            #expect(associated.status == 200 && associated.body["appTransactionId"] as? String == carlInstall, "\(associated.text)")
            #expect(await store.seatMember(originalTransactionId: original, seatClaimId: carlClaim) == carlInstall)
            let full = try await Self.accept(server, code: codes[3], by: "dave")
            #expect(full.status == 409 && full.code == "no_available_seats", "\(full.text)")
            #expect(try await server.activeEntitlements("dave", at: await server.simulatedNow).isEmpty)
            #expect(try await Self.claimed(server, original) == Self.truth(store, original))

            // The purchaser renews: members keep access into the new period and hear about it.
            let firstEnd = try #require(annEntitlement.expiresAt)
            try await store.advance(by: 31 * 86_400)
            try await server.deliverAndApply()
            let renewed = try #require(server.entitlement("teams", of: try await server.me("ann", at: await server.simulatedNow)))
            #expect(renewed.active && (renewed.expiresAt ?? .distantPast) > firstEnd)
            #expect(
                try await Self.events(server, "carl").contains {
                    $0._type == "team.seat_changed" && $0.details.additionalProperties["change"] == "subscription"
                }
            )

            // The purchaser removes Bob: Apple no longer holds his claim, Bob's access ends, audited.
            let team = try await server.call(.GET, "/v1/me/teams/\(original)", headers: ServerHarness.userHeaders("olga")).body
            #expect(team["totalSeatCount"] as? Int == 3 && team["availableSeatCount"] as? Int == 0, "\(team)")
            let bobSeat = try #require(
                (team["seats"] as? [[String: Any]])?.first { $0["memberId"] as? String == "bob" }?["seatId"] as? String
            )
            #expect(
                try await server.call(.DELETE, "/v1/me/teams/\(original)/seats/\(bobSeat)", headers: ServerHarness.userHeaders("mallory")).status
                    == 404
            )
            let removed = try await server.call(.DELETE, "/v1/me/teams/\(original)/seats/\(bobSeat)", headers: ServerHarness.userHeaders("olga"))
            #expect(removed.body["status"] as? String == "released" && removed.body["releaseReason"] as? String == "removed_by_purchaser")
            #expect(try await !Self.truth(store, original).contains(appleClaim))
            #expect(try await !server.activeEntitlements("bob", at: await server.simulatedNow).contains("teams"))
            #expect(try await server.audit("bob").contains { $0.action == "team.seat_released" })

            // The freed seat goes to Dave's open invitation.
            let dave = try await Self.accept(server, code: codes[3], by: "dave")
            #expect(dave.status == 200, "\(dave.text)")
            let daveClaim = try #require(dave.body["seatClaimId"] as? String)

            // Apple refunds one seat: two are left for three claims, so Apple releases the newest (UNCLAIM_SEATS).
            try await store.refundSeats(originalTransactionId: original, count: 1)
            let sent = await store.sentNotifications().suffix(2).map(\.type)
            #expect(sent == [.refund, .unclaimSeats])
            try await server.deliverAndApply()
            let now = await server.simulatedNow
            #expect(try await !server.activeEntitlements("dave", at: now).contains("teams"))
            #expect(try await server.activeEntitlements("ann", at: now).contains("teams"))
            #expect(try await server.activeEntitlements("carl", at: now).contains("teams"))
            #expect(try await server.activeEntitlements("olga", at: now).contains("teams"))
            #expect(try await !Self.claimed(server, original).contains(daveClaim))
            #expect(try await Self.claimed(server, original) == Self.truth(store, original))
            #expect(try await server.audit("dave").contains { $0.action == "team.seat_released" && ($0.detail ?? "").contains("apple_unclaimed") })

            // Ann leaves on her own.
            let left = try await server.call(.DELETE, "/v1/me/teams/\(original)/seats/\(annSeat)", headers: ServerHarness.userHeaders("ann"))
            #expect(left.body["releaseReason"] as? String == "left_by_member", "\(left.text)")
            #expect(try await !server.activeEntitlements("ann", at: now).contains("teams"))
            let after = try await server.call(.GET, "/v1/me/teams/\(original)", headers: ServerHarness.userHeaders("olga")).body
            #expect(after["totalSeatCount"] as? Int == 2 && after["availableSeatCount"] as? Int == 1, "\(after)")
            #expect(Set(after["appleSeatClaimIds"] as? [String] ?? []) == (try await Self.claimed(server, original)))

            // The purchaser's subscription ends: so does the last member's access.
            try await store.setAutoRenew(false, originalTransactionId: original)
            try await store.advance(by: 31 * 86_400)
            try await server.deliverAndApply()
            let end = await server.simulatedNow
            #expect(try await !server.activeEntitlements("olga", at: end).contains("teams"))
            #expect(try await !server.activeEntitlements("carl", at: end).contains("teams"))
        }
    }

    @Test("an operator adds and removes a member; Apple releasing a seat itself ends the member's access", arguments: TestDatabase.available)
    func operatorAndApple(database: TestDatabase) async throws {
        try await ServerHarness.run(
            database,
            configure: {
                ConsoleTests.configure(&$0)
                $0.auth.adminKeys["reader"] = Self.readerKey
                $0.auth.adminKeyScopes["reader"] = [.usersRead]
            }
        ) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            // Seats are claimed on the server's clock: the simulator runs ahead of it, so what was claimed is in the past.
            try await store.advance(by: 600)
            let account = try await store.createAccount().id
            let order = try await server.api(ServerHarness.userHeaders("pia")).createOrder(body: .json(.init(productId: Self.teams)))
                .created.body.json
            let bought = try await store.purchase(
                productId: Self.teams,
                account: account,
                options: PurchaseOptions(appAccountToken: try #require(UUID(uuidString: order.appAccountToken)), quantity: 2)
            )
            _ = try await server.submit(bought.signedTransaction, headers: ServerHarness.userHeaders("pia"), orderId: order.orderId)
            try await server.deliverAndApply()
            let original = try #require(bought.transaction.originalTransactionId)

            let reader = [("X-Admin-Key", Self.readerKey)]
            #expect(try await server.call(.GET, "/v1/admin/teams/\(original)", headers: reader).status == 200)
            let denied = try await server.call(.POST, "/v1/admin/teams/\(original)/members", json: ["userId": "quinn"], headers: reader)
            #expect(denied.status == 403, "\(denied.text)")
            let added = try await server.call(
                .POST,
                "/v1/admin/teams/\(original)/members",
                json: ["userId": "quinn"],
                headers: ServerHarness.adminHeaders
            )
            #expect(added.status == 200 && added.body["status"] as? String == "claimed", "\(added.text)")
            let quinnClaim = try #require(added.body["seatClaimId"] as? String)
            let again = try await server.call(
                .POST,
                "/v1/admin/teams/\(original)/members",
                json: ["userId": "quinn"],
                headers: ServerHarness.adminHeaders
            )
            #expect(again.code == "already_a_member")
            let rita = try await server.call(
                .POST,
                "/v1/admin/teams/\(original)/members",
                json: ["userId": "rita"],
                headers: ServerHarness.adminHeaders
            )
            let ritaSeat = try #require(rita.body["seatId"] as? String)
            #expect(try await Self.claimed(server, original) == Self.truth(store, original))
            #expect(try await server.audit("pia").contains { $0.action == "team.invited" && $0.cause.hasPrefix("admin:") })
            // Support sees the team on both sides in the console.
            try await ConsoleTests.browse(server) { support in
                #expect(try await support.signIn("vera", ConsoleTests.operators[0].2).status == 303)
                let purchaser = try await support.get("/admin/customers/pia")
                #expect(purchaser.text.contains("Team seats") && purchaser.text.contains("href=\"/admin/customers/quinn\""), "\(purchaser.text)")
                #expect(purchaser.text.components(separatedBy: "data-seat-status=\"claimed\"").count == 3)
                let member = try await support.get("/admin/customers/quinn")
                #expect(member.text.contains("<td>member</td>") && member.text.contains("\(TeamSeatTests.teams) (a seat)"), "\(member.text)")
            }

            // Apple releases Quinn's claim (the purchaser changed the group in Settings).
            try await store.appleUnclaimsSeats(originalTransactionId: original, seatClaimIds: [quinnClaim])
            try await server.deliverAndApply()
            #expect(try await !server.activeEntitlements("quinn", at: await server.simulatedNow).contains("teams"))
            #expect(try await Self.claimed(server, original) == Self.truth(store, original))
            let released = try await Self.events(server, "quinn").last
            #expect(released?._type == "team.seat_changed" && released?.details.additionalProperties["reason"] == "apple_unclaimed")

            // An addition whose answer never came (Apple down) can still be removed: Storekeeper settles the claim
            // with its request identifier, then gives the seat back.
            server.faults.settings = .init(serverErrorNext: 50)
            let stuck = try await server.call(
                .POST,
                "/v1/admin/teams/\(original)/members",
                json: ["userId": "sol"],
                headers: ServerHarness.adminHeaders
            )
            server.faults.settings = .init()
            #expect(stuck.status == 503 && stuck.code == "apple_unavailable", "\(stuck.text)")
            let solSeat = try #require(
                ((try await server.call(.GET, "/v1/admin/teams/\(original)", headers: ServerHarness.adminHeaders).body["seats"] as? [[String: Any]])?
                    .first { $0["memberId"] as? String == "sol" })?["seatId"] as? String
            )
            let settled = try await server.call(.DELETE, "/v1/admin/teams/\(original)/seats/\(solSeat)", headers: ServerHarness.adminHeaders)
            #expect(settled.status == 200 && settled.body["status"] as? String == "released", "\(settled.text)")
            #expect(try await Self.claimed(server, original) == Self.truth(store, original))
            #expect(try await server.audit("sol").map(\.action).contains("team.seat_released"))

            // An operator removes Rita; removing again answers the same ended seat.
            let removed = try await server.call(.DELETE, "/v1/admin/teams/\(original)/seats/\(ritaSeat)", headers: ServerHarness.adminHeaders)
            #expect(removed.body["releaseReason"] as? String == "removed_by_operator", "\(removed.text)")
            let twice = try await server.call(.DELETE, "/v1/admin/teams/\(original)/seats/\(ritaSeat)", headers: ServerHarness.adminHeaders)
            #expect(twice.status == 200 && twice.body["status"] as? String == "released")
            #expect(try await Self.truth(store, original).isEmpty)
            #expect(try await server.activeEntitlements("rita", at: await server.simulatedNow).isEmpty)

            // A subscription that is not a developer-managed multiseat purchase: Apple refuses, nothing is kept.
            let single = try await server.newCustomer("sam", product: "com.example.storekeeper.membership.monthly")
            let plain = try await store.purchase(
                productId: "com.example.storekeeper.membership.monthly",
                account: single.account,
                appAccountToken: single.token
            )
            _ = try await server.submit(plain.signedTransaction, headers: ServerHarness.userHeaders("sam"))
            let code = try await Self.invite(server, try #require(plain.transaction.originalTransactionId), by: "sam")
            let refused = try await Self.accept(server, code: code, by: "tom")
            #expect(refused.status == 409 && refused.code == "not_a_team", "\(refused.text)")
            #expect(try await server.activeEntitlements("tom", at: await server.simulatedNow).isEmpty)
        }
    }
}

/// Issue 31, item 2 with Apple hosting the invitations: each member gets an `ASSIGNED` copy of their own, delivered
/// to them and never counted as their sale; Storekeeper's seat claims do not apply (Apple says the group is not the
/// developer's to manage); copies follow the purchaser's renewals, a seat refund takes the newest back, and they end
/// with the purchaser's subscription.
@Suite("Apple-hosted groups of multiseat subscriptions")
struct AppleHostedGroupTests {
    static func catalog() throws -> SimulatorCatalog {
        var catalog = try ServerHarness.simulatorCatalog()
        let index = try #require(catalog.products.firstIndex { $0.id == MultiSeatTests.teams })
        catalog.products[index].multiSeat?.invitationManagement = "APPLE"
        return catalog
    }

    @Test(
        "members' assigned copies: delivered, not sales, renewed with the purchaser, the newest revoked by a seat refund, ended with the group",
        arguments: TestDatabase.available
    )
    func appleHosted(database: TestDatabase) async throws {
        try await ServerHarness.run(database, catalog: try Self.catalog()) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            try await store.advance(by: 600)
            let account = try await store.createAccount().id
            let order = try await server.api(ServerHarness.userHeaders("ada")).createOrder(body: .json(.init(productId: MultiSeatTests.teams)))
                .created.body.json
            let bought = try await store.purchase(
                productId: MultiSeatTests.teams,
                account: account,
                options: PurchaseOptions(appAccountToken: try #require(UUID(uuidString: order.appAccountToken)), quantity: 2)
            )
            #expect(bought.transaction.multiSeatInfo?.invitationManagement == .apple)
            _ = try await server.submit(bought.signedTransaction, headers: ServerHarness.userHeaders("ada"), orderId: order.orderId)
            try await server.deliverAndApply()
            let original = try #require(bought.transaction.originalTransactionId)

            // Two members accept Apple's invitation; a third finds no seat.
            var copies: [String: SimulatedPurchase] = [:]
            for member in ["bea", "cy"] {
                let (memberAccount, token) = try await server.newCustomer(member, product: MultiSeatTests.teams)
                copies[member] = try await store.joinGroup(originalTransactionId: original, memberAccount: memberAccount, appAccountToken: token)
                #expect(copies[member]?.transaction.inAppOwnershipType == .assigned)
                #expect(copies[member]?.transaction.expiresDate == bought.transaction.expiresDate, "the purchaser's period")
            }
            let (third, _) = try await server.newCustomer("dan", product: MultiSeatTests.teams)
            await #expect(throws: SimulatorError.self) { _ = try await store.joinGroup(originalTransactionId: original, memberAccount: third) }
            try await server.deliverAndApply()
            for member in ["bea", "cy"] {
                #expect(try await server.activeEntitlements(member, at: await server.simulatedNow).contains("teams"), "\(member)")
                let revenue = try await RevenueTests.revenue(server, member)
                #expect(revenue.transactions.count == 1 && revenue.transactions.allSatisfy { !$0.counted }, "\(member): not their sale")
            }
            #expect(try await store.seatTruth(originalTransactionId: original).members.count == 2)

            // Storekeeper's teams are for developer-hosted groups: Apple refuses the claim.
            let code = try await TeamSeatTests.invite(server, original, by: "ada")
            let refused = try await TeamSeatTests.accept(server, code: code, by: "eve")
            #expect(refused.status == 409 && refused.code == "not_a_team", "\(refused.text)")

            // A seat refund takes the newest copy back (REVOKE / ASSIGNMENT_REVOKE).
            try await store.refundSeats(originalTransactionId: original, count: 1)
            try await server.deliverAndApply()
            #expect(try await !server.activeEntitlements("cy", at: await server.simulatedNow).contains("teams"))
            #expect(try await server.activeEntitlements("bea", at: await server.simulatedNow).contains("teams"))
            #expect(
                try await store.seatTruth(originalTransactionId: original).members
                    == [copies["bea"]?.transaction.originalTransactionId].compactMap { $0 }
            )

            // The purchaser renews: so does Bea's copy.
            try await store.advance(by: 31 * 86_400)
            try await server.deliverAndApply()
            #expect(try await server.activeEntitlements("ada", at: await server.simulatedNow).contains("teams"))
            #expect(try await server.activeEntitlements("bea", at: await server.simulatedNow).contains("teams"))

            // The purchaser stops: Bea's copy ends with the group.
            try await store.setAutoRenew(false, originalTransactionId: original)
            try await store.advance(by: 31 * 86_400)
            try await server.deliverAndApply()
            #expect(try await !server.activeEntitlements("ada", at: await server.simulatedNow).contains("teams"))
            #expect(try await !server.activeEntitlements("bea", at: await server.simulatedNow).contains("teams"))
            #expect(try await store.seatTruth(originalTransactionId: original).members.isEmpty)
        }
    }
}

import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Issue 17: the operator console at `/admin` over real sockets — sign-in into a session cookie, CSRF tokens on
/// every form, roles, escaping — and its pages and actions checked against the database through the admin API.
@Suite("Operator console")
struct ConsoleTests {
    static let operators = [
        ("vera", ConsoleRole.viewer, "viewer-secret-0123456789"),
        ("sam", ConsoleRole.support, "support-secret-0123456789"),
        ("ada", ConsoleRole.admin, "admin-secret-0123456789ab"),
    ]

    static func configure(_ configuration: inout ServerConfiguration) {
        configuration.console = ConsoleConfiguration(operators: operators.map { ConsoleConfiguration.Operator(name: $0.0, role: $0.1, secret: $0.2) })
    }

    static func browse(_ server: ServerHarness, _ body: (ConsoleBrowser) async throws -> Void) async throws {
        let browser = ConsoleBrowser(base: server.serverURL)
        do {
            try await body(browser)
        } catch {
            try? await browser.shutdown()
            throw error
        }
        try await browser.shutdown()
    }

    @Test("nothing answers without a session; sign-in sets a strict HttpOnly cookie; wrong secrets and stale forms are refused")
    func signIn() async throws {
        try await ServerHarness.run(.sqlite, configure: Self.configure) { server in
            try await Self.browse(server) { browser in
                for path in [
                    "/admin", "/admin/find?q=x", "/admin/customers/alice", "/admin/notifications", "/admin/pending", "/admin/catalog", "/admin/jobs",
                    "/admin/webhooks",
                ] {
                    let page = try await browser.get(path)
                    #expect(page.status == 303 && page.location == "/admin/login", "\(path): \(page.status)")
                    #expect(!page.text.contains("Overview"))
                }
                for path in ["/admin/customers/alice/wallet", "/admin/notifications/x/retry", "/admin/pending/1/assign", "/admin/jobs/catch-up/run"] {
                    let page = try await browser.post(path, [("csrf", "guess")])
                    #expect(page.status == 401, "\(path): \(page.status)")
                }
                let login = try await browser.get("/admin/login")
                #expect(login.status == 200 && login.text.contains("Sign in"))
                #expect(login.headers.first(name: "Content-Security-Policy")?.contains("default-src 'self'") == true)
                #expect(login.headers.first(name: "X-Frame-Options") == "DENY")
                // A sign-in without the nonce this browser was given is a forged form.
                let forged = try await browser.post("/admin/login", [("nonce", "forged"), ("name", "ada"), ("secret", Self.operators[2].2)])
                #expect(forged.status == 403 && browser.cookies["sk_console"] == nil)
                let wrong = try await browser.signIn("ada", "not-the-secret-0123456789")
                #expect(wrong.status == 401 && wrong.text.contains("Unknown operator or wrong secret"))
                let other = try await browser.signIn("Ada", Self.operators[2].2)
                #expect(other.status == 401, "names compare byte for byte")
                let signedIn = try await browser.signIn("ada", Self.operators[2].2)
                #expect(signedIn.status == 303 && signedIn.location == "/admin")
                let cookie = try #require(browser.setCookieHeaders.last { $0.hasPrefix("sk_console=") })
                #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/admin"))
                #expect(!cookie.contains("Secure"), "plain HTTP: a Secure cookie would never come back")
                // Behind a TLS-terminating proxy the cookies are Secure.
                for header in [("X-Forwarded-Proto", "https"), ("Forwarded", "for=192.0.2.1;proto=https")] {
                    let proxied = try await browser.send(.GET, "/admin/login", body: nil, headers: [header])
                    let nonce = try #require(proxied.headers.first(name: "Set-Cookie"))
                    #expect(nonce.hasPrefix("sk_console_login=") && nonce.contains("Secure"), "\(header.0): \(nonce)")
                }
                let plain = try await browser.send(.GET, "/admin/login", body: nil, headers: [("X-Forwarded-Proto", "http")])
                #expect(plain.headers.first(name: "Set-Cookie")?.contains("Secure") == false)
                let overview = try await browser.get("/admin")
                #expect(overview.status == 200 && overview.text.contains("Overview") && overview.text.contains("ada · admin"))
                #expect(overview.headers.first(name: "Cache-Control") == "no-store")
                // Sign-out: the same cookie opens nothing any more.
                let token = try #require(browser.cookies["sk_console"])
                let out = try await browser.post("/admin/logout", [("csrf", overview.hidden("csrf") ?? "")])
                #expect(out.status == 303 && out.location == "/admin/login")
                let replay = try await browser.send(.GET, "/admin", body: nil)
                #expect(replay.status == 303)
                #expect(browser.cookies["sk_console"] == nil && !token.isEmpty)
            }
        }
    }

    @Test(
        "support finds a customer by transaction, order and token, reads the timeline, adjusts the wallet; viewers and forms without the token cannot",
        arguments: TestDatabase.available
    )
    func supportWorkflow(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: Self.configure) { server in
            let account = try await server.store.createAccount().id
            let (orderId, purchase) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: "alice", account: account)
            let reply = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("alice"), orderId: orderId)
            #expect(reply.status == 200)
            let transactionId = try #require(purchase.transaction.transactionId)
            let token = try #require(purchase.transaction.appAccountToken)
            let before = try await server.coins("alice")

            try await Self.browse(server) { support in
                #expect(try await support.signIn("sam", Self.operators[1].2).status == 303)
                // The order id on Apple's e-mail receipt, looked up at Apple (here the simulator).
                let appleOrder = try #require(await server.store.orderId(ofTransaction: transactionId))
                for query in [transactionId, orderId, token, token.uppercased(), "alice", appleOrder] {
                    let found = try await support.get("/admin/find?q=\(query)")
                    #expect(found.status == 200 && found.text.contains("href=\"/admin/customers/alice\""), "\(query)")
                }
                let nobody = try await support.get("/admin/find?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E")
                #expect(
                    nobody.text.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && !nobody.text.contains("<script>"),
                    "a search is shown escaped"
                )

                let customer = try await support.get("/admin/customers/alice")
                #expect(customer.status == 200 && customer.text.contains(transactionId) && customer.text.contains(orderId))
                // The app install it was bought from (appTransactionId), for support and the risk signals.
                let install = try #require(purchase.transaction.appTransactionId)
                #expect(customer.text.contains("<td>\(install)</td>"), "the install is shown")
                #expect(!customer.text.contains("class=\"flash\"") && !customer.text.contains(">nil<"), "no message box without a message")
                #expect(customer.text.contains("data-balance=\"coins\">\(before)<"))
                // Entitlements at a moment before the purchase: the wallet is today's, the transaction is listed.
                let past = try await support.get("/admin/customers/alice?at=2020-01-01T00:00")
                #expect(past.status == 200 && past.text.contains("at 2020-01-01"))

                // A form without its token is refused and changes nothing.
                let forged = try await support.post(
                    "/admin/customers/alice/wallet",
                    [("amount", "500"), ("reason", "forged"), ("idempotencyKey", "k1")]
                )
                #expect(forged.status == 403)
                #expect(try await server.coins("alice") == before)
                let csrf = try #require(customer.hidden("csrf"))
                let key = try #require(customer.hidden("idempotencyKey"))
                let adjusted = try await support.post(
                    "/admin/customers/alice/wallet",
                    [("csrf", csrf), ("idempotencyKey", key), ("amount", "25"), ("reason", "goodwill <b>credit</b>")]
                )
                #expect(adjusted.status == 200 && adjusted.text.contains("Adjusted; the balance is \(before + 25)"), "\(adjusted.text.prefix(400))")
                #expect(adjusted.text.contains("goodwill &lt;b&gt;credit&lt;/b&gt;"))
                #expect(try await server.coins("alice") == before + 25)
                // The same form sent twice (a double click) is applied once.
                let again = try await support.post(
                    "/admin/customers/alice/wallet",
                    [("csrf", csrf), ("idempotencyKey", key), ("amount", "25"), ("reason", "goodwill <b>credit</b>")]
                )
                #expect(again.text.contains("Already applied"))
                #expect(try await server.coins("alice") == before + 25)
                let audit = try await server.audit("alice")
                #expect(audit.contains { $0.action == "wallet.credited" && $0.cause.contains("sam") && $0.amount == 25 })

                // A goodwill entitlement for 30 days, then taken back: each audited with the operator, each an event.
                let page = try await support.get("/admin/customers/alice")
                let token = try #require(page.hidden("csrf"))
                let granted = try await support.post(
                    "/admin/customers/alice/entitlements/grant",
                    [("csrf", token), ("entitlement", "premium"), ("days", "30"), ("reason", "outage compensation")]
                )
                #expect(
                    granted.text.contains("Granted premium until"),
                    "\(granted.text.components(separatedBy: "role=\"alert\">").dropFirst().first?.prefix(200) ?? "")"
                )
                let me = try await server.me("alice")
                let premium = try #require(server.entitlement("premium", of: me))
                #expect(premium.active && (premium.expiresAt?.timeIntervalSinceNow ?? 0) > 29 * 86_400)
                let events = try await server.api(ServerHarness.adminHeaders).adminListEvents(query: .init(userId: "alice")).ok.body.json.events
                #expect(events.contains { $0._type == "entitlement.changed" && $0.details.additionalProperties["change"] == "granted" })
                let endless = try await support.post(
                    "/admin/customers/alice/entitlements/grant",
                    [("csrf", token), ("entitlement", "premium"), ("days", "0"), ("reason", "x")]
                )
                #expect(endless.text.contains("Days must be a whole number"))
                let revoked = try await support.post(
                    "/admin/customers/alice/entitlements/revoke",
                    [("csrf", token), ("entitlement", "premium"), ("reason", "granted in error")]
                )
                #expect(revoked.text.contains("Revoked premium (1 grant(s))"))
                #expect(server.entitlement("premium", of: try await server.me("alice"))?.active != true)
                let trail = try await server.audit("alice")
                #expect(
                    trail.contains {
                        $0.action == "entitlement.granted" && $0.cause == "admin:sam" && $0.detail?.contains("outage compensation") == true
                    }
                )
                #expect(trail.contains { $0.action == "entitlement.revoked" && $0.cause == "admin:sam" })
                let overview = try await support.get("/admin")
                #expect(overview.text.contains("wallet.adjusted") && overview.text.contains("sam (support)"))
            }
            try await Self.browse(server) { viewer in
                #expect(try await viewer.signIn("vera", Self.operators[0].2).status == 303)
                let customer = try await viewer.get("/admin/customers/alice")
                #expect(customer.status == 200 && !customer.text.contains("Adjust wallet"), "a viewer is shown no form")
                let csrf = try #require(customer.hidden("csrf"))
                let refused = try await viewer.post(
                    "/admin/customers/alice/wallet",
                    [("csrf", csrf), ("idempotencyKey", "viewer-1"), ("amount", "1000"), ("reason", "viewer")]
                )
                #expect(refused.status == 403 && refused.text.contains("the support or admin role"))
                let grant = try await viewer.post(
                    "/admin/customers/alice/entitlements/grant",
                    [("csrf", csrf), ("entitlement", "premium"), ("reason", "viewer")]
                )
                #expect(grant.status == 403)
                #expect(try await server.coins("alice") == before + 25)
            }
        }
    }

    @Test("support extends a subscription at Apple; Apple's RENEWAL_EXTENDED moves the entitlement", arguments: TestDatabase.available)
    func extendRenewal(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: Self.configure) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            // A subscription at the standard price (Apple extends no free trial).
            let (account, token) = try await server.newCustomer("mia", product: PurchaseFlowTests.standard)
            let bought = try await store.purchase(
                productId: PurchaseFlowTests.standard,
                account: account,
                options: PurchaseOptions(appAccountToken: token)
            )
            try await server.deliverAndApply()
            let original = try #require(bought.transaction.originalTransactionId)
            let admin = try server.api(ServerHarness.adminHeaders)
            let before = try #require(try await admin.adminGetSubscription(path: .init(original: original)).ok.body.json.expiresAt)
            try await Self.browse(server) { support in
                #expect(try await support.signIn("sam", Self.operators[1].2).status == 303)
                let customer = try await support.get("/admin/customers/mia")
                let action = "/admin/customers/mia/subscriptions/\(original)/extend"
                #expect(customer.text.contains(action))
                let csrf = try #require(customer.hidden("csrf"))
                let tooLong = try await support.post(action, [("csrf", csrf), ("days", "91"), ("reason", "1")])
                #expect(tooLong.text.contains("1 to 90 days"))
                // Another customer (one the server knows: a stranger's address is a 404).
                _ = try await server.api(ServerHarness.adminHeaders).adminAdjustWallet(
                    path: .init(id: "alice"),
                    body: .json(.init(amount: 1, idempotencyKey: "alice-exists", reason: "a known customer"))
                ).ok
                let notTheirs = try await support.post(
                    "/admin/customers/alice/subscriptions/\(original)/extend",
                    [("csrf", csrf), ("days", "7"), ("reason", "1")]
                )
                #expect(notTheirs.text.contains("not one of this customer"))
                let extended = try await support.post(action, [("csrf", csrf), ("days", "7"), ("reason", "1")])
                #expect(
                    extended.status == 200 && extended.text.contains("Apple extended \(original) by 7 day(s)"),
                    "\(extended.text.components(separatedBy: "role=\"alert\">").dropFirst().first?.prefix(300) ?? "")"
                )
            }
            try await server.deliverAndApply()
            let after = try #require(try await admin.adminGetSubscription(path: .init(original: original)).ok.body.json.expiresAt)
            #expect(after.timeIntervalSince(before) == 7 * 86_400, "\(before) → \(after)")
            #expect(try await server.audit("mia").contains { $0.action == "entitlement.extended" })

            // The inbox filtered by type, by day and by original transaction.
            try await Self.browse(server) { viewer in
                #expect(try await viewer.signIn("vera", Self.operators[0].2).status == 303)
                let all = try await viewer.get("/admin/notifications?status=processed")
                #expect(all.text.contains("RENEWAL_EXTENDED") && all.text.contains("SUBSCRIBED"))
                let extensions = try await viewer.get("/admin/notifications?status=processed&type=RENEWAL_EXTENDED&original=\(original)")
                #expect(extensions.status == 200 && extensions.text.contains("<td>RENEWAL_EXTENDED</td>"))
                #expect(!extensions.text.contains("<td>SUBSCRIBED"), "another type is filtered out")
                let other = try await viewer.get("/admin/notifications?status=processed&original=1")
                #expect(other.text.contains("None.") && !other.text.contains("<td>RENEWAL_EXTENDED</td>"))
                let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
                let thisDay = try await viewer.get("/admin/notifications?status=processed&type=RENEWAL_EXTENDED&from=\(today)&to=\(today)")
                #expect(thisDay.text.contains("<td>RENEWAL_EXTENDED</td>"))
                let longAgo = try await viewer.get("/admin/notifications?status=processed&from=2001-01-01&to=2001-01-31")
                #expect(longAgo.text.contains("None."))
                for bad in ["type=%3Cscript%3E", "from=yesterday", "to=2026-02-30", "status=all"] {
                    let refused = try await viewer.get("/admin/notifications?\(bad)")
                    #expect(refused.status == 400 && !refused.text.contains("<script>"), "\(bad)")
                }
            }
        }
    }

    @Test(
        "support re-runs catch-up for one customer: a purchase never sent is delivered, a refund never announced taken back",
        arguments: TestDatabase.available
    )
    func catchUpOneCustomer(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: Self.configure) { server in
            let store = server.store
            let account = try await store.createAccount().id
            let (orderId, first) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: "lea", account: account)
            #expect(try await server.submit(first.signedTransaction, headers: ServerHarness.userHeaders("lea"), orderId: orderId).status == 200)
            let firstId = try #require(first.transaction.transactionId)
            // Paid, and the app never told the server (the app was deleted before it could); then Apple refunded the
            // first purchase and its notification never arrived.
            let lost = try await store.purchase(productId: PurchaseFlowTests.coins, account: account, appAccountToken: nil)
            let lostId = try #require(lost.transaction.transactionId)
            try await store.decideRefund(transactionId: firstId, approve: true)
            // Someone else's purchase on another Apple account stays theirs.
            let other = try await store.createAccount().id
            let (otherOrder, theirs) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: "max", account: other)
            #expect(try await server.submit(theirs.signedTransaction, headers: ServerHarness.userHeaders("max"), orderId: otherOrder).status == 200)
            let before = try await server.coins("lea")

            try await Self.browse(server) { viewer in
                #expect(try await viewer.signIn("vera", Self.operators[0].2).status == 303)
                let page = try await viewer.get("/admin/customers/lea")
                #expect(!page.text.contains("/admin/customers/lea/catch-up"), "a viewer is shown no catch-up button")
                let refused = try await viewer.post("/admin/customers/lea/catch-up", [("csrf", page.hidden("csrf") ?? "")])
                #expect(refused.status == 403)
            }
            #expect(try await server.coins("lea") == before)
            try await Self.browse(server) { support in
                #expect(try await support.signIn("sam", Self.operators[1].2).status == 303)
                let page = try await support.get("/admin/customers/lea")
                #expect(page.text.contains("/admin/customers/lea/catch-up"))
                let csrf = try #require(page.hidden("csrf"))
                let forged = try await support.post("/admin/customers/lea/catch-up", [("csrf", "stale")])
                #expect(forged.status == 403)
                let ran = try await support.post("/admin/customers/lea/catch-up", [("csrf", csrf)])
                let flash = ran.text.components(separatedBy: "Catch-up done: ").dropFirst().first?.prefix(300) ?? ""
                #expect(
                    ran.status == 200 && flash.hasPrefix("Apple listed 2 transactions, 1 newly delivered, 1 refunded or revoked"),
                    "\(ran.text.prefix(600))"
                )
                #expect(ran.text.contains(lostId), "the delivered purchase is on the customer's page")
                // A second run finds nothing new and changes nothing.
                let again = try await support.post("/admin/customers/lea/catch-up", [("csrf", csrf)])
                #expect(again.text.contains("Apple listed 2 transactions, 0 newly delivered"), "\(again.text.prefix(600))")
                let wrong = try await support.post("/admin/customers/max/catch-up", [("csrf", csrf)])
                #expect(wrong.text.contains("Apple listed 1 transaction, 0 newly delivered, 0 refunded or revoked"))
            }
            let audit = try await server.audit("lea")
            #expect(
                audit.contains {
                    $0.action == "transaction.refunded" && $0.cause.contains(firstId) || $0.subject == firstId && $0.action == "transaction.refunded"
                }
            )
            #expect(audit.contains { $0.cause.contains(lostId) && $0.action == "wallet.credited" }, "\(audit.map { "\($0.action) \($0.cause)" })")
            // One purchase delivered, one taken back: the balance is where it was, and each moved once.
            #expect(try await server.coins("lea") == before)
            #expect(audit.filter { $0.action == "wallet.credited" }.count == 2)
            #expect(try await server.coins("max") > 0)
            let actions = try await server.api(ServerHarness.adminHeaders).adminGetUser(path: .init(id: "lea")).ok.body.json
            #expect(actions.transactions.contains { $0.transactionId == lostId })
        }
    }

    @Test(
        "dead letters retried, pending purchases assigned, products edited (admins only), every page escapes what it shows",
        arguments: TestDatabase.available
    )
    func operations(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: Self.configure) { server in
            // A purchase nobody could be attributed to: parked on the pending list.
            let account = try await server.store.createAccount().id
            let parked = try await server.store.purchase(productId: PurchaseFlowTests.chapter, account: account)
            #expect(try await server.submit(parked.signedTransaction, headers: [("X-API-Key", ServerHarness.apiKey)]).status == 202)
            let parkedId = try #require(parked.transaction.transactionId)
            // A product whose id holds markup.
            let evil = "evil<img src=x onerror=alert(1)>"
            let put = try await server.call(
                .PUT,
                "/v1/admin/catalog/products/" + (evil.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
                json: ["id": evil, "kind": "consumable", "coins": 5],
                headers: ServerHarness.adminHeaders
            )
            #expect(put.status == 200, "\(put.text)")

            try await Self.browse(server) { support in
                #expect(try await support.signIn("sam", Self.operators[1].2).status == 303)
                let pending = try await support.get("/admin/pending")
                #expect(pending.status == 200 && pending.text.contains(parkedId))
                let assigned = try await support.post(
                    "/admin/pending/\(parkedId)/assign",
                    [("csrf", pending.hidden("csrf") ?? ""), ("userId", "bob"), ("reason", "receipt sent by e-mail")]
                )
                #expect(assigned.status == 200 && assigned.text.contains("was delivered to bob"), "\(assigned.text.prefix(300))")
                let bob = try await server.api(ServerHarness.adminHeaders).adminGetUser(path: .init(id: "bob")).ok.body.json
                #expect(bob.transactions.contains { $0.transactionId == parkedId })
                #expect(try await server.audit("bob").contains { $0.action == "transaction.assigned" && $0.cause.contains("sam") })

                let catalog = try await support.get("/admin/catalog")
                #expect(catalog.text.contains("evil&lt;img src=x onerror=alert(1)&gt;") && !catalog.text.contains("<img src=x"))
                #expect(!catalog.text.contains("/admin/catalog/products/"), "support is shown no edit link")
                let edit = try await support.get("/admin/catalog/products/\(PurchaseFlowTests.coins)")
                #expect(edit.status == 403)
                let campaign = try await support.post(
                    "/admin/catalog/campaigns/winback-2026",
                    [("csrf", catalog.hidden("csrf") ?? ""), ("weight0", "100"), ("weight1", "0")]
                )
                #expect(campaign.status == 403, "support does not change the catalog")

                let notifications = try await support.get("/admin/notifications?status=dead")
                #expect(notifications.status == 200)
                let bogus = try await support.post("/admin/notifications/not-a-notification/retry", [("csrf", notifications.hidden("csrf") ?? "")])
                #expect(bogus.status == 200 && bogus.text.contains("not pending or dead"))
            }
            try await Self.browse(server) { admin in
                #expect(try await admin.signIn("ada", Self.operators[2].2).status == 303)
                let form = try await admin.get("/admin/catalog/products/\(PurchaseFlowTests.coins)")
                #expect(form.status == 200)
                let csrf = try #require(form.hidden("csrf"))
                let invalid = try await admin.post("/admin/catalog/products/\(PurchaseFlowTests.coins)", [("csrf", csrf), ("coins", "0")])
                #expect(invalid.text.contains("coins must be a whole number"))
                let saved = try await admin.post("/admin/catalog/products/\(PurchaseFlowTests.coins)", [("csrf", csrf), ("coins", "75")])
                #expect(saved.status == 200 && saved.text.contains("Saved"), "\(saved.text.prefix(300))")
                let catalog = try await server.api(ServerHarness.adminHeaders).adminGetCatalog().ok.body.json
                let coins = try #require(catalog.products.first { $0.id == PurchaseFlowTests.coins })
                #expect(coins.coins == 75 && coins.onSale == false, "the unchecked box took the product off sale")
                // The A/B split of an offer campaign.
                let campaigns = try await admin.get("/admin/catalog")
                let campaignToken = try #require(campaigns.hidden("csrf"))
                #expect(campaigns.text.contains("/admin/catalog/campaigns/winback-2026"))
                let zero = try await admin.post(
                    "/admin/catalog/campaigns/winback-2026",
                    [("csrf", campaignToken), ("weight0", "0"), ("weight1", "0"), ("active", "true")]
                )
                #expect(zero.text.contains("role=\"alert\""), "weights summing to 0 are refused")
                let split = try await admin.post(
                    "/admin/catalog/campaigns/winback-2026",
                    [("csrf", campaignToken), ("weight0", "70"), ("weight1", "30"), ("active", "true")]
                )
                #expect(split.text.contains("Saved campaign winback-2026"))
                let storedCampaigns = try await server.api(ServerHarness.adminHeaders).adminGetCatalog().ok.body.json.campaigns
                let winBack = try #require(storedCampaigns.first { $0.id == "winback-2026" })
                let weights: [Int] = winBack.variants.map { Int($0.weight) }
                #expect(weights == [70, 30])
                let jobs = try await admin.get("/admin/jobs")
                #expect(jobs.status == 200 && jobs.text.contains("process-notifications"))
                let ran = try await admin.post("/admin/jobs/process-notifications/run", [("csrf", jobs.hidden("csrf") ?? "")])
                #expect(ran.status == 200 && ran.text.contains("process-notifications ran"), "\(ran.text.prefix(300))")
                let history = try await admin.get("/admin/jobs")
                #expect(history.text.contains("data-last-run=\"process-notifications\">2"), "the run is on the Jobs page")
                let overview = try await admin.get("/admin")
                #expect(overview.text.contains("catalog.product_saved") && overview.text.contains("pending.assigned"))
            }
        }
    }

    @Test("the Webhooks page shows each endpoint's backlog; admins pause, resume and replay a user; viewers only read")
    func webhooksPage() async throws {
        let endpoint = WebhookConfiguration(
            name: "crm",
            url: URL(string: "http://127.0.0.1:9/hook")!,
            secrets: [String(repeating: "s", count: 40)],
            eventTypes: ["purchase.*"]
        )
        try await ServerHarness.run(
            .sqlite,
            configure: {
                Self.configure(&$0)
                $0.webhooks = [endpoint]
            }
        ) { server in
            try await Self.browse(server) { viewer in
                #expect(try await viewer.signIn("vera", Self.operators[0].2).status == 303)
                let page = try await viewer.get("/admin/webhooks")
                #expect(page.status == 200 && page.text.contains("<td>crm</td>") && page.text.contains("purchase.*"))
                #expect(!page.text.contains("/admin/webhooks/crm/pause"), "a viewer is shown no controls")
                let refused = try await viewer.post("/admin/webhooks/crm/pause", [("csrf", page.hidden("csrf") ?? "")])
                #expect(refused.status == 403)
            }
            let admin = try server.api(ServerHarness.adminHeaders)
            #expect(try await admin.adminListWebhooks().ok.body.json.webhooks.first?.paused == false)
            try await Self.browse(server) { ada in
                #expect(try await ada.signIn("ada", Self.operators[2].2).status == 303)
                let page = try await ada.get("/admin/webhooks")
                let csrf = try #require(page.hidden("csrf"))
                #expect(try await ada.post("/admin/webhooks/crm/pause", [("csrf", "stale")]).status == 403)
                let paused = try await ada.post("/admin/webhooks/crm/pause", [("csrf", csrf)])
                #expect(paused.status == 200 && paused.text.contains("crm paused.") && paused.text.contains("data-webhook-state=\"crm\">paused<"))
                #expect(try await admin.adminListWebhooks().ok.body.json.webhooks.first?.paused == true)

                // A purchase while paused waits; replaying the user queues their event once more.
                let account = try await server.store.createAccount().id
                let (orderId, purchase) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: "wendy", account: account)
                #expect(
                    try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("wendy"), orderId: orderId).status == 200
                )
                let replayed = try await ada.post("/admin/webhooks/crm/replay", [("csrf", csrf), ("userId", "wendy")])
                #expect(replayed.text.contains("1 event(s) queued again for crm."), "\(replayed.text.prefix(400))")
                let empty = try await ada.post("/admin/webhooks/crm/replay", [("csrf", csrf), ("userId", " ")])
                #expect(empty.text.contains("role=\"alert\""), "a replay names a user")
                let unknown = try await ada.post("/admin/webhooks/nope/pause", [("csrf", csrf)])
                #expect(unknown.text.contains("role=\"alert\""))
                let resumed = try await ada.post("/admin/webhooks/crm/resume", [("csrf", csrf)])
                #expect(resumed.text.contains("crm resumed."))
                let overview = try await ada.get("/admin")
                #expect(overview.text.contains("webhook.pause") && overview.text.contains("webhook.replay"), "in the operator log")
            }
        }
    }

}

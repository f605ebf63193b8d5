import AppStoreSimulator
import Foundation
import StorekeeperAPI
import Testing

/// The console names customers by address exactly: an id that needs percent-encoding is decoded once, an unknown
/// customer is a 404 that no action turns into a user, Find reads its form as a form, and the timeline shows the
/// newest changes first, a page at a time (issue 30, items 1–3).
@Suite("Console: customer addresses and the timeline")
struct ConsoleCustomerAddressTests {
    static let erin = "erin+iap@example.com"

    @Test("an id that needs percent-encoding is the customer it names; an unknown one is a 404 and creates nobody", arguments: TestDatabase.available)
    func encodedIds(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: ConsoleTests.configure) { server in
            for user in [Self.erin, "100%real"] {
                let account = try await server.store.createAccount().id
                let (orderId, bought) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: user, account: account)
                #expect(try await server.submit(bought.signedTransaction, headers: ServerHarness.userHeaders(user), orderId: orderId).status == 200)
            }
            try await ConsoleTests.browse(server) { support in
                #expect(try await support.signIn("sam", ConsoleTests.operators[1].2).status == 303)
                let found = try await support.get("/admin/find?q=erin%2Biap%40example.com")
                #expect(found.text.contains("href=\"/admin/customers/erin%2Biap%40example.com\""))

                let page = try await support.get("/admin/customers/erin%2Biap%40example.com")
                #expect(page.status == 200 && page.text.contains("Customer erin+iap@example.com"))
                #expect(page.text.contains(">60<"), "erin's wallet, not an empty customer's: \(page.text.count)")
                let adjusted = try await support.post(
                    "/admin/customers/erin%2Biap%40example.com/wallet",
                    [("csrf", page.hidden("csrf") ?? ""), ("amount", "5"), ("reason", "goodwill"), ("idempotencyKey", "k-1")]
                )
                #expect(adjusted.status == 200 && adjusted.text.contains("the balance is 65"), "\(adjusted.text.prefix(200))")
                #expect(try await server.coins(Self.erin) == 65)
                // Decoded once: %25 is a percent sign, not an escape to decode again.
                let percent = try await support.get("/admin/customers/100%25real")
                #expect(percent.status == 200 && percent.text.contains("Customer 100%real"))

                let admin = try server.api(ServerHarness.adminHeaders)
                for path in ["/admin/customers/erin%252Biap%2540example.com", "/admin/customers/nobody%40example.com"] {
                    let missing = try await support.get(path)
                    #expect(missing.status == 404 && missing.text.contains("No such customer"), "\(path)")
                    let action = try await support.post(
                        path + "/wallet",
                        [("csrf", page.hidden("csrf") ?? ""), ("amount", "5"), ("reason", "goodwill"), ("idempotencyKey", "k-2")]
                    )
                    #expect(action.status == 404, "no action on a customer that does not exist")
                    for action in ["/entitlements/grant", "/entitlements/revoke", "/catch-up"] {
                        let refused = try await support.post(
                            path + action,
                            [("csrf", page.hidden("csrf") ?? ""), ("entitlement", "vip"), ("reason", "goodwill")]
                        )
                        #expect(refused.status == 404, "\(path)\(action)")
                    }
                }
                for phantom in ["erin%2Biap%40example.com", "nobody@example.com"] {
                    let user = try await admin.adminGetUser(path: .init(id: phantom)).ok.body.json
                    #expect(
                        user.wallet.additionalProperties.values.allSatisfy { $0 == 0 } && user.entitlements.isEmpty,
                        "\(phantom) was never credited"
                    )
                    #expect(try await admin.adminGetAudit(path: .init(id: phantom)).ok.body.json.entries.isEmpty, "nothing was done to \(phantom)")
                }
            }
        }
    }

    @Test("each order is on the timeline once (issue 30, item 9)")
    func orderOnceOnTheTimeline() async throws {
        try await ServerHarness.run(.sqlite, configure: ConsoleTests.configure) { server in
            let account = try await server.store.createAccount().id
            let (orderId, bought) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: "olga", account: account)
            #expect(try await server.submit(bought.signedTransaction, headers: ServerHarness.userHeaders("olga"), orderId: orderId).status == 200)
            try await ConsoleTests.browse(server) { support in
                #expect(try await support.signIn("sam", ConsoleTests.operators[1].2).status == 303)
                let page = try await support.get("/admin/customers/olga")
                let timeline = try #require(
                    page.text.components(separatedBy: "<h2>Timeline</h2>").dropFirst().first?.components(separatedBy: "</table>").first
                )
                let rows = timeline.components(separatedBy: "<tr").filter { $0.contains("<td>\(orderId)</td>") }
                let created = rows.filter { $0.contains("order.created") || $0.contains("order created") }.count
                #expect(timeline.contains("order.created"), "the order's audit entry")
                #expect(created == 1, "once, not as an audit entry and again as an order row: \(created)")
            }
        }
    }

    @Test("Find reads a space sent as + in its form")
    func findWithSpaces() async throws {
        try await ServerHarness.run(.sqlite, configure: ConsoleTests.configure) { server in
            let user = "Erin Lee"
            let account = try await server.store.createAccount().id
            let (orderId, bought) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: user, account: account)
            #expect(try await server.submit(bought.signedTransaction, headers: ServerHarness.userHeaders(user), orderId: orderId).status == 200)
            try await ConsoleTests.browse(server) { support in
                #expect(try await support.signIn("sam", ConsoleTests.operators[1].2).status == 303)
                for query in ["Erin+Lee", "Erin%20Lee"] {
                    let found = try await support.get("/admin/find?q=\(query)")
                    #expect(found.text.contains("href=\"/admin/customers/Erin%20Lee\""), "\(query)")
                }
                #expect(try await support.get("/admin/customers/Erin%20Lee").status == 200)
            }
        }
    }

    @Test("the timeline shows the newest changes first and pages back through more than 500", arguments: TestDatabase.available)
    func timelinePages(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: ConsoleTests.configure) { server in
            let admin = try server.api(ServerHarness.adminHeaders)
            for index in 1...520 {
                _ = try await admin.adminAdjustWallet(
                    path: .init(id: "hank"),
                    body: .json(.init(amount: 1, idempotencyKey: "bonus-\(index)", reason: "bonus \(index)"))
                ).ok
            }
            try await ConsoleTests.browse(server) { support in
                #expect(try await support.signIn("sam", ConsoleTests.operators[1].2).status == 303)
                var seen = Set<Int>()
                var path: String? = "/admin/customers/hank"
                var pages = 0
                while let next = path {
                    let page = try await support.get(next)
                    #expect(page.status == 200)
                    let numbers = Self.bonuses(in: page.text)
                    if pages == 0 { #expect(numbers.first == 520, "the newest change opens the timeline") }
                    #expect(numbers == numbers.sorted(by: >), "newest first")
                    #expect(seen.isDisjoint(with: numbers), "no entry on two pages")
                    seen.formUnion(numbers)
                    path = Self.olderLink(in: page.text)
                    if path != nil { #expect(page.text.contains("there is more")) }
                    pages += 1
                }
                #expect(seen == Set(1...520), "every change on some page")
                #expect(pages == 3)
                #expect(try await support.get("/admin/customers/hank?before=x").status == 400)
            }
        }
    }

    /// The `bonus N` reasons on a page, in page order.
    static func bonuses(in text: String) -> [Int] {
        var numbers: [Int] = []
        var rest = text[...]
        while let range = rest.range(of: "<td>bonus ") {
            rest = rest[range.upperBound...]
            if let number = Int(rest.prefix { $0.isNumber }) { numbers.append(number) }
        }
        return numbers
    }

    static func olderLink(in text: String) -> String? {
        guard let end = text.range(of: "\" rel=\"next\"") else { return nil }
        let head = text[..<end.lowerBound]
        guard let start = head.range(of: "href=\"", options: .backwards) else { return nil }
        return String(head[start.upperBound...]).replacingOccurrences(of: "&amp;", with: "&")
    }
}

import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Issue 19, item 6: every delivered transaction names the app install it came from (`appTransactionId`). Those
/// that came without it — legacy receipts — are named with Get App Transaction Info, verified, and then count in the
/// risk signals like any other (one install shared by several app users).
@Suite("App transactions")
struct AppTransactionTests {
    @Test(
        "a receipt's purchases are named with Get App Transaction Info; the shared install shows on support's page",
        arguments: TestDatabase.available
    )
    func receiptPurchasesNamed(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: ConsoleTests.configure) { server in
            let store = server.store
            let account = try await store.createAccount().id
            // One Apple account's install: a StoreKit 2 purchase for one app user carries the install's id...
            let (orderId, signed) = try await server.orderAndBuy(PurchaseFlowTests.chapter, user: "ines", account: account)
            #expect(try await server.submit(signed.signedTransaction, headers: ServerHarness.userHeaders("ines"), orderId: orderId).status == 200)
            let install = try #require(signed.transaction.appTransactionId)
            // ...a legacy receipt's purchase for another app user does not.
            let pass = try await store.purchase(productId: PurchaseFlowTests.pass, account: account)
            let passId = try #require(pass.transaction.transactionId)
            let receipt = try await server.receipt(account: account)
            let reply = try await server.call(.POST, "/v1/purchases", json: ["receipt": receipt], headers: ServerHarness.userHeaders("otto"))
            #expect(reply.status == 200, "\(reply.text)")
            func installOf(_ user: String, _ id: String) async throws -> String? {
                let view = try await server.api(ServerHarness.adminHeaders).adminGetUser(path: .init(id: user)).ok.body.json
                return view.transactions.first { $0.transactionId == id }?.appTransactionId
            }
            #expect(try await installOf("otto", passId) == nil, "a receipt entry names no install")

            #expect(try await server.runJob("app-transactions") >= 0)
            #expect(try await installOf("otto", passId) == install, "Apple's signed app transaction named it")
            #expect(try await server.runJob("app-transactions") == 0, "named once")
            // A change to a delivered transaction, so audited on its holder.
            #expect(try await server.audit("otto").contains { $0.action == "transaction.install_named" && ($0.detail ?? "").contains(install) })

            // The risk signal sees both app users on one install.
            try await ConsoleTests.browse(server) { support in
                #expect(try await support.signIn("sam", ConsoleTests.operators[1].2).status == 303)
                let page = try await support.get("/admin/customers/otto")
                #expect(page.text.contains("<td>\(install)</td>"), "the install is shown")
                #expect(page.text.contains("Other users on the same app install"))
                let signal = try #require(page.text.range(of: "Other users on the same app install"))
                #expect(page.text[signal.upperBound...].prefix(200).contains(">1<"), "\(page.text[signal.upperBound...].prefix(200))")
            }
        }
    }
}

import Foundation
import SQLKit
import StorageTestSupport
import StorekeeperCore
import StorekeeperStorage
import Testing

/// `027_store_transactions`, `028_purchase_tokens` and `029_store_fees` on a database the release before them made:
/// the delivered transactions keep every column and the indexes, gain their store, and the gateway reads and writes
/// them under the new name, Google Play's purchase tokens, acknowledgements and fees included.
@Suite struct StoreTransactionsMigrationTests {
    @Test func aDatabaseFromTheLastReleaseKeepsItsTransactions() async throws {
        try await StorageHarness.withEachProvider { provider in
            let previous = Array(StorekeeperSchema.migrations.prefix { $0.name != "027_store_transactions" })
            #expect(previous.count == StorekeeperSchema.migrations.count - 4, "027 to 030 are the newest migrations")
            try await Migrator(migrations: previous).migrate(provider)
            try await provider.withSession { db in
                try await db.raw(
                    """
                    INSERT INTO apple_transactions (transaction_id, original_transaction_id, user_id, bundle_id, product_id,
                        product_kind, environment, quantity, purchase_date, source, delivered_at, price, currency)
                    VALUES ('1000', '1000', 'alice', 'com.example', 'coins.60', 'consumable', 'Production', 1, 1700000000000,
                        'signedTransaction', 1700000000500, 990, 'USD')
                    """
                ).run()
            }
            #expect(
                try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider) == [
                    "027_store_transactions", "028_purchase_tokens", "029_store_fees", "030_subscription_rollups",
                ]
            )
            try await provider.withSession { db in
                let row = try #require(try await db.raw("SELECT store, user_id, price FROM store_transactions WHERE transaction_id = '1000'").first())
                #expect(try row.decode(column: "store", as: String.self) == Store.appStore.rawValue)
                #expect(try row.decode(column: "user_id", as: String.self) == "alice")
                #expect(try row.decode(column: "price", as: Int64?.self) == 990)
                let delivered = try #require(try await StoreTransactionsTable.delivered("1000", on: db))
                #expect(delivered.user == UserID(rawValue: "alice"))
                // The old name is gone: nothing can write beside the new table.
                await #expect(throws: (any Error).self) { try await db.raw("SELECT COUNT(*) FROM apple_transactions").run() }
                // A new delivery lands in the same table, with its store, and the primary key still holds.
                let transaction = VerifiedTransaction(
                    transactionId: "1001",
                    originalTransactionId: "1001",
                    bundleId: "com.example",
                    productId: "coins.60",
                    environment: .production,
                    purchaseDate: Date(timeIntervalSince1970: 1_700_000_100),
                    source: .signedTransaction
                )
                let row1001 = StoreTransactionsTable.Row(
                    transaction: transaction,
                    owner: UserID(rawValue: "bob"),
                    productKind: .consumable,
                    subscriptionGroup: nil,
                    orderId: nil
                )
                let inserted = try await StoreTransactionsTable.insert([row1001], now: Date(), on: db)
                #expect(inserted == ["1001"])
                #expect(try await StoreTransactionsTable.insert([row1001], now: Date(), on: db).isEmpty)
                let stores = try await db.raw("SELECT store FROM store_transactions ORDER BY transaction_id").all()
                    .map { try $0.decode(column: "store", as: String.self) }
                #expect(stores == ["app_store", "app_store"])

                // A Play purchase keeps its token, and waits to be acknowledged until Google confirms it.
                var play = transaction
                play.transactionId = "GPA.1234-5678-9012-34567"
                play.originalTransactionId = play.transactionId
                play.store = .googlePlay
                play.purchaseToken = "token-abc"
                play.acknowledgement = StoreAcknowledgement(action: .consume, deadline: Date(timeIntervalSince1970: 1_700_259_300))
                play.commerce.price = 990
                play.commerce.storeFeePermille = 300
                let playRow = StoreTransactionsTable.Row(
                    transaction: play,
                    owner: UserID(rawValue: "carol"),
                    productKind: .consumable,
                    subscriptionGroup: nil,
                    orderId: nil
                )
                #expect(try await StoreTransactionsTable.insert([playRow], now: Date(), on: db) == [play.transactionId])
                let fee = try await db.raw("SELECT store_fee_permille FROM store_transactions WHERE transaction_id = \(bind: play.transactionId)")
                    .first()?.decode(column: "store_fee_permille", as: Int64?.self)
                #expect(fee == 300, "Google's fee on the order is kept")
                #expect(try await StoreTransactionsTable.markAcknowledged(play.transactionId, at: Date(), on: db))
                #expect(try await StoreTransactionsTable.markAcknowledged(play.transactionId, at: Date(), on: db) == false, "once")
            }
            let tokens = PurchaseTokens(provider: provider)
            #expect(try await tokens.original(ofPurchaseToken: "token-abc") == "GPA.1234-5678-9012-34567")
            #expect(try await tokens.unacknowledged(bundleIds: ["com.example"], limit: 10).isEmpty)
            #expect(try await tokens.acknowledgement(of: "GPA.1234-5678-9012-34567")?.at != nil)
        }
    }
}

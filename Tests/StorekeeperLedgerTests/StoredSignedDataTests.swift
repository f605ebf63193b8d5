import Foundation
import SQLKit
import StorageTestSupport
import StorekeeperCore
import StorekeeperStorage
import Testing

@testable import StorekeeperLedger

/// Signed transactions are stored with their certificate chain shared, and read back exactly as Apple sent them.
@Suite struct StoredSignedDataTests {
    static let coins = CatalogProduct(id: "coins", kind: .consumable, coins: 10)

    static func transaction(_ id: String, signedData: String?) -> VerifiedTransaction {
        VerifiedTransaction(
            transactionId: id,
            originalTransactionId: id,
            bundleId: "com.example",
            productId: coins.id,
            environment: .sandbox,
            purchaseDate: Date(timeIntervalSince1970: 1_800_000_000),
            source: .signedTransaction,
            signedData: signedData
        )
    }

    static func jws(header: String, payload: String) -> String {
        func encode(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return encode(header) + "." + encode(payload) + "." + encode("signature")
    }

    /// A header as long as Apple's (an x5c chain of three certificates).
    static let chain = #"{"alg":"ES256","x5c":[""# + String(repeating: "MIIB", count: 400) + #""]}"#

    @Test func deliveredTransactionsShareTheirChainAndReadBackExactly() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await LedgerFixtures.ledger(on: provider, maximumBatch: 16)
            let chain = Self.chain
            let otherChain = chain.replacingOccurrences(of: "MIIB", with: "MIIC")
            let originals: [String: String?] = [
                "t1": Self.jws(header: chain, payload: #"{"transactionId":"t1"}"#),
                "t2": Self.jws(header: chain, payload: #"{"transactionId":"t2","note":"ünïcødé"}"#),
                "t3": Self.jws(header: otherChain, payload: #"{"transactionId":"t3"}"#),
                // A short header stays in place; no signed data stays NULL.
                "t4": Self.jws(header: #"{"alg":"ES256"}"#, payload: #"{"transactionId":"t4"}"#),
                "t5": nil,
            ]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (id, signedData) in originals {
                    group.addTask {
                        _ = try await LedgerFixtures.deliver(
                            ledger,
                            Self.transaction(id, signedData: signedData),
                            product: Self.coins,
                            to: "u-\(id)"
                        )
                    }
                }
                try await group.waitForAll()
            }
            try await provider.withSession { db in
                let headers = try await db.raw("SELECT COUNT(*) AS n FROM notification_headers").first()!.decode(column: "n", as: Int.self)
                #expect(headers == 2, "\(provider.kind)")
                for (id, original) in originals {
                    let stored = try await db.raw("SELECT signed_data FROM store_transactions WHERE transaction_id = \(bind: id)")
                        .first()!.decode(column: "signed_data", as: String?.self)
                    guard let original else {
                        #expect(stored == nil)
                        continue
                    }
                    let text = try #require(stored)
                    if id == "t4" {
                        #expect(text == original)
                    } else {
                        #expect(text.utf8.first == 0x01, "\(id) on \(provider.kind) is stored compacted")
                        #expect(text.utf8.count * 3 < original.utf8.count)
                    }
                    #expect(try await StoredSignedData.expand(text, on: db) == original, "\(id) on \(provider.kind)")
                }
            }
        }
    }
}

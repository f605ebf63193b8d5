import Foundation
import Logging
import SQLKit
import StorageTestSupport
import StorekeeperCore
import StorekeeperStorage

@testable import StorekeeperLedger

/// Products, transactions and a ledger on a migrated database, for the ledger's tests.
enum LedgerFixtures {
    static let coins = CatalogProduct(id: "coins", kind: .consumable, coins: 10)
    static let pass = CatalogProduct(id: "pass", kind: .nonRenewing, entitlement: "pass", duration: CatalogDuration(value: 1, unit: .month))
    static let unlock = CatalogProduct(id: "unlock", kind: .nonConsumable, entitlement: "unlock")
    static let monthly = CatalogProduct(id: "monthly", kind: .autoRenewable, entitlement: "member", subscriptionGroup: "g", level: 1)
    static let catalog = Catalog(products: [coins, pass, unlock, monthly])
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func transaction(
        _ id: String,
        product: CatalogProduct,
        original: String? = nil,
        price: Int64? = nil,
        signedData: String? = nil
    ) -> VerifiedTransaction {
        VerifiedTransaction(
            transactionId: id,
            originalTransactionId: original ?? id,
            bundleId: "com.example",
            productId: product.id,
            environment: .sandbox,
            purchaseDate: t0,
            expiresDate: product.kind == .autoRenewable ? t0 + 30 * 86_400 : nil,
            subscriptionGroup: product.subscriptionGroup,
            source: .signedTransaction,
            signedData: signedData,
            commerce: TransactionCommerce(price: price, currency: price == nil ? nil : "USD", storefront: price == nil ? nil : "USA")
        )
    }

    /// A ledger on `provider`, migrated first.
    static func ledger(
        on provider: any DatabaseProvider,
        policy: TransferPolicy = .refuse,
        clawback: CoinClawbackPolicy = .debt,
        maximumBatch: Int = 256
    ) async throws -> Ledger {
        try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
        return Ledger(
            provider: provider,
            rules: LedgerRules(catalog: { catalog }, transferPolicy: policy, coinClawback: clawback),
            maximumBatch: maximumBatch,
            logger: Logger(label: "test.ledger")
        )
    }

    static func deliver(
        _ ledger: Ledger,
        _ transaction: VerifiedTransaction,
        product: CatalogProduct,
        to user: String?,
        policy: TransferPolicy = .refuse
    ) async throws -> DeliveryResult {
        try await ledger.deliver(
            DeliveryRequest(transaction: transaction, product: product, orderId: nil, submitter: user.map(UserID.init(rawValue:)), policy: policy)
        )
    }

    static func count(_ provider: any DatabaseProvider, _ sql: String) async throws -> Int {
        try await provider.withSession { db in
            Int(try await db.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: sql)").first()!.decode(column: "n", as: Int64.self))
        }
    }

    static func balance(_ provider: any DatabaseProvider, _ user: String) async throws -> Int64 {
        try await provider.withSession { db in
            try await db.raw("SELECT balance FROM wallets WHERE user_id = \(bind: user)").first()?.decode(column: "balance", as: Int64.self) ?? 0
        }
    }
}

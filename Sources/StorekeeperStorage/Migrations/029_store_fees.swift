import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    /// The service fee the store says it took on a transaction, in thousandths (Google Play's orders name it: 15 %, or
    /// 30 % past a developer's first US$1 million a year), so proceeds are Google's rather than an estimate's.
    static let m029StoreFees = Migration("029_store_fees") { db, _ in
        try await db.raw("ALTER TABLE store_transactions ADD COLUMN store_fee_permille INTEGER").run()
    }
}

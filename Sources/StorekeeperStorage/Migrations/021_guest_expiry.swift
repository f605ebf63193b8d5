import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m021GuestExpiry = Migration("021_guest_expiry") { db, _ in
        // Issued guests by age, for expiring those that never bought anything.
        try await db.raw("CREATE INDEX guest_credentials_by_created ON guest_credentials (created_at) WHERE origin = 'issued'").run()
    }
}

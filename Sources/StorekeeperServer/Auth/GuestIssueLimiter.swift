import Foundation
import StorekeeperCore
import Synchronization

/// How many guests `POST /v1/guests` issues per client address: at most `perHour` in any hour, so nobody can fill
/// the database with guests from one address (each costs a user row and a credential). Kept in this process's memory:
/// each server counts on its own. Apps behind one carrier NAT share an address; the default leaves room for them.
final class GuestIssueLimiter: Sendable {
    let perHour: Int
    static let window: TimeInterval = 3_600
    /// Addresses tracked at most; past it the idle ones are forgotten first.
    static let maximumAddresses = 50_000

    private let issued = Mutex<[String: [Date]]>([:])

    init(perHour: Int) {
        self.perHour = perHour
    }

    /// Counts one issue for `address`, or throws `too_many_guests` (429, with when to try again) when its hour is full.
    func take(_ address: String, now: Date = Date()) throws {
        let wait = issued.withLock { issued -> TimeInterval? in
            if issued.count >= Self.maximumAddresses {
                issued = issued.filter { $0.value.last.map { now.timeIntervalSince($0) < Self.window } == true }
            }
            var times = (issued[address] ?? []).filter { now.timeIntervalSince($0) < Self.window }
            if times.count >= perHour, let oldest = times.first {
                issued[address] = times
                return Self.window - now.timeIntervalSince(oldest)
            }
            times.append(now)
            issued[address] = times
            return nil
        }
        if let wait {
            let seconds = max(1, Int(wait.rounded(.up)))
            throw AuthError.tooManyGuests(perHour: perHour, retryAfterSeconds: seconds)
        }
    }
}

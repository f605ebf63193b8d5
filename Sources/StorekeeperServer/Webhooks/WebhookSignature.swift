import Crypto
import Foundation

/// The `Storekeeper-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`, one `v1` per active
/// secret (two during a rotation), so a receiver holding either secret can check it.
public enum WebhookSignature {
    public static let header = "Storekeeper-Signature"

    /// The header's value for `body` sent at `time`.
    public static func sign(_ body: some DataProtocol, secrets: [String], time: Date) -> String {
        let timestamp = String(Int64(time.timeIntervalSince1970))
        var parts = ["t=\(timestamp)"]
        for secret in secrets {
            parts.append("v1=" + hex(mac(body, timestamp: timestamp, secret: secret)))
        }
        return parts.joined(separator: ",")
    }

    /// Whether `header` signs `body` with `secret` at a time within `tolerance` of `now` — the receiver's check,
    /// here for tests and for a Swift receiver to copy.
    public static func verify(_ header: String, body: some DataProtocol, secret: String, now: Date, tolerance: TimeInterval = 300) -> Bool {
        var timestamp: String?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = pair[1] } else if pair[0] == "v1" { signatures.append(pair[1]) }
        }
        guard let timestamp, let seconds = Int64(timestamp), abs(now.timeIntervalSince1970 - Double(seconds)) <= tolerance else { return false }
        let expected = mac(body, timestamp: timestamp, secret: secret)
        return signatures.contains { candidate in
            guard let bytes = unhex(candidate) else { return false }
            return constantTimeEqual(bytes, Array(expected))
        }
    }

    static func mac(_ body: some DataProtocol, timestamp: String, secret: String) -> HashedAuthenticationCode<SHA256> {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: Data(secret.utf8)))
        hmac.update(data: Data((timestamp + ".").utf8))
        hmac.update(data: Data(body))
        return hmac.finalize()
    }

    static func hex(_ code: HashedAuthenticationCode<SHA256>) -> String {
        code.map { String(format: "%02x", $0) }.joined()
    }

    static func unhex(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        guard bytes.count == 64 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(32)
        var index = 0
        while index < bytes.count {
            guard let high = nibble(bytes[index]), let low = nibble(bytes[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}

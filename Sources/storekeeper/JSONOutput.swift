import AppStoreWire
import Foundation

/// Renders command output as stable, pretty-printed JSON.
enum JSONOutput {
    static func render(_ object: [String: Any]) throws -> String {
        let data = try JSONSerialization.data(
            withJSONObject: object,
            options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        )
        return String(decoding: data, as: UTF8.self)
    }

    /// A model as a JSON object (dates in epoch milliseconds, as Apple writes them).
    static func object(_ value: some Encodable) throws -> Any {
        try JSONSerialization.jsonObject(with: AppStoreJSON.makeEncoder().encode(value))
    }
}

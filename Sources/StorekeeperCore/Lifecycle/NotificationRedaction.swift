import Foundation

/// Takes secrets out of notification bodies before anything is stored (invariant 6): a V1 body carries the app's
/// shared secret as `password`, and a refused body may carry a wrong one.
public enum NotificationRedaction {
    public static let placeholder = "<redacted>"

    /// A V1 JSON body with `password` replaced by ``placeholder`` (the rest re-serialised, keys sorted); nil when
    /// the text is not a JSON object.
    public static func redactV1(_ body: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else { return nil }
        var redacted = object
        if redacted["password"] != nil { redacted["password"] = placeholder }
        guard let data = try? JSONSerialization.data(withJSONObject: redacted, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return nil
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// At most `bytes` UTF-8 bytes of `text` to show an operator, with anything that looks like a `password`
    /// value blanked and control characters replaced.
    public static func prefix(of text: String, bytes: Int = 256) -> String {
        // A character cut in half at the end decodes as U+FFFD.
        var shown = String(decoding: text.utf8.prefix(bytes), as: UTF8.self)
        if let range = shown.range(of: "password", options: .caseInsensitive) {
            // Everything from the word on may be the secret or part of it.
            shown = String(shown[..<range.upperBound]) + "\":" + placeholder
        }
        return String(shown.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
    }
}

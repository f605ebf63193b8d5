/// A Boolean query parameter read as Apple reads it: `true` or `false` in any letter case (Apple's Python library
/// sends `str(True)`, that is `True`).
enum QueryBoolean {
    /// The value `text` spells, or `nil` when it spells neither.
    static func parse(_ text: some StringProtocol) -> Bool? {
        switch text.lowercased() {
        case "true": true
        case "false": false
        default: nil
        }
    }
}

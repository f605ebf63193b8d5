/// The store a purchase was made in. Transactions, messages and the tables that keep them carry it, so one user's
/// wallet and entitlements can come from any store.
///
/// Transaction ids are unique across stores by construction: Apple's are decimal digits, Google Play's are order ids
/// (`GPA.…`) or, for a purchase without one, `token:` and its purchase token's digest — never digits alone.
public enum Store: String, Sendable, Hashable, Codable, CaseIterable {
    case appStore = "app_store"
    case googlePlay = "google_play"

    /// The name the API and the catalog file use (`appStore`, `googlePlay`); the raw value is the stored one.
    public var apiName: String {
        switch self {
        case .appStore: "appStore"
        case .googlePlay: "googlePlay"
        }
    }

    /// The store an API name (or a stored name) names.
    public init?(apiName: String) {
        guard let store = Store.allCases.first(where: { $0.apiName == apiName || $0.rawValue == apiName }) else { return nil }
        self = store
    }

    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let store = Store(apiName: name) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown store \(name)"))
        }
        self = store
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(apiName)
    }
}

/// The store a purchase was made in. Transactions, messages and the tables that keep them carry it, so one user's
/// wallet and entitlements can come from any store.
public enum Store: String, Sendable, Hashable, Codable, CaseIterable {
    case appStore = "app_store"
}

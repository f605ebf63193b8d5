import Foundation

/// The query of Get Transaction History (v1 and v2): filters, sort order and the paging `revision`.
///
/// Keep every filter identical from page to page; only ``revision`` changes.
public struct TransactionHistoryRequest: Hashable, Sendable {
    /// The `revision` of the previous page; nil for the first page.
    public var revision: String?
    /// Only transactions purchased at or after this date.
    public var startDate: Date?
    /// Only transactions purchased before this date.
    public var endDate: Date?
    /// Only these products.
    public var productIds: [String]
    /// Only these product types.
    public var productTypes: [TransactionHistoryProductType]
    /// Only these subscription groups.
    public var subscriptionGroupIdentifiers: [String]
    /// Only purchased, or only family-shared, transactions.
    public var inAppOwnershipType: InAppOwnershipType?
    /// Order by last-modified date; Apple's default is ascending.
    public var sort: TransactionHistorySort?
    /// `true` only revoked (refunded) transactions, `false` only unrevoked ones, nil both.
    public var revoked: Bool?

    public init(
        revision: String? = nil,
        startDate: Date? = nil,
        endDate: Date? = nil,
        productIds: [String] = [],
        productTypes: [TransactionHistoryProductType] = [],
        subscriptionGroupIdentifiers: [String] = [],
        inAppOwnershipType: InAppOwnershipType? = nil,
        sort: TransactionHistorySort? = nil,
        revoked: Bool? = nil
    ) {
        self.revision = revision
        self.startDate = startDate
        self.endDate = endDate
        self.productIds = productIds
        self.productTypes = productTypes
        self.subscriptionGroupIdentifiers = subscriptionGroupIdentifiers
        self.inAppOwnershipType = inAppOwnershipType
        self.sort = sort
        self.revoked = revoked
    }

    /// The query parameters, repeatable ones repeated, dates in epoch milliseconds.
    public var queryItems: [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let revision { items.append(.init(name: "revision", value: revision)) }
        if let startDate {
            items.append(.init(name: "startDate", value: String(ServerAPIEncoding.milliseconds(startDate))))
        }
        if let endDate { items.append(.init(name: "endDate", value: String(ServerAPIEncoding.milliseconds(endDate)))) }
        items += productIds.map { .init(name: "productId", value: $0) }
        items += productTypes.map { .init(name: "productType", value: $0.rawValue) }
        if let sort { items.append(.init(name: "sort", value: sort.rawValue)) }
        items += subscriptionGroupIdentifiers.map { .init(name: "subscriptionGroupIdentifier", value: $0) }
        if let inAppOwnershipType {
            items.append(.init(name: "inAppOwnershipType", value: inAppOwnershipType.rawValue))
        }
        if let revoked { items.append(.init(name: "revoked", value: revoked ? "true" : "false")) }
        return items
    }
}

import Foundation

/// One line of a Summary Sales Report (Sales and Trends, `reportType=SALES`, `reportSubType=SUMMARY`): units of one
/// product at one price in one country on one day. Refunds are lines with negative units (reference §11).
public struct SalesReportRow: Sendable, Hashable {
    /// The product identifier (`SKU`; for in-app purchases, the product id).
    public var sku: String
    public var title: String?
    public var productTypeIdentifier: String
    /// Negative for refunds.
    public var units: Int
    /// Proceeds per unit, milliunits of ``proceedsCurrency``.
    public var developerProceeds: Int64
    /// Customer price per unit, milliunits of ``customerCurrency`` (negative on refunds).
    public var customerPrice: Int64
    public var customerCurrency: String
    /// ISO 3166-1 alpha-2.
    public var countryCode: String
    public var proceedsCurrency: String
    /// `MM/DD/YYYY` as Apple writes it.
    public var beginDate: String
    public var endDate: String
    public var appleIdentifier: String?
    public var parentIdentifier: String?
    /// `New`, `Renewal` or empty.
    public var subscription: String?
    public var period: String?
    /// `Rate After One Year` for the 85 % tier, else empty.
    public var proceedsReason: String?

    public init(
        sku: String,
        title: String? = nil,
        productTypeIdentifier: String,
        units: Int,
        developerProceeds: Int64,
        customerPrice: Int64,
        customerCurrency: String,
        countryCode: String,
        proceedsCurrency: String,
        beginDate: String,
        endDate: String,
        appleIdentifier: String? = nil,
        parentIdentifier: String? = nil,
        subscription: String? = nil,
        period: String? = nil,
        proceedsReason: String? = nil
    ) {
        self.sku = sku
        self.title = title
        self.productTypeIdentifier = productTypeIdentifier
        self.units = units
        self.developerProceeds = developerProceeds
        self.customerPrice = customerPrice
        self.customerCurrency = customerCurrency
        self.countryCode = countryCode
        self.proceedsCurrency = proceedsCurrency
        self.beginDate = beginDate
        self.endDate = endDate
        self.appleIdentifier = appleIdentifier
        self.parentIdentifier = parentIdentifier
        self.subscription = subscription
        self.period = period
        self.proceedsReason = proceedsReason
    }

    /// The columns of version 1_3, in Apple's order (`version=1_1` lacks the last few; readers go by name).
    public static let columns = [
        "Provider", "Provider Country", "SKU", "Developer", "Title", "Version", "Product Type Identifier", "Units",
        "Developer Proceeds", "Begin Date", "End Date", "Customer Currency", "Country Code", "Currency of Proceeds",
        "Apple Identifier", "Customer Price", "Promo Code", "Parent Identifier", "Subscription", "Period", "Category", "CMB",
        "Device", "Supported Platforms", "Proceeds Reason", "Preserved Pricing", "Client", "Order Type",
    ]

    static let required = [
        "SKU", "Product Type Identifier", "Units", "Developer Proceeds", "Customer Price", "Customer Currency",
        "Country Code", "Currency of Proceeds", "Begin Date", "End Date",
    ]

    /// Whether the line is an in-app purchase (Apple's `IA*` and `FI1` product types), not an app download or update.
    public var isInAppPurchase: Bool { productTypeIdentifier.hasPrefix("IA") || productTypeIdentifier == "FI1" }

    /// Reads every line of a summary sales report; throws naming the line and column of a value it cannot read.
    public static func rows(of table: ReportTable) throws -> [SalesReportRow] {
        let at = try table.positions(of: required)
        func optional(_ row: [String], _ column: String) -> String? {
            guard let position = table.position(of: column) else { return nil }
            let value = row[position].trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
        return try table.rows.enumerated().map { index, row in
            func field(_ column: String) -> String { row[at[column]!].trimmingCharacters(in: .whitespaces) }
            func money(_ column: String) throws -> Int64 {
                guard let value = ReportMoney.milliunits(field(column)) else {
                    throw ReportTable.Failure("row \(index + 1): \(column) \"\(field(column).prefix(40))\" is not an amount")
                }
                return value
            }
            guard let units = Int(field("Units")), abs(units) <= 1_000_000_000 else {
                throw ReportTable.Failure("row \(index + 1): Units \"\(field("Units").prefix(40))\" is not a count")
            }
            return SalesReportRow(
                sku: field("SKU"),
                title: optional(row, "Title"),
                productTypeIdentifier: field("Product Type Identifier"),
                units: units,
                developerProceeds: try money("Developer Proceeds"),
                customerPrice: try money("Customer Price"),
                customerCurrency: field("Customer Currency"),
                countryCode: field("Country Code"),
                proceedsCurrency: field("Currency of Proceeds"),
                beginDate: field("Begin Date"),
                endDate: field("End Date"),
                appleIdentifier: optional(row, "Apple Identifier"),
                parentIdentifier: optional(row, "Parent Identifier"),
                subscription: optional(row, "Subscription"),
                period: optional(row, "Period"),
                proceedsReason: optional(row, "Proceeds Reason")
            )
        }
    }

    /// The line in Apple's 1_3 layout (fields Storekeeper does not model left empty).
    public var fields: [String] {
        [
            "APPLE", "US", sku, "", title ?? sku, "1", productTypeIdentifier, String(units), ReportMoney.text(developerProceeds),
            beginDate, endDate, customerCurrency, countryCode, proceedsCurrency, appleIdentifier ?? "", ReportMoney.text(customerPrice),
            "", parentIdentifier ?? "", subscription ?? "", period ?? "", "", "", "iPhone", "iOS", proceedsReason ?? "", "", "", "",
        ]
    }

    /// Apple's `MM/DD/YYYY` for a UTC day.
    public static func reportDate(_ day: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: day)
        return String(format: "%02d/%02d/%04d", parts.month ?? 1, parts.day ?? 1, parts.year ?? 1970)
    }
}

import Foundation

/// One line of a Financial Report (`financeReports`, `reportType=FINANCIAL`): what Apple pays for one product in one
/// country over its fiscal month — quantity, proceeds per unit and in total, sales or returns (reference §11).
public struct FinanceReportRow: Sendable, Hashable {
    public var startDate: String
    public var endDate: String
    /// The product identifier (`Vendor Identifier`).
    public var vendorIdentifier: String
    /// Negative for returns.
    public var quantity: Int
    /// Proceeds per unit, milliunits of ``partnerShareCurrency``.
    public var partnerShare: Int64
    /// `quantity × partnerShare`, milliunits.
    public var extendedPartnerShare: Int64
    public var partnerShareCurrency: String
    /// `S` (sale) or `R` (return).
    public var saleOrReturn: String
    public var productTypeIdentifier: String?
    /// ISO 3166-1 alpha-2.
    public var countryOfSale: String
    public var customerPrice: Int64?
    public var customerCurrency: String?

    public init(
        startDate: String,
        endDate: String,
        vendorIdentifier: String,
        quantity: Int,
        partnerShare: Int64,
        extendedPartnerShare: Int64,
        partnerShareCurrency: String,
        saleOrReturn: String,
        productTypeIdentifier: String?,
        countryOfSale: String,
        customerPrice: Int64?,
        customerCurrency: String?
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.vendorIdentifier = vendorIdentifier
        self.quantity = quantity
        self.partnerShare = partnerShare
        self.extendedPartnerShare = extendedPartnerShare
        self.partnerShareCurrency = partnerShareCurrency
        self.saleOrReturn = saleOrReturn
        self.productTypeIdentifier = productTypeIdentifier
        self.countryOfSale = countryOfSale
        self.customerPrice = customerPrice
        self.customerCurrency = customerCurrency
    }

    public static let columns = [
        "Start Date", "End Date", "UPC", "ISRC/ISBN", "Vendor Identifier", "Quantity", "Partner Share", "Extended Partner Share",
        "Partner Share Currency", "Sales or Return", "Apple Identifier", "Artist/Show/Developer/Author", "Title",
        "Label/Studio/Network/Developer/Publisher", "Grid", "Product Type Identifier", "ISAN/Other Identifier", "Country Of Sale",
        "Pre-order Flag", "Promo Code", "Customer Price", "Customer Currency",
    ]

    static let required = [
        "Start Date", "End Date", "Vendor Identifier", "Quantity", "Partner Share", "Extended Partner Share", "Partner Share Currency",
        "Country Of Sale",
    ]

    /// Reads every line of a financial report (the totals after the blank line are the table's trailer).
    public static func rows(of table: ReportTable) throws -> [FinanceReportRow] {
        let at = try table.positions(of: required)
        // Apple's files say "Sales or Return"; some documentation says "Sale or Return".
        guard let saleOrReturn = table.position(of: "Sales or Return") ?? table.position(of: "Sale or Return") else {
            throw ReportTable.Failure("the report has no Sales or Return column")
        }
        return try table.rows.enumerated().map { index, row in
            func field(_ column: String) -> String { row[at[column]!].trimmingCharacters(in: .whitespaces) }
            func optional(_ column: String) -> String? {
                guard let position = table.position(of: column) else { return nil }
                let value = row[position].trimmingCharacters(in: .whitespaces)
                return value.isEmpty ? nil : value
            }
            func money(_ text: String, _ column: String) throws -> Int64 {
                guard let value = ReportMoney.milliunits(text) else {
                    throw ReportTable.Failure("row \(index + 1): \(column) \"\(text.prefix(40))\" is not an amount")
                }
                return value
            }
            guard let quantity = Int(field("Quantity")), abs(quantity) <= 1_000_000_000 else {
                throw ReportTable.Failure("row \(index + 1): Quantity \"\(field("Quantity").prefix(40))\" is not a count")
            }
            return FinanceReportRow(
                startDate: field("Start Date"),
                endDate: field("End Date"),
                vendorIdentifier: field("Vendor Identifier"),
                quantity: quantity,
                partnerShare: try money(field("Partner Share"), "Partner Share"),
                extendedPartnerShare: try money(field("Extended Partner Share"), "Extended Partner Share"),
                partnerShareCurrency: field("Partner Share Currency"),
                saleOrReturn: row[saleOrReturn].trimmingCharacters(in: .whitespaces),
                productTypeIdentifier: optional("Product Type Identifier"),
                countryOfSale: field("Country Of Sale"),
                customerPrice: try optional("Customer Price").map { try money($0, "Customer Price") },
                customerCurrency: optional("Customer Currency")
            )
        }
    }

    /// The line in Apple's layout.
    public var fields: [String] {
        [
            startDate, endDate, "", vendorIdentifier, vendorIdentifier, String(quantity), ReportMoney.text(partnerShare),
            ReportMoney.text(extendedPartnerShare), partnerShareCurrency, saleOrReturn, "", "", vendorIdentifier, "", "",
            productTypeIdentifier ?? "", "", countryOfSale, "", "", customerPrice.map(ReportMoney.text) ?? "", customerCurrency ?? "",
        ]
    }
}

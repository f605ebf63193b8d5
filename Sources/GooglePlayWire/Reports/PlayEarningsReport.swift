import Foundation

/// One of Google Play's monthly earnings reports (`earnings/earnings_YYYYMM_<account>.zip` in the developer
/// account's Cloud Storage bucket): a CSV line for each charge, Google fee, tax and refund of every order the month's
/// payment covers, amounts in the buyer's currency and the merchant's. Columns are found by their header, so added
/// columns and a changed order are read.
public struct PlayEarningsReport: Sendable, Hashable {
    /// What a line books.
    public enum TransactionType: Sendable, Hashable {
        case charge
        case googleFee
        case tax
        case chargeRefund
        case googleFeeRefund
        case taxRefund
        /// A type this code does not know (kept, and left out of the sums).
        case other(String)

        public init(_ text: String) {
            switch text {
            case "Charge": self = .charge
            case "Google fee": self = .googleFee
            case "Tax": self = .tax
            case "Charge refund": self = .chargeRefund
            case "Google fee refund": self = .googleFeeRefund
            case "Tax refund": self = .taxRefund
            default: self = .other(text)
            }
        }

        public var text: String {
            switch self {
            case .charge: "Charge"
            case .googleFee: "Google fee"
            case .tax: "Tax"
            case .chargeRefund: "Charge refund"
            case .googleFeeRefund: "Google fee refund"
            case .taxRefund: "Tax refund"
            case .other(let text): text
            }
        }
    }

    /// One line.
    public struct Row: Sendable, Hashable {
        /// The order id (`GPA.…`; a subscription's renewal `GPA.…..N`), in Google's `Description` column.
        public var orderId: String
        /// `Transaction Date` as `YYYY-MM-DD`.
        public var date: String
        /// `Transaction Time` as written (`4:05:06 AM PDT`).
        public var time: String
        public var type: TransactionType
        /// `Full refund` or `Partial refund` on refund lines.
        public var refundType: String?
        public var productTitle: String
        /// The app's package name (Google's `Product id` column).
        public var packageName: String
        /// `1` a one-time product, `2` a subscription (Google's `Product Type`).
        public var productType: Int?
        /// The in-app product or subscription id (Google's `Sku Id`).
        public var sku: String
        /// ISO 3166-1 alpha-2.
        public var buyerCountry: String
        public var buyerCurrency: String
        /// Milliunits of `buyerCurrency`; negative for fees and refunds.
        public var buyerAmount: Int64
        public var merchantCurrency: String
        /// Milliunits of `merchantCurrency` (rounded to the milliunit when Google's conversion has more digits).
        public var merchantAmount: Int64
        public var basePlanId: String?
        public var offerId: String?
        /// Whether the line fell in the developer's first USD 1 M of the year (Google's 15 % tier).
        public var firstMillionEligible: Bool?

        public init(
            orderId: String,
            date: String,
            time: String = "",
            type: TransactionType,
            refundType: String? = nil,
            productTitle: String = "",
            packageName: String,
            productType: Int? = nil,
            sku: String,
            buyerCountry: String,
            buyerCurrency: String,
            buyerAmount: Int64,
            merchantCurrency: String,
            merchantAmount: Int64,
            basePlanId: String? = nil,
            offerId: String? = nil,
            firstMillionEligible: Bool? = nil
        ) {
            self.orderId = orderId
            self.date = date
            self.time = time
            self.type = type
            self.refundType = refundType
            self.productTitle = productTitle
            self.packageName = packageName
            self.productType = productType
            self.sku = sku
            self.buyerCountry = buyerCountry
            self.buyerCurrency = buyerCurrency
            self.buyerAmount = buyerAmount
            self.merchantCurrency = merchantCurrency
            self.merchantAmount = merchantAmount
            self.basePlanId = basePlanId
            self.offerId = offerId
            self.firstMillionEligible = firstMillionEligible
        }
    }

    /// Why a report could not be read.
    public enum Failure: Error, Hashable, CustomStringConvertible {
        case malformed(String)

        public var description: String {
            switch self {
            case .malformed(let why): "not a readable earnings report: \(why)"
            }
        }
    }

    public var rows: [Row]

    public init(rows: [Row]) { self.rows = rows }

    /// Google's columns, in Google's order.
    public static let columns = [
        "Description", "Transaction Date", "Transaction Time", "Tax Type", "Transaction Type", "Refund Type", "Product Title",
        "Product id", "Product Type", "Sku Id", "Hardware", "Buyer Country", "Buyer State", "Buyer Postal Code", "Buyer Currency",
        "Amount (Buyer Currency)", "Currency Conversion Rate", "Merchant Currency", "Amount (Merchant Currency)", "Base Plan ID",
        "Offer ID", "Group ID", "First USD 1M Eligible", "Promotion ID", "Coupon Value", "Discount Rate", "Featured Products ID",
        "Price Experiment ID",
    ]

    /// The largest amount a line may carry (a billion units): anything larger is not a sale.
    public static let maximumAmount: Int64 = 1_000_000_000_000

    /// Reads a report's CSV.
    public init(csv bytes: [UInt8]) throws(Failure) {
        let records: [[String]]
        do { records = try PlayCSV.records(bytes) } catch { throw .malformed(error.description) }
        guard let header = records.first else { throw .malformed("empty") }
        var index: [String: Int] = [:]
        for (position, name) in header.enumerated() { index[name.trimmingSpaces] = position }
        for required in ["Description", "Transaction Date", "Transaction Type", "Product id", "Sku Id", "Buyer Currency", "Amount (Buyer Currency)"]
        where index[required] == nil {
            throw .malformed("no \(required) column")
        }
        var rows: [Row] = []
        rows.reserveCapacity(records.count - 1)
        for (number, record) in records.dropFirst().enumerated() {
            func field(_ name: String) -> String {
                guard let position = index[name], position < record.count else { return "" }
                return record[position].trimmingSpaces
            }
            func optional(_ name: String) -> String? {
                let value = field(name)
                return value.isEmpty ? nil : value
            }
            let line = number + 2
            guard let date = Self.day(field("Transaction Date")) else {
                throw .malformed("line \(line): Transaction Date \(field("Transaction Date"))")
            }
            guard let buyerAmount = Self.milliunits(field("Amount (Buyer Currency)")) else {
                throw .malformed("line \(line): Amount (Buyer Currency) \(field("Amount (Buyer Currency)"))")
            }
            let merchantText = field("Amount (Merchant Currency)")
            guard let merchantAmount = merchantText.isEmpty ? buyerAmount : Self.milliunits(merchantText) else {
                throw .malformed("line \(line): Amount (Merchant Currency) \(merchantText)")
            }
            let orderId = field("Description")
            guard !orderId.isEmpty, orderId.utf8.count <= 200 else { throw .malformed("line \(line): Description") }
            rows.append(
                Row(
                    orderId: orderId,
                    date: date,
                    time: field("Transaction Time"),
                    type: TransactionType(field("Transaction Type")),
                    refundType: optional("Refund Type"),
                    productTitle: field("Product Title"),
                    packageName: field("Product id"),
                    productType: Int(field("Product Type")),
                    sku: field("Sku Id"),
                    buyerCountry: field("Buyer Country").uppercased(),
                    buyerCurrency: field("Buyer Currency").uppercased(),
                    buyerAmount: buyerAmount,
                    merchantCurrency: (optional("Merchant Currency") ?? field("Buyer Currency")).uppercased(),
                    merchantAmount: merchantAmount,
                    basePlanId: optional("Base Plan ID"),
                    offerId: optional("Offer ID"),
                    firstMillionEligible: optional("First USD 1M Eligible").map { $0.lowercased() == "yes" }
                )
            )
        }
        self.rows = rows
    }

    /// The report as Google writes it (UTF-8, CRLF).
    public func csv() -> [UInt8] {
        var text = PlayCSV.line(Self.columns)
        for row in rows {
            let fields: [String: String] = [
                "Description": row.orderId,
                "Transaction Date": Self.googleDate(row.date),
                "Transaction Time": row.time,
                "Transaction Type": row.type.text,
                "Refund Type": row.refundType ?? "",
                "Product Title": row.productTitle,
                "Product id": row.packageName,
                "Product Type": row.productType.map(String.init) ?? "",
                "Sku Id": row.sku,
                "Buyer Country": row.buyerCountry,
                "Buyer Currency": row.buyerCurrency,
                "Amount (Buyer Currency)": Self.decimal(row.buyerAmount),
                "Currency Conversion Rate": row.buyerCurrency == row.merchantCurrency ? "1.000000" : "",
                "Merchant Currency": row.merchantCurrency,
                "Amount (Merchant Currency)": Self.decimal(row.merchantAmount),
                "Base Plan ID": row.basePlanId ?? "",
                "Offer ID": row.offerId ?? "",
                "First USD 1M Eligible": row.firstMillionEligible.map { $0 ? "Yes" : "No" } ?? "",
            ]
            text += PlayCSV.line(Self.columns.map { fields[$0] ?? "" })
        }
        return Array(text.utf8)
    }

    /// The report's object name in the bucket for `month` (`YYYY-MM`) and a developer account's suffix.
    public static func objectName(month: String, account: String) -> String {
        "earnings/earnings_\(month.replacingOccurrences(of: "-", with: ""))_\(account).zip"
    }

    // MARK: Formats

    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let fullMonthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
    ]

    /// `Nov 3, 2026` (Google's) or `2026-11-03` as `2026-11-03`.
    static func day(_ text: String) -> String? {
        let parts = text.replacingOccurrences(of: ",", with: " ").split(separator: " ")
        var (year, month, day) = (0, 0, 0)
        if parts.count == 3, let index = monthNames.firstIndex(of: String(parts[0])) ?? fullMonthNames.firstIndex(of: String(parts[0])),
            let d = Int(parts[1]), let y = Int(parts[2])
        {
            (year, month, day) = (y, index + 1, d)
        } else {
            let numbers = text.split(separator: "-").compactMap { Int($0) }
            guard numbers.count == 3, text.utf8.count == 10 else { return nil }
            (year, month, day) = (numbers[0], numbers[1], numbers[2])
        }
        guard (2000...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        return "\(year)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
    }

    static func googleDate(_ day: String) -> String {
        let numbers = day.split(separator: "-").compactMap { Int($0) }
        guard numbers.count == 3, (1...12).contains(numbers[1]) else { return day }
        return "\(monthNames[numbers[1] - 1]) \(numbers[2]), \(numbers[0])"
    }

    /// `-1.99` as -1,990 milliunits; more than three decimals are rounded half away from zero; nil when it is not a
    /// plain decimal or exceeds ``maximumAmount``.
    public static func milliunits(_ text: String) -> Int64? {
        var digits = Substring(text.replacingOccurrences(of: ",", with: ""))
        let negative = digits.hasPrefix("-")
        if negative || digits.hasPrefix("+") { digits = digits.dropFirst() }
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty || parts.count == 2, whole.count <= 13,
            whole.allSatisfy(\.isASCIIDigit)
        else { return nil }
        let fraction = parts.count == 2 ? parts[1] : ""
        guard fraction.count <= 12, fraction.allSatisfy(\.isASCIIDigit), !(whole.isEmpty && fraction.isEmpty) else { return nil }
        var value = (Int64(whole) ?? 0) * 1000
        let padded = Array((fraction + "000").prefix(3))
        value += Int64(String(padded))!
        if fraction.count > 3, let next = fraction.dropFirst(3).first, next >= "5" { value += 1 }
        guard value <= maximumAmount else { return nil }
        return negative ? -value : value
    }

    /// Milliunits as Google writes amounts: two decimals, three when a milliunit is left over.
    public static func decimal(_ milliunits: Int64) -> String {
        let sign = milliunits < 0 ? "-" : ""
        let magnitude = milliunits.magnitude
        let whole = magnitude / 1000
        let fraction = magnitude % 1000
        if fraction % 10 == 0 {
            let cents = fraction / 10
            return "\(sign)\(whole).\(cents < 10 ? "0" : "")\(cents)"
        }
        return "\(sign)\(whole).\(fraction < 10 ? "00" : fraction < 100 ? "0" : "")\(fraction)"
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var scalars = Substring(self)
        while scalars.first == " " { scalars = scalars.dropFirst() }
        while scalars.last == " " { scalars = scalars.dropLast() }
        return String(scalars)
    }
}

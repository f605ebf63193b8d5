import Foundation

/// One line of a Subscription Report (Sales and Trends, `reportType=SUBSCRIPTION`, `SUMMARY`, `DAILY`, `1_3`): how
/// many subscriptions to one subscription at one price in one country were active at the end of the report's day, by
/// kind of offer, and how many were in billing retry or grace. The report names no date: it is the requested day's.
/// Subscriptions are named by their App Store Connect name and Apple ID, not by product id.
public struct SubscriptionReportRow: Sendable, Hashable {
    public var appName: String
    public var appAppleId: String?
    /// The subscription's reference name in App Store Connect.
    public var subscriptionName: String
    public var subscriptionAppleId: String
    public var subscriptionGroupId: String?
    /// `7 Days`, `1 Month`, … `1 Year`.
    public var standardDuration: String?
    /// Milliunits of ``customerCurrency``.
    public var customerPrice: Int64
    public var customerCurrency: String
    public var developerProceeds: Int64
    public var proceedsCurrency: String
    public var proceedsReason: String?
    /// ISO 3166-1 alpha-2.
    public var country: String
    /// Paid at the standard price: no free trial, offer or marketing opt-in period.
    public var activeStandardPrice: Int
    public var activeFreeTrialIntroductory: Int
    public var activePayUpFrontIntroductory: Int
    public var activePayAsYouGoIntroductory: Int
    public var freeTrialPromotional: Int
    public var payUpFrontPromotional: Int
    public var payAsYouGoPromotional: Int
    public var freeTrialOfferCode: Int
    public var payUpFrontOfferCode: Int
    public var payAsYouGoOfferCode: Int
    public var marketingOptIns: Int
    public var freeTrialWinBack: Int
    public var payUpFrontWinBack: Int
    public var payAsYouGoWinBack: Int
    public var billingRetry: Int
    public var gracePeriod: Int

    public init(
        appName: String,
        appAppleId: String? = nil,
        subscriptionName: String,
        subscriptionAppleId: String,
        subscriptionGroupId: String? = nil,
        standardDuration: String? = nil,
        customerPrice: Int64,
        customerCurrency: String,
        developerProceeds: Int64,
        proceedsCurrency: String,
        proceedsReason: String? = nil,
        country: String,
        activeStandardPrice: Int = 0,
        activeFreeTrialIntroductory: Int = 0,
        activePayUpFrontIntroductory: Int = 0,
        activePayAsYouGoIntroductory: Int = 0,
        freeTrialPromotional: Int = 0,
        payUpFrontPromotional: Int = 0,
        payAsYouGoPromotional: Int = 0,
        freeTrialOfferCode: Int = 0,
        payUpFrontOfferCode: Int = 0,
        payAsYouGoOfferCode: Int = 0,
        marketingOptIns: Int = 0,
        freeTrialWinBack: Int = 0,
        payUpFrontWinBack: Int = 0,
        payAsYouGoWinBack: Int = 0,
        billingRetry: Int = 0,
        gracePeriod: Int = 0
    ) {
        self.appName = appName
        self.appAppleId = appAppleId
        self.subscriptionName = subscriptionName
        self.subscriptionAppleId = subscriptionAppleId
        self.subscriptionGroupId = subscriptionGroupId
        self.standardDuration = standardDuration
        self.customerPrice = customerPrice
        self.customerCurrency = customerCurrency
        self.developerProceeds = developerProceeds
        self.proceedsCurrency = proceedsCurrency
        self.proceedsReason = proceedsReason
        self.country = country
        self.activeStandardPrice = activeStandardPrice
        self.activeFreeTrialIntroductory = activeFreeTrialIntroductory
        self.activePayUpFrontIntroductory = activePayUpFrontIntroductory
        self.activePayAsYouGoIntroductory = activePayAsYouGoIntroductory
        self.freeTrialPromotional = freeTrialPromotional
        self.payUpFrontPromotional = payUpFrontPromotional
        self.payAsYouGoPromotional = payAsYouGoPromotional
        self.freeTrialOfferCode = freeTrialOfferCode
        self.payUpFrontOfferCode = payUpFrontOfferCode
        self.payAsYouGoOfferCode = payAsYouGoOfferCode
        self.marketingOptIns = marketingOptIns
        self.freeTrialWinBack = freeTrialWinBack
        self.payUpFrontWinBack = payUpFrontWinBack
        self.payAsYouGoWinBack = payAsYouGoWinBack
        self.billingRetry = billingRetry
        self.gracePeriod = gracePeriod
    }

    /// Active in any offer (introductory, promotional, offer code, win-back) or a marketing opt-in period.
    public var activeInOffer: Int {
        [
            activeFreeTrialIntroductory, activePayUpFrontIntroductory, activePayAsYouGoIntroductory, freeTrialPromotional,
            payUpFrontPromotional, payAsYouGoPromotional, freeTrialOfferCode, payUpFrontOfferCode, payAsYouGoOfferCode,
            marketingOptIns, freeTrialWinBack, payUpFrontWinBack, payAsYouGoWinBack,
        ]
        .reduce(0, +)
    }

    /// The columns of version 1_3 in the order Apple's help lists them (readers go by name, regardless of case).
    public static let columns = [
        "App Name", "App Apple ID", "Subscription Name", "Subscription Apple ID", "Subscription Group ID",
        "Standard Subscription Duration", "Subscription Offer Name", "Promotional Offer ID", "Customer Price", "Customer Currency",
        "Developer Proceeds", "Proceeds Currency", "Preserved Pricing", "Proceeds Reason", "Client", "Device", "State", "Country",
        "Active Standard Price Subscriptions", "Active Free Trial Introductory Offer Subscriptions",
        "Active Pay Up Front Introductory Offer Subscriptions", "Active Pay As You Go Introductory Offer Subscriptions",
        "Free Trial Promotional Offer Subscriptions", "Pay Up Front Promotional Offer Subscriptions",
        "Pay As You Go Promotional Offer Subscriptions", "Free Trial Offer Code Subscriptions", "Pay Up Front Offer Code Subscriptions",
        "Pay As You Go Offer Code Subscriptions", "Marketing Opt-Ins", "Billing Retry", "Grace Period", "Subscribers",
        "Free Trial Win-back Offers", "Pay Up Front Win-back Offers", "Pay As You Go Win-back Offers",
    ]

    static let required = [
        "Subscription Name", "Subscription Apple ID", "Customer Price", "Customer Currency", "Developer Proceeds", "Proceeds Currency",
        "Country", "Active Standard Price Subscriptions",
    ]

    /// The most subscriptions one line may count.
    static let maximumCount = 1_000_000_000

    /// Reads every line; throws naming the line and column of a value it cannot read. Count columns a version lacks
    /// read as 0.
    public static func rows(of table: ReportTable) throws -> [SubscriptionReportRow] {
        let at = try table.positions(of: required)
        return try table.rows.enumerated().map { index, row in
            func field(_ column: String) -> String? {
                guard let position = at[column] ?? table.position(of: column) else { return nil }
                let value = row[position].trimmingCharacters(in: .whitespaces)
                return value.isEmpty ? nil : value
            }
            func count(_ column: String) throws -> Int {
                guard let text = field(column) else { return 0 }
                guard let value = Int(text), (0...maximumCount).contains(value) else {
                    throw ReportTable.Failure("row \(index + 1): \(column) \"\(text.prefix(40))\" is not a count")
                }
                return value
            }
            func money(_ column: String) throws -> Int64 {
                guard let value = ReportMoney.milliunits(field(column) ?? "0") else {
                    throw ReportTable.Failure("row \(index + 1): \(column) \"\((field(column) ?? "").prefix(40))\" is not an amount")
                }
                return value
            }
            return SubscriptionReportRow(
                appName: field("App Name") ?? "",
                appAppleId: field("App Apple ID"),
                subscriptionName: field("Subscription Name") ?? "",
                subscriptionAppleId: field("Subscription Apple ID") ?? "",
                subscriptionGroupId: field("Subscription Group ID"),
                standardDuration: field("Standard Subscription Duration"),
                customerPrice: try money("Customer Price"),
                customerCurrency: field("Customer Currency") ?? "",
                developerProceeds: try money("Developer Proceeds"),
                proceedsCurrency: field("Proceeds Currency") ?? "",
                proceedsReason: field("Proceeds Reason"),
                country: field("Country") ?? "",
                activeStandardPrice: try count("Active Standard Price Subscriptions"),
                activeFreeTrialIntroductory: try count("Active Free Trial Introductory Offer Subscriptions"),
                activePayUpFrontIntroductory: try count("Active Pay Up Front Introductory Offer Subscriptions"),
                activePayAsYouGoIntroductory: try count("Active Pay As You Go Introductory Offer Subscriptions"),
                freeTrialPromotional: try count("Free Trial Promotional Offer Subscriptions"),
                payUpFrontPromotional: try count("Pay Up Front Promotional Offer Subscriptions"),
                payAsYouGoPromotional: try count("Pay As You Go Promotional Offer Subscriptions"),
                freeTrialOfferCode: try count("Free Trial Offer Code Subscriptions"),
                payUpFrontOfferCode: try count("Pay Up Front Offer Code Subscriptions"),
                payAsYouGoOfferCode: try count("Pay As You Go Offer Code Subscriptions"),
                marketingOptIns: try count("Marketing Opt-Ins"),
                freeTrialWinBack: try count("Free Trial Win-back Offers"),
                payUpFrontWinBack: try count("Pay Up Front Win-back Offers"),
                payAsYouGoWinBack: try count("Pay As You Go Win-back Offers"),
                billingRetry: try count("Billing Retry"),
                gracePeriod: try count("Grace Period")
            )
        }
    }

    /// The line in the 1_3 layout of ``columns`` (fields Storekeeper does not model left empty; `Subscribers` only
    /// when the line counts more than three, as Apple fills it).
    public var fields: [String] {
        let subscribers = activeStandardPrice + activeInOffer + gracePeriod
        return [
            appName, appAppleId ?? "", subscriptionName, subscriptionAppleId, subscriptionGroupId ?? "", standardDuration ?? "", "", "",
            ReportMoney.text(customerPrice), customerCurrency, ReportMoney.text(developerProceeds), proceedsCurrency, "", proceedsReason ?? "",
            "", "iPhone", "", country, String(activeStandardPrice), String(activeFreeTrialIntroductory), String(activePayUpFrontIntroductory),
            String(activePayAsYouGoIntroductory), String(freeTrialPromotional), String(payUpFrontPromotional), String(payAsYouGoPromotional),
            String(freeTrialOfferCode), String(payUpFrontOfferCode), String(payAsYouGoOfferCode), String(marketingOptIns), String(billingRetry),
            String(gracePeriod), subscribers > 3 ? String(subscribers) : "", String(freeTrialWinBack), String(payUpFrontWinBack),
            String(payAsYouGoWinBack),
        ]
    }
}

import Foundation

/// The decoded app receipt in a `verifyReceipt` response (`receipt`).
///
/// Numeric identifiers accept a JSON number or a quoted number; everything else is kept as sent.
public struct LegacyReceipt: Codable, Hashable, Sendable {
    /// The app's Apple ID (a JSON number in practice; `0` in sandbox).
    public var adamId: Int64?
    /// The app's App Store item identifier (production only; `0` in sandbox).
    public var appItemId: Int64?
    /// `CFBundleVersion` of the app that produced the receipt (`"1.0"` in sandbox).
    public var applicationVersion: String?
    /// The app's bundle identifier (`bid` in iOS 6-style transaction receipts).
    public var bid: String?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// A unique identifier for the app download transaction.
    public var downloadId: Int64?
    /// When a Volume Purchase Program receipt expires, as `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public var expirationDate: String?
    /// When a Volume Purchase Program receipt expires, epoch milliseconds as sent (see ``expirationDateMs``).
    public var rawExpirationDateMs: String?
    /// When a Volume Purchase Program receipt expires, in Pacific time (`America/Los_Angeles`).
    public var expirationDatePst: String?
    /// In-app purchase receipts (unordered; finished consumables drop out of later receipts).
    public var inApp: [LegacyTransaction]?
    /// Version of the app originally purchased (`"1.0"` in sandbox).
    public var originalApplicationVersion: String?
    /// When the app was originally purchased, as `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public var originalPurchaseDate: String?
    /// When the app was originally purchased, epoch milliseconds as sent (see ``originalPurchaseDateMs``).
    public var rawOriginalPurchaseDateMs: String?
    /// When the app was originally purchased, in Pacific time (`America/Los_Angeles`).
    public var originalPurchaseDatePst: String?
    /// When a pre-ordered app was ordered, as `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public var preorderDate: String?
    /// When a pre-ordered app was ordered, epoch milliseconds as sent (see ``preorderDateMs``).
    public var rawPreorderDateMs: String?
    /// When a pre-ordered app was ordered, in Pacific time (`America/Los_Angeles`).
    public var preorderDatePst: String?
    /// When the App Store created the receipt, as `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public var receiptCreationDate: String?
    /// When the App Store created the receipt, epoch milliseconds as sent (see ``receiptCreationDateMs``).
    public var rawReceiptCreationDateMs: String?
    /// When the App Store created the receipt, in Pacific time (`America/Los_Angeles`).
    public var receiptCreationDatePst: String?
    /// `Production`, `ProductionVPP`, `ProductionSandbox` or `ProductionVPPSandbox`.
    public var receiptType: String?
    /// When the verifyReceipt request was processed, as `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public var requestDate: String?
    /// When the verifyReceipt request was processed, epoch milliseconds as sent (see ``requestDateMs``).
    public var rawRequestDateMs: String?
    /// When the verifyReceipt request was processed, in Pacific time (`America/Los_Angeles`).
    public var requestDatePst: String?
    /// Identifier of the app version (`0` in sandbox).
    public var versionExternalIdentifier: Int64?

    enum CodingKeys: String, CodingKey {
        case adamId = "adam_id"
        case appItemId = "app_item_id"
        case applicationVersion = "application_version"
        case bid
        case bundleId = "bundle_id"
        case downloadId = "download_id"
        case expirationDate = "expiration_date"
        case rawExpirationDateMs = "expiration_date_ms"
        case expirationDatePst = "expiration_date_pst"
        case inApp = "in_app"
        case originalApplicationVersion = "original_application_version"
        case originalPurchaseDate = "original_purchase_date"
        case rawOriginalPurchaseDateMs = "original_purchase_date_ms"
        case originalPurchaseDatePst = "original_purchase_date_pst"
        case preorderDate = "preorder_date"
        case rawPreorderDateMs = "preorder_date_ms"
        case preorderDatePst = "preorder_date_pst"
        case receiptCreationDate = "receipt_creation_date"
        case rawReceiptCreationDateMs = "receipt_creation_date_ms"
        case receiptCreationDatePst = "receipt_creation_date_pst"
        case receiptType = "receipt_type"
        case requestDate = "request_date"
        case rawRequestDateMs = "request_date_ms"
        case requestDatePst = "request_date_pst"
        case versionExternalIdentifier = "version_external_identifier"
    }

    public init(
        adamId: Int64? = nil,
        appItemId: Int64? = nil,
        applicationVersion: String? = nil,
        bid: String? = nil,
        bundleId: String? = nil,
        downloadId: Int64? = nil,
        expirationDate: String? = nil,
        rawExpirationDateMs: String? = nil,
        expirationDatePst: String? = nil,
        inApp: [LegacyTransaction]? = nil,
        originalApplicationVersion: String? = nil,
        originalPurchaseDate: String? = nil,
        rawOriginalPurchaseDateMs: String? = nil,
        originalPurchaseDatePst: String? = nil,
        preorderDate: String? = nil,
        rawPreorderDateMs: String? = nil,
        preorderDatePst: String? = nil,
        receiptCreationDate: String? = nil,
        rawReceiptCreationDateMs: String? = nil,
        receiptCreationDatePst: String? = nil,
        receiptType: String? = nil,
        requestDate: String? = nil,
        rawRequestDateMs: String? = nil,
        requestDatePst: String? = nil,
        versionExternalIdentifier: Int64? = nil
    ) {
        self.adamId = adamId
        self.appItemId = appItemId
        self.applicationVersion = applicationVersion
        self.bid = bid
        self.bundleId = bundleId
        self.downloadId = downloadId
        self.expirationDate = expirationDate
        self.rawExpirationDateMs = rawExpirationDateMs
        self.expirationDatePst = expirationDatePst
        self.inApp = inApp
        self.originalApplicationVersion = originalApplicationVersion
        self.originalPurchaseDate = originalPurchaseDate
        self.rawOriginalPurchaseDateMs = rawOriginalPurchaseDateMs
        self.originalPurchaseDatePst = originalPurchaseDatePst
        self.preorderDate = preorderDate
        self.rawPreorderDateMs = rawPreorderDateMs
        self.preorderDatePst = preorderDatePst
        self.receiptCreationDate = receiptCreationDate
        self.rawReceiptCreationDateMs = rawReceiptCreationDateMs
        self.receiptCreationDatePst = receiptCreationDatePst
        self.receiptType = receiptType
        self.requestDate = requestDate
        self.rawRequestDateMs = rawRequestDateMs
        self.requestDatePst = requestDatePst
        self.versionExternalIdentifier = versionExternalIdentifier
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        adamId = try container.decodeLegacyInt64(.adamId)
        appItemId = try container.decodeLegacyInt64(.appItemId)
        applicationVersion = try container.decodeLegacyString(.applicationVersion)
        bid = try container.decodeLegacyString(.bid)
        bundleId = try container.decodeLegacyString(.bundleId)
        downloadId = try container.decodeLegacyInt64(.downloadId)
        expirationDate = try container.decodeLegacyString(.expirationDate)
        rawExpirationDateMs = try container.decodeLegacyString(.rawExpirationDateMs)
        expirationDatePst = try container.decodeLegacyString(.expirationDatePst)
        inApp = try container.decodeIfPresent([LegacyTransaction].self, forKey: .inApp)
        originalApplicationVersion = try container.decodeLegacyString(.originalApplicationVersion)
        originalPurchaseDate = try container.decodeLegacyString(.originalPurchaseDate)
        rawOriginalPurchaseDateMs = try container.decodeLegacyString(.rawOriginalPurchaseDateMs)
        originalPurchaseDatePst = try container.decodeLegacyString(.originalPurchaseDatePst)
        preorderDate = try container.decodeLegacyString(.preorderDate)
        rawPreorderDateMs = try container.decodeLegacyString(.rawPreorderDateMs)
        preorderDatePst = try container.decodeLegacyString(.preorderDatePst)
        receiptCreationDate = try container.decodeLegacyString(.receiptCreationDate)
        rawReceiptCreationDateMs = try container.decodeLegacyString(.rawReceiptCreationDateMs)
        receiptCreationDatePst = try container.decodeLegacyString(.receiptCreationDatePst)
        receiptType = try container.decodeLegacyString(.receiptType)
        requestDate = try container.decodeLegacyString(.requestDate)
        rawRequestDateMs = try container.decodeLegacyString(.rawRequestDateMs)
        requestDatePst = try container.decodeLegacyString(.requestDatePst)
        versionExternalIdentifier = try container.decodeLegacyInt64(.versionExternalIdentifier)
    }

    // MARK: Typed accessors

    /// ``expirationDate`` in epoch milliseconds.
    public var expirationDateMs: Int64? { LegacyValue.int64(rawExpirationDateMs) }
    /// ``originalPurchaseDate`` in epoch milliseconds.
    public var originalPurchaseDateMs: Int64? { LegacyValue.int64(rawOriginalPurchaseDateMs) }
    /// ``preorderDate`` in epoch milliseconds.
    public var preorderDateMs: Int64? { LegacyValue.int64(rawPreorderDateMs) }
    /// ``receiptCreationDate`` in epoch milliseconds.
    public var receiptCreationDateMs: Int64? { LegacyValue.int64(rawReceiptCreationDateMs) }
    /// ``receiptCreationDate`` as a `Date`.
    public var receiptCreationDateValue: Date? { LegacyValue.date(ms: rawReceiptCreationDateMs) }
    /// ``requestDate`` in epoch milliseconds.
    public var requestDateMs: Int64? { LegacyValue.int64(rawRequestDateMs) }
    /// ``requestDate`` as a `Date`.
    public var requestDateValue: Date? { LegacyValue.date(ms: rawRequestDateMs) }
}

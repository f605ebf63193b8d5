import AppStoreWire
import Crypto
import Foundation
import SwiftASN1
import X509
import _CryptoExtras

/// Issues PKCS#7 app receipts (protocol reference §9) for a device, signed the way Apple signs them, from the
/// simulator's signed-transaction payloads.
///
/// The output is DER `ContentInfo`/`SignedData`: the content is the receipt attribute SET, the signature is
/// SHA-256 with RSA (PKCS#1 v1.5) over the content without signed attributes, the SignerInfo names
/// `rsaEncryption` and the leaf, intermediate and root certificates are embedded. A pure value: the same inputs
/// give the same bytes.
public struct AppReceiptBuilder: Sendable {
    /// Signs the receipts.
    public var identity: ReceiptSigningIdentity
    /// 2: the app's bundle identifier.
    public var bundleId: String
    /// 3: the app version (`CFBundleVersion`) the receipt is issued to.
    public var appVersion: String
    /// 19: the app version originally purchased (`"1.0"` in sandbox).
    public var originalApplicationVersion: String
    /// The device the receipt is issued to: the 16 bytes of `identifierForVendor` (see ``deviceIdentifier(_:)``)
    /// or a Mac's primary MAC address; an input of the SHA-1 hash (attribute 5).
    public var deviceIdentifier: [UInt8]
    /// 0: `ProductionSandbox` or `Production` (see ``receiptType(for:)``).
    public var receiptType: String
    /// 12: when the receipt was created; verifiers validate the signing chain at this time.
    public var creationDate: Date
    /// 4: the opaque value; `nil` derives 16 bytes from the other inputs, keeping receipts reproducible (Apple
    /// uses random bytes, which verifiers cannot tell apart).
    public var opaqueValue: [UInt8]?
    /// 1: the app's Apple ID, omitted when `nil` (sandbox receipts carry 0).
    public var appItemId: Int64?
    /// 18: when the customer first got the app, omitted when `nil`.
    public var originalPurchaseDate: Date?

    public init(
        identity: ReceiptSigningIdentity,
        bundleId: String,
        appVersion: String,
        deviceIdentifier: [UInt8],
        receiptType: String,
        creationDate: Date,
        originalApplicationVersion: String = "1.0",
        opaqueValue: [UInt8]? = nil,
        appItemId: Int64? = nil,
        originalPurchaseDate: Date? = nil
    ) {
        self.identity = identity
        self.bundleId = bundleId
        self.appVersion = appVersion
        self.deviceIdentifier = deviceIdentifier
        self.receiptType = receiptType
        self.creationDate = creationDate
        self.originalApplicationVersion = originalApplicationVersion
        self.opaqueValue = opaqueValue
        self.appItemId = appItemId
        self.originalPurchaseDate = originalPurchaseDate
    }

    /// A signed receipt.
    public struct SignedReceipt: Sendable, Hashable {
        /// The DER `ContentInfo`, as an app reads it from `appStoreReceiptURL`.
        public let der: [UInt8]
        /// What the receipt contains, as ``AppReceiptParser`` reads it back (dates in whole seconds). The DER
        /// SET orders in-app entries by their encoding, so the parsed order differs from this one; Apple's
        /// `in_app` is unordered too.
        public let receipt: AppReceipt

        /// The DER in base64, as apps send it as `receipt-data`.
        public var base64: String { Data(der).base64EncodedString() }
    }

    // MARK: Building

    /// Builds and signs a receipt holding one in-app entry per transaction.
    public func build(transactions: [JWSTransactionDecodedPayload]) throws -> SignedReceipt {
        let receipt = try receipt(for: transactions)
        let content = try Self.payload(receipt)
        return SignedReceipt(der: try signedData(content: content), receipt: receipt)
    }

    /// The receipt ``build(transactions:)`` encodes: dates truncated to whole seconds (the receipt format's
    /// precision), the opaque value, bundle id DER and device hash filled in.
    public func receipt(for transactions: [JWSTransactionDecodedPayload]) throws -> AppReceipt {
        var receipt = AppReceipt()
        receipt.receiptType = receiptType
        receipt.appItemId = appItemId
        receipt.bundleId = bundleId
        receipt.bundleIdData = Data(try Self.der(ASN1UTF8String(bundleId)))
        receipt.appVersion = appVersion
        let opaque = opaqueValue ?? derivedOpaqueValue()
        receipt.opaqueValue = Data(opaque)
        receipt.sha1Hash = AppReceipt.deviceHash(
            deviceIdentifier: deviceIdentifier,
            opaqueValue: opaque,
            bundleIdData: receipt.bundleIdData ?? Data()
        )
        receipt.creationDate = Self.wholeSeconds(creationDate)
        receipt.originalApplicationVersion = originalApplicationVersion
        receipt.originalPurchaseDate = originalPurchaseDate.map(Self.wholeSeconds)
        receipt.inAppPurchases = try transactions.map(Self.inAppPurchase(for:))
        return receipt
    }

    /// The in-app entry (attribute 17) for a transaction.
    ///
    /// Cancellation is the revocation date; 1719 is an introductory offer that is not a free trial and 1713 one
    /// that is; 1721 is the offer identifier of a promotional offer; 1707 follows ``productTypeNumber(_:)``.
    /// Dates are truncated to whole seconds.
    public static func inAppPurchase(for transaction: JWSTransactionDecodedPayload) throws -> AppReceiptInAppPurchase {
        var purchase = AppReceiptInAppPurchase()
        purchase.quantity = Int64(transaction.quantity ?? 1)
        purchase.productId = transaction.productId
        purchase.transactionId = transaction.transactionId
        purchase.originalTransactionId = transaction.originalTransactionId
        purchase.purchaseDate = transaction.purchaseDate.map(wholeSeconds)
        purchase.originalPurchaseDate = transaction.originalPurchaseDate.map(wholeSeconds)
        purchase.expiresDate = transaction.expiresDate.map(wholeSeconds)
        if let lineItem = transaction.webOrderLineItemId {
            guard let number = Int64(lineItem) else {
                throw ReceiptIssuanceError.invalidTransaction(
                    "web order line item id \(lineItem) of \(transaction.transactionId ?? "?") is not an integer"
                )
            }
            purchase.webOrderLineItemId = number
        }
        purchase.cancellationDate = transaction.revocationDate.map(wholeSeconds)
        let introductory = transaction.offerType == .introductory
        purchase.isTrialPeriod = introductory && transaction.offerDiscountType == .freeTrial
        purchase.isInIntroOfferPeriod = introductory && transaction.offerDiscountType != .freeTrial
        purchase.promotionalOfferId = transaction.offerType == .promotional ? transaction.offerIdentifier : nil
        purchase.productType = productTypeNumber(transaction.type)
        return purchase
    }

    /// The number of attribute 1707 for a product type. Apple never documented 1707; these are the values
    /// RevenueCat's receipt parser reads: 0 non-consumable, 1 consumable, 2 non-renewing, 3 auto-renewable.
    public static func productTypeNumber(_ type: ProductType?) -> Int64? {
        switch type {
        case .nonConsumable?: 0
        case .consumable?: 1
        case .nonRenewing?: 2
        case .autoRenewable?: 3
        default: nil
        }
    }

    /// The receipt type Apple writes for an environment: `ProductionSandbox` for sandbox, `Production` otherwise.
    public static func receiptType(for environment: AppStoreEnvironment) -> String {
        environment == .sandbox ? "ProductionSandbox" : "Production"
    }

    /// The 16 bytes of an `identifierForVendor`, the device identifier iOS apps hash.
    public static func deviceIdentifier(_ identifierForVendor: UUID) -> [UInt8] {
        withUnsafeBytes(of: identifierForVendor.uuid) { Array($0) }
    }

    // MARK: Payload

    /// `Payload ::= SET OF ReceiptAttribute` for every field of `receipt` that is set.
    static func payload(_ receipt: AppReceipt) throws -> [UInt8] {
        var attributes: [Attribute] = []
        func add(_ type: Int, _ value: [UInt8]?) {
            if let value { attributes.append(Attribute(type: type, value: value)) }
        }
        add(0, try receipt.receiptType.map { try der(ASN1UTF8String($0)) })
        add(1, try receipt.appItemId.map { try der($0) })
        add(2, try receipt.bundleId.map { try der(ASN1UTF8String($0)) })
        add(3, try receipt.appVersion.map { try der(ASN1UTF8String($0)) })
        add(4, receipt.opaqueValue.map { Array($0) })
        add(5, receipt.sha1Hash.map { Array($0) })
        add(12, try receipt.creationDate.map { try date($0) })
        add(18, try receipt.originalPurchaseDate.map { try date($0) })
        add(19, try receipt.originalApplicationVersion.map { try der(ASN1UTF8String($0)) })
        for purchase in receipt.inAppPurchases {
            add(17, try inAppPayload(purchase))
        }
        return try der(SetOf(elements: attributes))
    }

    /// The SET of one in-app entry. Like Apple, it writes an empty IA5String for a missing expiry or
    /// cancellation date and 0 for false flags, so every documented field is present.
    static func inAppPayload(_ purchase: AppReceiptInAppPurchase) throws -> [UInt8] {
        var fields: [Attribute] = []
        func add(_ type: Int, _ value: [UInt8]?) {
            if let value { fields.append(Attribute(type: type, value: value)) }
        }
        add(1701, try purchase.quantity.map { try der($0) })
        add(1702, try purchase.productId.map { try der(ASN1UTF8String($0)) })
        add(1703, try purchase.transactionId.map { try der(ASN1UTF8String($0)) })
        add(1704, try purchase.purchaseDate.map { try date($0) })
        add(1705, try purchase.originalTransactionId.map { try der(ASN1UTF8String($0)) })
        add(1706, try purchase.originalPurchaseDate.map { try date($0) })
        add(1707, try purchase.productType.map { try der($0) })
        add(1708, try date(purchase.expiresDate))
        add(1711, try purchase.webOrderLineItemId.map { try der($0) })
        add(1712, try date(purchase.cancellationDate))
        add(1713, try purchase.isTrialPeriod.map { try der(Int64($0 ? 1 : 0)) })
        add(1719, try purchase.isInIntroOfferPeriod.map { try der(Int64($0 ? 1 : 0)) })
        add(1721, try purchase.promotionalOfferId.map { try der(ASN1UTF8String($0)) })
        return try der(SetOf(elements: fields))
    }

    /// An IA5String RFC 3339 date in whole seconds (`2013-08-01T07:00:00Z`); `nil` is Apple's empty string.
    static func date(_ date: Date?) throws -> [UInt8] {
        try der(ASN1IA5String(date.map { wholeSeconds($0).formatted(Date.ISO8601FormatStyle()) } ?? ""))
    }

    static func wholeSeconds(_ date: Date) -> Date {
        // Round to milliseconds first so a date stored as 1.999999… s is not truncated to 1 s.
        let ms = (date.timeIntervalSince1970 * 1000).rounded()
        return Date(timeIntervalSince1970: (ms / 1000).rounded(.down))
    }

    static func der(_ value: some DERSerializable) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(value)
        return serializer.serializedBytes
    }

    private func derivedOpaqueValue() -> [UInt8] {
        var hash = SHA256()
        hash.update(data: Array("storekeeper-opaque-value".utf8))
        hash.update(data: deviceIdentifier)
        hash.update(data: Array(bundleId.utf8))
        hash.update(data: Array(String(Self.wholeSeconds(creationDate).timeIntervalSince1970).utf8))
        return Array(hash.finalize().prefix(16))
    }

    // MARK: SignedData

    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
    static let sha256OID: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let rsaEncryptionOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]

    /// `ContentInfo { signedData, [0] SignedData }` around `content` (RFC 5652 §5.1).
    ///
    /// swift-certificates' CMS signer names `sha256WithRSAEncryption` in the SignerInfo and is SPI; Apple's
    /// receipts name `rsaEncryption` with the digest alone in `digestAlgorithm`, so the envelope is written here.
    func signedData(content: [UInt8]) throws -> [UInt8] {
        // PKCS#1 v1.5 (not PSS): what `sha256WithRSAEncryption`/`rsaEncryption` signers mean, and deterministic.
        let signature = try identity.leafKey.signature(for: SHA256.hash(data: content), padding: .insecurePKCS1v1_5)
        let leaf = identity.leaf
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { contentInfo in
            try contentInfo.serialize(Self.signedDataOID)
            try contentInfo.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { explicit in
                try explicit.appendConstructedNode(identifier: .sequence) { signedData in
                    try signedData.serialize(1)  // version: issuerAndSerialNumber signers, data content
                    try signedData.appendConstructedNode(identifier: .set) { try Self.algorithm(Self.sha256OID, &$0) }
                    try signedData.appendConstructedNode(identifier: .sequence) { encapsulated in
                        try encapsulated.serialize(Self.dataOID)
                        try encapsulated.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) {
                            try $0.serialize(ASN1OctetString(contentBytes: content[...]))
                        }
                    }
                    // certificates [0] IMPLICIT SET OF: DER sorts the members by encoding.
                    try signedData.serializeSetOf(
                        [leaf, identity.intermediate, identity.root],
                        identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
                    )
                    try signedData.appendConstructedNode(identifier: .set) { signerInfos in
                        try signerInfos.appendConstructedNode(identifier: .sequence) { signer in
                            try signer.serialize(1)  // version 1: issuerAndSerialNumber
                            try signer.appendConstructedNode(identifier: .sequence) { issuerAndSerial in
                                try issuerAndSerial.serialize(leaf.issuer)
                                issuerAndSerial.appendPrimitiveNode(identifier: .integer) {
                                    $0.append(contentsOf: leaf.serialNumber.bytes)
                                }
                            }
                            try Self.algorithm(Self.sha256OID, &signer)
                            try Self.algorithm(Self.rsaEncryptionOID, &signer)
                            try signer.serialize(ASN1OctetString(contentBytes: ArraySlice(signature.rawRepresentation)))
                        }
                    }
                }
            }
        }
        return serializer.serializedBytes
    }

    /// `AlgorithmIdentifier { oid, NULL }`: RSA and SHA-2 identifiers carry explicit NULL parameters.
    private static func algorithm(_ oid: ASN1ObjectIdentifier, _ serializer: inout DER.Serializer) throws {
        try serializer.appendConstructedNode(identifier: .sequence) { algorithm in
            try algorithm.serialize(oid)
            try algorithm.serialize(ASN1Null())
        }
    }

    /// `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
    struct Attribute: DERSerializable {
        var type: Int
        var value: [UInt8]

        func serialize(into coder: inout DER.Serializer) throws {
            try coder.appendConstructedNode(identifier: .sequence) { sequence in
                try sequence.serialize(type)
                try sequence.serialize(1)  // version: undocumented, and no parser interprets it
                try sequence.serialize(ASN1OctetString(contentBytes: value[...]))
            }
        }
    }

    /// A DER `SET OF`, members sorted by encoding as X.690 §11.6 requires.
    struct SetOf<Element: DERSerializable>: DERSerializable {
        var elements: [Element]

        func serialize(into coder: inout DER.Serializer) throws {
            try coder.serializeSetOf(elements)
        }
    }
}

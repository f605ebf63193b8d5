import Foundation
import SwiftASN1

/// Decodes PKCS#7 app receipts (BER or DER) into ``AppReceipt`` without checking the signature.
///
/// Untrusted input never crashes the parser or makes it allocate without bound: the size is capped up
/// front, swift-asn1 rejects truncated data, impossible lengths and nesting deeper than 50 levels, and every
/// failure is reported as an ``AppReceiptError``. Use ``AppReceiptSignatureVerifier`` to check who signed it.
public struct AppReceiptParser: Sendable {
    /// The default limit on a receipt's decoded size: 1 MiB, far above real receipts (a few KiB to ~100 KiB
    /// for accounts with thousands of purchases).
    public static let defaultMaximumSize = 1 << 20

    /// The largest receipt, in decoded bytes, the parser accepts.
    public var maximumSize: Int

    public init(maximumSize: Int = AppReceiptParser.defaultMaximumSize) {
        self.maximumSize = maximumSize
    }

    /// Parses a base64-encoded receipt, as apps send it; line breaks and spaces are ignored.
    public func parse(base64Encoded text: String) throws(AppReceiptError) -> AppReceipt {
        try parse(decodeBase64(text))
    }

    /// Parses the raw bytes of a receipt.
    public func parse(_ bytes: some DataProtocol) throws(AppReceiptError) -> AppReceipt {
        try checkSize(bytes.count)  // before copying the input
        return try parseSignedReceipt(Array(bytes)).receipt
    }

    func checkSize(_ size: Int) throws(AppReceiptError) {
        guard size <= maximumSize else {
            throw .tooLarge(size: size, limit: maximumSize)
        }
    }

    /// Decodes base64 receipt text, enforcing ``maximumSize`` before and after decoding.
    func decodeBase64(_ text: String) throws(AppReceiptError) -> [UInt8] {
        // Base64 grows data by 4/3 and line breaks add a little more: twice the limit bounds the text cheaply
        // before anything is allocated for it.
        let textLimit = maximumSize.multipliedReportingOverflow(by: 2)
        guard textLimit.overflow || text.utf8.count <= textLimit.partialValue else {
            throw .tooLarge(size: text.utf8.count, limit: maximumSize)
        }
        let compact = text.utf8.filter { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
        guard let data = Data(base64Encoded: Data(compact)) else {
            throw .invalidBase64
        }
        try checkSize(data.count)
        return Array(data)
    }

    /// Parses the container and the payload, returning both for signature verification.
    func parseSignedReceipt(
        _ bytes: [UInt8]
    ) throws(AppReceiptError) -> (
        signedData: PKCS7SignedData, receipt: AppReceipt
    ) {
        try checkSize(bytes.count)
        let signedData: PKCS7SignedData
        let attributes: [ReceiptAttribute]
        do {
            signedData = try PKCS7SignedData(contentInfo: try BER.parse(bytes))
            guard signedData.contentType == PKCS7SignedData.dataOID else {
                throw AppReceiptError.wrongContentType(
                    "encapsulated content is \(signedData.contentType), expected data \(PKCS7SignedData.dataOID)"
                )
            }
            guard let content = signedData.content else {
                throw AppReceiptError.malformed(reason: "SignedData has no encapsulated content (detached signature)")
            }
            var payload = try BER.parse(content)
            if payload.identifier == .octetString {
                // Some StoreKit Testing (Xcode) receipts wrap the payload SET in one more OCTET STRING. (Segmented,
                // constructed OCTET STRINGs, as in Apple's Xcode test receipts, were already flattened above.)
                payload = try BER.parse(try ASN1OctetString(berEncoded: payload).bytes)
            }
            attributes = try ReceiptAttribute.attributes(in: payload)
        } catch let error as AppReceiptError {
            throw error
        } catch {
            throw .malformed(reason: String(describing: error))
        }
        return (signedData, try Self.receipt(from: attributes))
    }

    private static func receipt(from attributes: [ReceiptAttribute]) throws(AppReceiptError) -> AppReceipt {
        var receipt = AppReceipt()
        for attribute in attributes {
            switch attribute.type {
            case 0: receipt.receiptType = try? attribute.string()
            case 1: receipt.appItemId = try? attribute.integer()
            case 2:
                receipt.bundleId = try attribute.string()
                receipt.bundleIdData = Data(attribute.value)
            case 3: receipt.appVersion = try attribute.string()
            case 4: receipt.opaqueValue = Data(attribute.value)
            case 5: receipt.sha1Hash = Data(attribute.value)
            case 12: receipt.creationDate = try attribute.date()
            case 15: receipt.downloadId = try? attribute.integer()
            case 16: receipt.versionExternalIdentifier = try? attribute.integer()
            case 17: receipt.inAppPurchases.append(try inAppPurchase(from: attribute))
            case 18: receipt.originalPurchaseDate = (try? attribute.date()) ?? nil
            case 19: receipt.originalApplicationVersion = try attribute.string()
            case 21: receipt.expirationDate = try attribute.date()
            default: continue  // Apple adds private attributes; they carry nothing we interpret.
            }
        }
        return receipt
    }

    private static func inAppPurchase(
        from attribute: ReceiptAttribute
    ) throws(AppReceiptError)
        -> AppReceiptInAppPurchase
    {
        let fields: [ReceiptAttribute]
        do {
            fields = try ReceiptAttribute.attributes(in: try BER.parse(attribute.value))
        } catch {
            throw .invalidAttribute(type: attribute.type, reason: String(describing: error))
        }
        var purchase = AppReceiptInAppPurchase()
        for field in fields {
            switch field.type {
            case 1701: purchase.quantity = try field.integer()
            case 1702: purchase.productId = try field.string()
            case 1703: purchase.transactionId = try field.string()
            case 1704: purchase.purchaseDate = try field.date()
            case 1705: purchase.originalTransactionId = try field.string()
            case 1706: purchase.originalPurchaseDate = try field.date()
            case 1707: purchase.productType = try? field.integer()
            case 1708: purchase.expiresDate = try field.date()
            case 1711: purchase.webOrderLineItemId = try field.integer()
            case 1712: purchase.cancellationDate = try field.date()
            case 1713: purchase.isTrialPeriod = try? field.bool()
            case 1719: purchase.isInIntroOfferPeriod = try field.bool()
            case 1721: purchase.promotionalOfferId = try? field.string()
            default: continue
            }
        }
        return purchase
    }
}

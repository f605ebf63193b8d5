import AppStoreWire
import Foundation
import SwiftASN1
import Testing

/// Apple's StoreKit Testing receipts (BER, indefinite lengths) from the shared reference folder.
private enum XcodeReceiptFiles {
    static var isAvailable: Bool { TestVectors.available }

    static func text(_ name: String) throws -> String {
        try TestVectors.string("xcode/\(name)")
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try #require(Data(base64Encoded: text(name), options: .ignoreUnknownCharacters)))
    }
}

@Suite struct AppReceiptParserTests {
    let parser = AppReceiptParser()

    static func date(_ text: String) -> Date {
        try! Date.ISO8601FormatStyle().parse(text)
    }

    // MARK: Apple's Xcode receipts (BER, indefinite lengths)

    @Test(.enabled(if: XcodeReceiptFiles.isAvailable))
    func xcodeReceiptWithoutPurchases() throws {
        let receipt = try parser.parse(base64Encoded: XcodeReceiptFiles.text("xcode-app-receipt-empty"))
        #expect(receipt.inAppPurchases.isEmpty)
        #expect(receipt.receiptType == "Xcode")
        #expect(receipt.environment == .xcode)
        #expect(receipt.bundleId == "com.example.naturelab.backyardbirds.example")
        #expect(receipt.bundleIdData == Data([0x0C, 0x2B] + Array("com.example.naturelab.backyardbirds.example".utf8)))
        #expect(receipt.appVersion == "1")
        #expect(receipt.appItemId == 0)
        #expect(receipt.opaqueValue?.count == 8)
        #expect(receipt.sha1Hash?.count == 20)
        #expect(receipt.creationDate == Self.date("2023-10-19T01:18:54Z"))
        #expect(receipt.expirationDate == Self.date("4001-01-01T00:00:00Z"))
        #expect(receipt.originalApplicationVersion == nil)
    }

    @Test(.enabled(if: XcodeReceiptFiles.isAvailable))
    func xcodeReceiptWithOnePurchase() throws {
        let receipt = try parser.parse(XcodeReceiptFiles.bytes("xcode-app-receipt-with-transaction"))
        #expect(receipt.bundleId == "com.example.naturelab.backyardbirds.example")
        #expect(receipt.appVersion == "1")
        #expect(receipt.creationDate == Self.date("2023-10-19T01:45:40Z"))
        #expect(receipt.inAppPurchases.count == 1)
        let purchase = try #require(receipt.inAppPurchases.first)
        #expect(purchase.transactionId == "0")
        #expect(purchase.productId == "pass.premium")
        #expect(purchase.quantity == 1)
        #expect(purchase.purchaseDate == Self.date("2023-10-19T01:45:36Z"))
        #expect(purchase.expiresDate == Self.date("2023-11-19T01:45:36Z"))
        #expect(purchase.isInIntroOfferPeriod == true)
        #expect(purchase.originalTransactionId == nil)
        #expect(purchase.cancellationDate == nil)
    }

    @Test(.enabled(if: XcodeReceiptFiles.isAvailable))
    func base64WithLineBreaksIsAccepted() throws {
        let text = try XcodeReceiptFiles.text("xcode-app-receipt-with-transaction")
        let wrapped = stride(from: 0, to: text.count, by: 76).map { offset in
            String(text.dropFirst(offset).prefix(76))
        }.joined(separator: "\r\n")
        #expect(try parser.parse(base64Encoded: wrapped) == parser.parse(base64Encoded: text))
    }

    @Test(.enabled(if: XcodeReceiptFiles.isAvailable))
    func everyTruncationOfAnXcodeReceiptThrows() throws {
        let bytes = try XcodeReceiptFiles.bytes("xcode-app-receipt-with-transaction")
        try expectEveryTruncationThrows(bytes)
    }

    @Test(.enabled(if: XcodeReceiptFiles.isAvailable))
    func randomCorruptionOfAnXcodeReceiptNeverCrashes() throws {
        let bytes = try XcodeReceiptFiles.bytes("xcode-app-receipt-with-transaction")
        var generator = ReceiptFuzzRandom(seed: 0x5EED)
        for _ in 0..<3000 {
            var corrupted = bytes
            for _ in 0...Int.random(in: 0...3, using: &generator) {
                let index = Int.random(in: 0..<corrupted.count, using: &generator)
                corrupted[index] = UInt8.random(in: 0...255, using: &generator)
            }
            // Either outcome is fine; what matters is no trap (typed throws guarantee only AppReceiptError).
            _ = try? parser.parse(corrupted)
        }
    }

    // MARK: Receipts built here

    static func sampleReceipt() -> AppReceipt {
        var receipt = AppReceipt()
        receipt.receiptType = "ProductionSandbox"
        receipt.appItemId = 1_234_567_890
        receipt.bundleId = "com.example.storekeeper"
        receipt.bundleIdData = Data([0x0C, 0x17] + Array("com.example.storekeeper".utf8))
        receipt.appVersion = "42.1"
        receipt.opaqueValue = Data([
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10,
        ])
        receipt.sha1Hash = Data(repeating: 0xAB, count: 20)
        receipt.creationDate = date("2024-05-06T07:08:09Z")
        receipt.downloadId = 98_765_432_101
        receipt.versionExternalIdentifier = 834_567_890
        receipt.originalPurchaseDate = date("2013-08-01T07:00:00Z")
        receipt.originalApplicationVersion = "1.0"
        receipt.expirationDate = date("2025-01-01T00:00:00Z")

        var subscription = AppReceiptInAppPurchase()
        subscription.quantity = 1
        subscription.productId = "com.example.monthly"
        subscription.transactionId = "2000000123456789"
        subscription.originalTransactionId = "2000000000000001"
        subscription.purchaseDate = date("2024-04-06T07:08:09Z")
        subscription.originalPurchaseDate = date("2023-01-06T07:08:09Z")
        subscription.expiresDate = date("2024-05-06T07:08:09Z")
        subscription.webOrderLineItemId = 2_000_000_045_678_901
        subscription.cancellationDate = date("2024-04-20T10:00:00Z")
        subscription.isInIntroOfferPeriod = false
        subscription.productType = 6
        subscription.isTrialPeriod = true
        subscription.promotionalOfferId = "WINBACK_50"

        var consumable = AppReceiptInAppPurchase()
        consumable.quantity = 5
        consumable.productId = "com.example.coins"
        consumable.transactionId = "2000000999999999"
        consumable.originalTransactionId = "2000000999999999"
        consumable.purchaseDate = date("2024-02-29T23:59:59Z")
        consumable.originalPurchaseDate = date("2024-02-29T23:59:59Z")
        consumable.productType = 1
        consumable.isInIntroOfferPeriod = false
        consumable.isTrialPeriod = false

        var renewal = subscription
        renewal.transactionId = "2000000123459999"
        renewal.purchaseDate = date("2024-05-06T07:08:09Z")
        renewal.expiresDate = date("2024-06-06T07:08:09Z")
        renewal.webOrderLineItemId = 2_000_000_045_679_000
        renewal.cancellationDate = nil
        renewal.isTrialPeriod = false
        renewal.isInIntroOfferPeriod = true
        renewal.promotionalOfferId = "ÜNICODE-offer-✓"

        receipt.inAppPurchases = [subscription, consumable, renewal]
        return receipt
    }

    static func sampleReceiptBytes(wrapPayloadTwice: Bool = false) throws -> [UInt8] {
        var payload = try ReceiptTestBuilder.payload(ReceiptTestBuilder.attributes(for: sampleReceipt()))
        if wrapPayloadTwice {
            var serializer = DER.Serializer()
            try serializer.serialize(ASN1OctetString(contentBytes: payload[...]))
            payload = serializer.serializedBytes
        }
        return try ReceiptTestBuilder.signedData(content: payload)
    }

    @Test func builtReceiptDecodesEveryField() throws {
        let receipt = try parser.parse(Self.sampleReceiptBytes())
        #expect(receipt == Self.sampleReceipt())
        #expect(receipt.environment == .sandbox)
        #expect(
            receipt.inAppPurchases.map(\.transactionId) == ["2000000123456789", "2000000999999999", "2000000123459999"]
        )
    }

    @Test func payloadWrappedInAnExtraOctetStringDecodes() throws {
        #expect(try parser.parse(Self.sampleReceiptBytes(wrapPayloadTwice: true)) == Self.sampleReceipt())
    }

    @Test func base64AndRawBytesAgree() throws {
        let bytes = try Self.sampleReceiptBytes()
        #expect(try parser.parse(base64Encoded: Data(bytes).base64EncodedString()) == parser.parse(Data(bytes)))
    }

    @Test func deviceHashMatchesOnlyTheRightDevice() throws {
        let device = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        var receipt = Self.sampleReceipt()
        let deviceBytes = withUnsafeBytes(of: device.uuid) { Array($0) }
        receipt.sha1Hash = AppReceipt.deviceHash(
            deviceIdentifier: deviceBytes,
            opaqueValue: receipt.opaqueValue!,
            bundleIdData: receipt.bundleIdData!
        )
        let parsed = try parser.parse(
            ReceiptTestBuilder.signedData(
                content: ReceiptTestBuilder.payload(ReceiptTestBuilder.attributes(for: receipt))
            )
        )
        #expect(parsed.isValidDeviceHash(identifierForVendor: device))
        #expect(parsed.isValidDeviceHash(deviceIdentifier: deviceBytes))
        #expect(!parsed.isValidDeviceHash(identifierForVendor: UUID()))
        #expect(!AppReceipt().isValidDeviceHash(identifierForVendor: device))
    }

    @Test(.enabled(if: XcodeReceiptFiles.isAvailable))
    func xcodeDeviceHashIsNotForAnArbitraryDevice() throws {
        let receipt = try parser.parse(base64Encoded: XcodeReceiptFiles.text("xcode-app-receipt-with-transaction"))
        #expect(!receipt.isValidDeviceHash(identifierForVendor: UUID()))
    }

    @Test func mistypedDocumentedAttributeIsAnError() throws {
        let bytes = try ReceiptTestBuilder.signedData(
            content: ReceiptTestBuilder.payload([(type: 2, value: .integer(7))])
        )
        let error = #expect(throws: AppReceiptError.self) { try parser.parse(bytes) }
        guard case .invalidAttribute(let type, _)? = error else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(type == 2)
    }

    @Test func badDatesAndBadInAppSetsAreErrors() throws {
        for attributes: [(type: Int, value: ReceiptTestBuilder.Value)] in [
            [(type: 12, value: .ia5("yesterday"))],
            [(type: 17, value: .raw([0x31, 0x05, 0x02]))],
            [(type: 17, value: .set([(type: 1704, value: .utf8("2024-13-45T99:00:00Z"))]))],
            [(type: 17, value: .set([(type: 1701, value: .raw([0x02, 0x09, 0x7F, 1, 2, 3, 4, 5, 6, 7, 8]))]))],
        ] {
            let bytes = try ReceiptTestBuilder.signedData(content: ReceiptTestBuilder.payload(attributes))
            #expect(throws: AppReceiptError.self) { try parser.parse(bytes) }
        }
    }

    @Test func mistypedUndocumentedAttributesAreIgnored() throws {
        let bytes = try ReceiptTestBuilder.signedData(
            content: ReceiptTestBuilder.payload([
                (type: 0, value: .integer(1)),
                (type: 1, value: .utf8("not a number")),
                (type: 2, value: .utf8("com.example")),
                (type: 17, value: .set([(type: 1707, value: .utf8("x")), (type: 1721, value: .integer(3))])),
            ])
        )
        let receipt = try parser.parse(bytes)
        #expect(receipt.receiptType == nil)
        #expect(receipt.appItemId == nil)
        #expect(receipt.bundleId == "com.example")
        #expect(receipt.inAppPurchases == [AppReceiptInAppPurchase()])
    }

    // MARK: Hostile input

    @Test func everyTruncationOfABuiltReceiptThrows() throws {
        try expectEveryTruncationThrows(Self.sampleReceiptBytes())
    }

    @Test func deepNestingThrows() throws {
        // 10,000 nested indefinite-length SEQUENCEs, then the same with definite lengths.
        let indefinite =
            Array(repeating: [UInt8]([0x30, 0x80]), count: 10_000).flatMap { $0 }
            + Array(repeating: 0, count: 20_000)
        #expect(throws: AppReceiptError.self) { try parser.parse(indefinite) }
        #expect(throws: AppReceiptError.self) { try parser.parse(Self.nestedDefinite(depth: 10_000)) }

        // The same depth hidden inside the payload and inside an in-app purchase set.
        let deepPayload = try ReceiptTestBuilder.signedData(content: Self.nestedDefinite(depth: 10_000))
        #expect(throws: AppReceiptError.self) { try parser.parse(deepPayload) }
        let deepInApp = try ReceiptTestBuilder.signedData(
            content: ReceiptTestBuilder.payload([(type: 17, value: .raw(Self.nestedDefinite(depth: 10_000)))])
        )
        #expect(throws: AppReceiptError.self) { try parser.parse(deepInApp) }
    }

    /// `depth` SEQUENCEs around a NULL, with minimal definite lengths.
    static func nestedDefinite(depth: Int) -> [UInt8] {
        var headers: [[UInt8]] = []
        var size = 2
        for _ in 0..<depth {
            let header = [0x30] + derLength(size)
            headers.append(header)
            size += header.count
        }
        return headers.reversed().flatMap { $0 } + [0x05, 0x00]
    }

    static func derLength(_ length: Int) -> [UInt8] {
        if length < 0x80 { return [UInt8(length)] }
        let bytes = withUnsafeBytes(of: UInt64(length).bigEndian) { Array($0.drop { $0 == 0 }) }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    @Test func hugeDeclaredLengthsThrow() throws {
        let valid = try Self.sampleReceiptBytes()
        let cases: [[UInt8]] = [
            [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF] + valid,  // 4 GiB SEQUENCE
            [0x30, 0x88, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + valid,  // Int64.max
            [0x30, 0x89, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + valid,  // longer than any integer
            [0x30, 0xFF] + Array(repeating: 0xFF, count: 127),  // 127 length octets
            [0x04, 0x84, 0x7F, 0xFF, 0xFF, 0xFF],  // a primitive claiming 2 GiB with no bytes behind it
        ]
        for bytes in cases {
            #expect(throws: AppReceiptError.self) { try parser.parse(bytes) }
        }
        // Inside the payload: an attribute whose OCTET STRING claims 2 GiB.
        let payload: [UInt8] = [
            0x31, 0x0C, 0x30, 0x0A, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01, 0x04, 0x84, 0x7F, 0xFF, 0xFF, 0xFF,
        ]
        #expect(throws: AppReceiptError.self) { try parser.parse(ReceiptTestBuilder.signedData(content: payload)) }
    }

    @Test func wrongContentTypesThrow() throws {
        let payload = try ReceiptTestBuilder.payload([(type: 2, value: .utf8("com.example"))])
        let envelopedData: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 3]
        let outer = try ReceiptTestBuilder.signedData(content: payload, outerType: envelopedData)
        let inner = try ReceiptTestBuilder.signedData(content: payload, contentType: envelopedData)
        for bytes in [outer, inner] {
            let error = #expect(throws: AppReceiptError.self) { try parser.parse(bytes) }
            guard case .wrongContentType? = error else {
                Issue.record("unexpected error \(String(describing: error))")
                continue
            }
        }
        // A detached signature has no receipt in it; a certificate is not a receipt at all.
        #expect(throws: AppReceiptError.self) { try parser.parse(ReceiptTestBuilder.signedData(content: nil)) }
        #expect(throws: AppReceiptError.self) {
            try parser.parse(ReceiptTestBuilder.der(ReceiptTestPKI.make(rsa: false).leaf))
        }
        #expect(throws: AppReceiptError.self) { try parser.parse([UInt8]()) }
        #expect(throws: AppReceiptError.self) { try parser.parse(Array("not a receipt".utf8)) }
    }

    @Test func oversizedInputThrowsBeforeParsing() throws {
        let bytes = try Self.sampleReceiptBytes()
        #expect(throws: AppReceiptError.tooLarge(size: bytes.count, limit: 100)) {
            try AppReceiptParser(maximumSize: 100).parse(bytes)
        }
        let huge = [UInt8](repeating: 0x30, count: AppReceiptParser.defaultMaximumSize + 1)
        #expect(throws: AppReceiptError.tooLarge(size: huge.count, limit: AppReceiptParser.defaultMaximumSize)) {
            try parser.parse(huge)
        }
        let hugeText = String(repeating: "A", count: 3 * AppReceiptParser.defaultMaximumSize)
        #expect(throws: AppReceiptError.self) { try parser.parse(base64Encoded: hugeText) }
        #expect(throws: AppReceiptError.invalidBase64) { try parser.parse(base64Encoded: "%%% not base64 %%%") }
    }

    @Test func errorsExplainThemselves() {
        let error = AppReceiptError.invalidAttribute(type: 2, reason: "expected UTF8String")
        #expect(error.description.contains("attribute 2"))
        #expect(AppReceiptError.tooLarge(size: 5, limit: 4).description.contains("limit 4"))
    }

    private func expectEveryTruncationThrows(_ bytes: [UInt8]) throws {
        #expect(throws: Never.self) { try parser.parse(bytes) }
        var parsedPrefixes: [Int] = []
        for length in 0..<bytes.count {
            do {
                _ = try parser.parse(bytes[..<length])
                parsedPrefixes.append(length)
            } catch {
                // Expected: AppReceiptError is the only error type parse can throw.
            }
        }
        #expect(parsedPrefixes.isEmpty, "prefixes that parsed: \(parsedPrefixes)")
    }
}

/// A small seeded generator so the corruption test is reproducible.
private struct ReceiptFuzzRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

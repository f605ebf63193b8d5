import AppStoreWire
import Foundation
import Testing

@Suite struct TransactionReceiptTests {
    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    static let purchaseInfo = """
        {
        \t"original-purchase-date-pst" = "2012-04-30 08:05:55 America/Los_Angeles";
        \t"original-transaction-id" = "1000000046178817";
        \t"bvrs" = "20120427";
        \t"transaction-id" = "1000000046178818";
        \t"quantity" = "2";
        \t"original-purchase-date-ms" = "1335798355868";
        \t"product-id" = "com.example.coins";
        \t"item-id" = "521129812";
        \t"bid" = "com.example.app";
        \t"purchase-date-ms" = "1335798355869";
        \t"purchase-date" = "2012-04-30 15:05:55 Etc/GMT";
        \t"note" = "a \\"quoted\\" word; and = signs";
        }
        """

    @Test(.enabled(if: TestVectors.available))
    func appleVectorYieldsItsTransactionId() throws {
        let text = try TestVectors.string("mock_signed_data/legacyTransaction")
        let receipt = try TransactionReceipt(base64Encoded: text)
        #expect(receipt.transactionId == "33993399")
        #expect(receipt.purchaseInfo == ["transaction-id": "33993399"])
    }

    @Test func everyKeyIsDecoded() throws {
        let outer = """
            {
            \t"signature" = "AkFzZGY=";
            \t"purchase-info" = "\(Self.base64(Self.purchaseInfo))";
            \t"environment" = "Sandbox";
            \t"pod" = "100";
            \t"signing-status" = "0";
            }
            """
        let receipt = try TransactionReceipt(base64Encoded: Self.base64(outer))
        #expect(receipt.transactionId == "1000000046178818")
        #expect(receipt.originalTransactionId == "1000000046178817")
        #expect(receipt.productId == "com.example.coins")
        #expect(receipt.bundleId == "com.example.app")
        #expect(receipt.quantity == 2)
        #expect(receipt.purchaseDate == Date(timeIntervalSince1970: 1_335_798_355.869))
        #expect(receipt.originalPurchaseDate == Date(timeIntervalSince1970: 1_335_798_355.868))
        #expect(receipt.environment == "Sandbox")
        #expect(receipt.purchaseInfo["note"] == "a \"quoted\" word; and = signs")
        #expect(receipt.purchaseInfo["bvrs"] == "20120427")
        #expect(receipt.properties["pod"] == "100")
        #expect(receipt.purchaseInfo.count == 12)
    }

    @Test func bareTokensAndMissingEnvironmentAreAccepted() throws {
        let info = Self.base64("{transaction-id = 42; quantity = 1;}")
        let receipt = try TransactionReceipt(base64Encoded: Self.base64("{ \"purchase-info\" = \"\(info)\"; }"))
        #expect(receipt.transactionId == "42")
        #expect(receipt.environment == nil)
    }

    @Test func malformedReceiptsAreErrors() throws {
        let goodInfo = Self.base64(#"{ "transaction-id" = "1"; }"#)
        let cases: [(String, TransactionReceiptError)] = [
            ("%%%", .invalidBase64),
            (Self.base64(#"{ "purchase-info" = "%%%"; }"#), .invalidBase64),
            (Self.base64(#"{ "signature" = "x"; }"#), .missingField("purchase-info")),
            (
                Self.base64(#"{ "purchase-info" = "\#(Self.base64(#"{ "product-id" = "p"; }"#))"; }"#),
                .missingField("transaction-id")
            ),
        ]
        for (text, expected) in cases {
            #expect(throws: expected) { try TransactionReceipt(base64Encoded: text) }
        }
        for broken in [
            "", "{", #"{ "purchase-info" = "\#(goodInfo)" }"#, #"{ "purchase-info" "\#(goodInfo)"; }"#,
            #"{ "purchase-info" = "\#(goodInfo)"; } trailing"#, #"{ "unterminated = "x"; }"#, #"{ "a" = ( "b" ); }"#,
        ] {
            let error = #expect(throws: TransactionReceiptError.self) {
                try TransactionReceipt(base64Encoded: Self.base64(broken))
            }
            guard case .malformed? = error else {
                Issue.record("expected malformed for \(broken), got \(String(describing: error))")
                continue
            }
        }
        let huge = String(repeating: "A", count: TransactionReceipt.defaultMaximumSize + 4)
        #expect(
            throws: TransactionReceiptError.tooLarge(
                size: huge.utf8.count,
                limit: TransactionReceipt.defaultMaximumSize
            )
        ) {
            try TransactionReceipt(base64Encoded: huge)
        }
    }
}

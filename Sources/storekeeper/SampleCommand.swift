import AppStoreTestSigning
import AppStoreWire
import ArgumentParser
import Foundation

/// `storekeeper sample`: write a throwaway Apple-shaped signing chain's root and data signed by it.
struct SampleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample",
        abstract: "Write sample signed data (a transaction and a notification), the root that verifies it, and the sample catalogs.",
        discussion: """
            The chain is generated afresh and its private keys are discarded, so the files are only good for \
            trying `storekeeper verify --root DIR/sample-root.pem DIR/sample-transaction.jws`. The catalogs \
            (storekeeper-catalog.json, simulator-catalog.json) are the ones `storekeeper demo` sells.
            """
    )

    @Option(help: "Directory to write into (created if missing).")
    var output = "Samples"

    func run() async throws {
        let chain = try AppStoreSigningChain.generate(.init(name: "Storekeeper Sample"))
        let signer = try chain.signer()
        let signedDate = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
        let transaction = JWSTransactionDecodedPayload(
            transactionId: "2000000123456789",
            originalTransactionId: "2000000123456789",
            webOrderLineItemId: "2000000012345678",
            bundleId: "com.example.storekeeper",
            productId: "com.example.storekeeper.vip.monthly",
            subscriptionGroupIdentifier: "21000001",
            purchaseDate: signedDate,
            originalPurchaseDate: signedDate,
            expiresDate: signedDate.addingTimeInterval(31 * 86_400),
            quantity: 1,
            type: .autoRenewable,
            appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138",
            inAppOwnershipType: .purchased,
            signedDate: signedDate,
            environment: .sandbox,
            storefront: "USA",
            storefrontId: "143441",
            transactionReason: .purchase,
            price: 9990,
            currency: "USD"
        )
        let signedTransaction = try signer.sign(transaction)
        let notification = ResponseBodyV2DecodedPayload(
            notificationType: .subscribed,
            subtype: .initialBuy,
            notificationUUID: "0b2d5fc3-6f3c-4c36-9f55-7f3b8f6f2f10",
            version: "2.0",
            signedDate: signedDate,
            data: NotificationData(
                bundleId: "com.example.storekeeper",
                bundleVersion: "1",
                environment: .sandbox,
                signedTransactionInfo: signedTransaction,
                status: .active
            )
        )
        let directory = URL(fileURLWithPath: output, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try chain.rootPEM().write(to: directory.appendingPathComponent("sample-root.pem"), atomically: true, encoding: .utf8)
        try (signedTransaction + "\n").write(
            to: directory.appendingPathComponent("sample-transaction.jws"),
            atomically: true,
            encoding: .utf8
        )
        try (try signer.sign(notification) + "\n").write(
            to: directory.appendingPathComponent("sample-notification.jws"),
            atomically: true,
            encoding: .utf8
        )
        try SampleCatalogs.storekeeper.appending("\n").write(
            to: directory.appendingPathComponent("storekeeper-catalog.json"),
            atomically: true,
            encoding: .utf8
        )
        try SampleCatalogs.simulator.appending("\n").write(
            to: directory.appendingPathComponent("simulator-catalog.json"),
            atomically: true,
            encoding: .utf8
        )
        print(
            "wrote sample-root.pem, sample-transaction.jws, sample-notification.jws, storekeeper-catalog.json and "
                + "simulator-catalog.json to \(directory.path)"
        )
    }
}

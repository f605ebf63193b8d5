import AppStoreWire
import ArgumentParser
import Foundation

/// `storekeeper sign-offer`: sign subscription offers with an In-App Purchase key, for operators.
struct SignOfferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-offer",
        abstract: "Sign a subscription offer (v1 signature, v2 JWS, or introductory-offer eligibility JWS).",
        subcommands: [V1.self, V2.self, IntroEligibility.self]
    )

    /// Options every signature needs.
    struct KeyOptions: ParsableArguments {
        @Option(help: "The In-App Purchase key (.p8, PKCS#8 PEM).")
        var key: String

        @Option(name: .customLong("key-id"), help: "The key's identifier in App Store Connect.")
        var keyId: String

        @Option(name: .customLong("bundle-id"), help: "The app's bundle id.")
        var bundleId: String

        @Option(name: .customLong("product-id"), help: "The subscription's product id.")
        var productId: String

        func pem() throws -> String {
            guard let data = FileManager.default.contents(atPath: key), let pem = String(data: data, encoding: .utf8) else {
                throw ValidationError("cannot read key file \(key)")
            }
            return pem
        }
    }

    /// The v1 signature (SKPaymentDiscount / StoreKit 2 promotional offer): prints keyIdentifier, nonce, timestamp
    /// and signature as JSON.
    struct V1: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "v1", abstract: "Promotional offer signature v1.")

        @OptionGroup var keyOptions: KeyOptions

        @Option(name: .customLong("offer-id"), help: "The promotional offer identifier.")
        var offerId: String

        @Option(name: .customLong("app-account-token"), help: "The appAccountToken / applicationUsername (may be empty).")
        var appAccountToken = ""

        func run() async throws {
            let signer = try PromotionalOfferV1Signer(
                p8PEM: try keyOptions.pem(),
                keyIdentifier: keyOptions.keyId,
                bundleId: keyOptions.bundleId
            )
            let signature = try signer.sign(
                productId: keyOptions.productId,
                offerId: offerId,
                appAccountToken: appAccountToken
            )
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(signature), as: UTF8.self))
        }
    }

    /// The promotional offer v2 JWS.
    struct V2: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "v2", abstract: "Promotional offer JWS (v2).")

        @OptionGroup var keyOptions: KeyOptions

        @Option(name: .customLong("issuer-id"), help: "The issuer id from App Store Connect.")
        var issuerId: String

        @Option(name: .customLong("offer-id"), help: "The promotional offer identifier.")
        var offerId: String

        @Option(name: .customLong("transaction-id"), help: "Any of the customer's transaction ids (optional).")
        var transactionId: String?

        func run() async throws {
            let signer = try AppStoreRequestSigner(
                p8PEM: try keyOptions.pem(),
                keyIdentifier: keyOptions.keyId,
                issuerId: issuerId,
                bundleId: keyOptions.bundleId
            )
            print(
                try signer.promotionalOfferV2(
                    productId: keyOptions.productId,
                    offerIdentifier: offerId,
                    transactionId: transactionId
                )
            )
        }
    }

    /// The introductory-offer eligibility JWS.
    struct IntroEligibility: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "intro-eligibility",
            abstract: "Introductory offer eligibility JWS."
        )

        @OptionGroup var keyOptions: KeyOptions

        @Option(name: .customLong("issuer-id"), help: "The issuer id from App Store Connect.")
        var issuerId: String

        @Option(name: .customLong("transaction-id"), help: "One of the customer's transaction ids.")
        var transactionId: String

        @Flag(help: "Deny the introductory offer instead of allowing it.")
        var disallow = false

        func run() async throws {
            let signer = try AppStoreRequestSigner(
                p8PEM: try keyOptions.pem(),
                keyIdentifier: keyOptions.keyId,
                issuerId: issuerId,
                bundleId: keyOptions.bundleId
            )
            print(
                try signer.introductoryOfferEligibility(
                    productId: keyOptions.productId,
                    allowIntroductoryOffer: !disallow,
                    transactionId: transactionId
                )
            )
        }
    }
}

#if os(Linux)
// Plays an iPhone through the StoreKit stand-in against a real `storekeeper demo`: Linux only.
import Crypto
import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import StorekeeperAPI
import Testing

@testable import StorekeeperKit

#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif

extension OnTheDevice {
    /// Restore on a new device, a guest who buys then signs in, a wallet spend whose answer was lost (charged once),
    /// promotional offers and introductory-offer eligibility, against a real demo.
    @Suite struct AccountTests {
        static let coins = "com.example.storekeeper.coins.60"
        static let chapter = "com.example.storekeeper.chapter.2"

        /// An HS256 user token from the demo's secret, as the app's backend would issue it.
        static func userToken(_ demo: DemoServer, subject: String) throws -> String {
            let data = try Data(contentsOf: demo.state.appendingPathComponent("demo-secrets.json"))
            let secret = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["hs256Secret"] as? String)
            func encode(_ bytes: some Sequence<UInt8>) -> String {
                Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
            }
            let header = encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
            let claims = encode(Array(#"{"sub":"\#(subject)","exp":\#(Int(Date().timeIntervalSince1970) + 3600)}"#.utf8))
            let mac = HMAC<SHA256>.authenticationCode(for: Array("\(header).\(claims)".utf8), using: SymmetricKey(data: Data(secret.utf8)))
            return "\(header).\(claims).\(encode(mac))"
        }

        @Test func aRestoreOnANewDeviceDeliversWhatTheServerNeverGot() async throws {
            try await DemoServer.run { demo in
                let (credentials, _, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                // An old app version bought without an order and finished at once: the server never heard of it
                // (Apple's notification names no user it knows).
                let product = try #require(try await Product.products(for: [Self.chapter]).first)
                guard case .success(let result) = try await product.purchase() else {
                    Issue.record("not charged")
                    return
                }
                await result.unsafePayloadValue.finish()

                // A new phone, the same App Store account and user.
                let newPhone = storage.appendingPathComponent("new-phone")
                let account = try #require(SimulatedDevice.signedInAccount)
                try SimulatedDevice.configure(simulatorURL: demo.simulatorURL, account: account, storage: newPhone)
                let storekeeper = try Storekeeper(
                    serverURL: demo.serverURL,
                    journalURL: newPhone.appendingPathComponent("journal.json"),
                    answers: try demo.answers()
                ) { credentials }
                #expect(try await !storekeeper.customerInfo().isEntitled(to: "chapter.2"))
                let restored = try await storekeeper.restore()
                #expect(restored.isEntitled(to: "chapter.2"))
                #expect(restored.verified)
            }
        }

        @Test func aGuestWhoBuysThenLogsInKeepsWhatTheyBought() async throws {
            try await DemoServer.run { demo in
                let (_, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let guestFile = storage.appendingPathComponent("guest-credential")
                let session = UserSession(serverURL: demo.serverURL, store: FileGuestStore(url: guestFile))
                let storekeeper = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers()) {
                    try? await session.credentials()
                }
                #expect(try await storekeeper.purchase(Self.coins) == .delivered)
                let asGuest = try await storekeeper.customerInfo()
                #expect(asGuest.isGuest && asGuest.wallet["coins"] == 60)
                let attributes = try FileManager.default.attributesOfItem(atPath: guestFile.path)
                #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "the guest credential is owner-only")

                let merged = try await session.logIn(userToken: try Self.userToken(demo, subject: "alice"))
                #expect(merged?.coins == 60)
                #expect(!FileManager.default.fileExists(atPath: guestFile.path), "the guest is forgotten once merged")
                let asAlice = try await storekeeper.customerInfo()
                #expect(asAlice.userId == "alice" && !asAlice.isGuest)
                #expect(asAlice.wallet["coins"] == 60)
                // Signing in again merges nothing more.
                #expect(try await session.logIn(userToken: try Self.userToken(demo, subject: "alice")) == nil)
            }
        }

        /// Loses the answer of the first wallet spend (the server charged; the app never heard).
        final class LoseFirstSpendAnswer: ClientMiddleware, @unchecked Sendable {
            let lock = NSLock()
            var lost = 0
            func intercept(
                _ request: HTTPRequest,
                body: HTTPBody?,
                baseURL: URL,
                operationID: String,
                next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
            ) async throws -> (HTTPResponse, HTTPBody?) {
                let answer = try await next(request, body, baseURL)
                let lose =
                    operationID == "spendCoins"
                    && lock.withLock { () -> Bool in
                        lost += 1
                        return lost == 1
                    }
                if lose { throw URLError(.networkConnectionLost) }
                return answer
            }
        }

        @Test func aSpendWhoseAnswerWasLostIsChargedOnceAfterTheNextLaunch() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let api = Client(
                    serverURL: demo.serverURL,
                    transport: URLSessionTransport(),
                    middlewares: [CredentialsMiddleware(credentials: { credentials }), LoseFirstSpendAnswer()]
                )
                let storekeeper = Storekeeper(api: api, journal: try PurchaseJournal(url: journal))
                #expect(try await storekeeper.purchase(Self.coins) == .delivered)
                guard case .later = try await storekeeper.spend(25, reason: "a sword") else {
                    Issue.record("the lost answer must keep the spend")
                    return
                }
                #expect(try await storekeeper.customerInfo().wallet["coins"] == 35, "the server charged the first attempt")

                // The app dies; the next launch sends the journaled spend again, with the same key.
                let relaunched = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers()) { credentials }
                let settled = try await relaunched.resume(now: Date().addingTimeInterval(3600))
                #expect(settled.values.map { $0 } == [.delivered(alreadyDelivered: false)])
                #expect(try await relaunched.customerInfo().wallet["coins"] == 35, "charged once")
                #expect(try await PurchaseJournal(url: journal).all().isEmpty)
                #expect(try await relaunched.spend(1000) == .refused(code: "insufficient_funds"))
                #expect(try await relaunched.customerInfo().wallet["coins"] == 35)
            }
        }

        /// Guests until one draws each variant of the win-back campaign (50/50 by user): the one offered, and the
        /// control.
        static func guestsByVariant(_ demo: DemoServer) async throws -> (offered: Credentials, control: Credentials) {
            var offered: Credentials?
            var control: Credentials?
            for _ in 0..<40 where offered == nil || control == nil {
                let guest = Credentials.guest(try await demo.api().createGuest().created.body.json.token)
                let request = Components.Schemas.OfferSignatureRequest(productId: "com.example.storekeeper.membership.monthly", offerId: "winback-50")
                switch try await demo.api(guest).signOffer(body: .json(request)) {
                case .ok: offered = offered ?? guest
                default: control = control ?? guest
                }
            }
            return (try #require(offered), try #require(control))
        }

        @Test(arguments: [Components.Schemas.OfferSignatureRequest.VersionPayload.v1, .v2])
        func anOfferIsSignedForItsVariantAndAppliedByTheAppStore(version: Components.Schemas.OfferSignatureRequest.VersionPayload) async throws {
            try await DemoServer.run { demo in
                let (_, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let (offered, control) = try await Self.guestsByVariant(demo)
                let monthly = "com.example.storekeeper.membership.monthly"
                let storekeeper = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers()) { offered }
                await storekeeper.setOfferSignatureVersion(version)
                #expect(try await storekeeper.introductoryOfferEligibility()["21000001"] == true)
                // Promotional offers are for current or lapsed subscribers of the group; the standard monthly plan is a
                // crossgrade away (same level and period), which takes effect at once.
                #expect(try await storekeeper.purchase("com.example.storekeeper.membership.monthly.standard") == .delivered)
                // Apple's rule: the introductory offer is gone once one was taken in the group, not by subscribing.
                #expect(try await storekeeper.introductoryOfferEligibility()["21000001"] == true)

                #expect(try await storekeeper.purchase(monthly, offer: "winback-50") == .delivered)
                let info = try await storekeeper.customerInfo()
                let transaction = try #require(info.user.transactions.first { $0.productId == monthly })
                #expect(transaction.offerId == "winback-50", "the App Store applied the offer the server signed")
                #expect(info.isEntitled(to: "membership"))

                // The control variant is not offered it: refused before the purchase sheet, nothing bought.
                let other = try Storekeeper(
                    serverURL: demo.serverURL,
                    journalURL: storage.appendingPathComponent("control.json"),
                    answers: try demo.answers()
                ) { control }
                await #expect { try await other.purchase(monthly, offer: "winback-50") } throws: {
                    ($0 as? StorekeeperError)?.code == .offerRefused && ($0 as? StorekeeperError)?.serverCode == "offer_not_granted"
                }
                #expect(try await other.customerInfo().user.transactions.isEmpty)
            }
        }
    }
}

extension Storekeeper {
    func setOfferSignatureVersion(_ version: Components.Schemas.OfferSignatureRequest.VersionPayload) {
        offerSignatureVersion = version
    }
}
#endif

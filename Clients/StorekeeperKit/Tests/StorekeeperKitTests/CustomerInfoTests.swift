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
    /// Customer info against a real demo whose answers are signed: believed when the signature, nonce, request and body
    /// all match the pinned key; refused — and nothing cached or streamed — when a proxy between the SDK and the server
    /// changes the body, replays an older answer, strips the signature, swaps the app's credentials for another
    /// account's, or the app pinned another key.
    @Suite struct CustomerInfoTests {
        static let coins = "com.example.storekeeper.coins.60"

        /// What a man in the middle does to the answers of `GET /v1/me`.
        enum Attack: String, CaseIterable, Sendable {
            case rewriteBody, replayOlderAnswer, stripSignature, swapCredentials
        }

        /// Sits between the SDK's checks and the network, like a proxy on the device.
        final class Proxy: ClientMiddleware, @unchecked Sendable {
            let lock = NSLock()
            var attack: Attack?
            var recorded: (HTTPResponse, [UInt8])?
            /// Another account's guest credential, sent instead of the app's for `swapCredentials`.
            var otherGuest: String?

            func intercept(
                _ request: HTTPRequest,
                body: HTTPBody?,
                baseURL: URL,
                operationID: String,
                next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
            ) async throws -> (HTTPResponse, HTTPBody?) {
                var request = request
                if operationID == "getMe", let other = lock.withLock({ self.attack == .swapCredentials ? self.otherGuest : nil }) {
                    request.headerFields[HTTPField.Name("X-Storekeeper-Guest")!] = other
                }
                let (response, answer) = try await next(request, body, baseURL)
                guard operationID == "getMe" else { return (response, answer) }
                let bytes = try await [UInt8](collecting: answer ?? HTTPBody(), upTo: 1 << 20)
                let (attack, older) = lock.withLock { () -> (Attack?, (HTTPResponse, [UInt8])?) in
                    defer { if recorded == nil { recorded = (response, bytes) } }
                    return (self.attack, recorded)
                }
                switch attack {
                case nil, .swapCredentials:
                    return (response, HTTPBody(bytes))
                case .rewriteBody:
                    let text = String(decoding: bytes, as: UTF8.self)
                    let forged = text.replacingOccurrences(
                        of: #""entitlements":[]"#,
                        with: #""entitlements":[{"entitlement":"premium","active":true,"sandbox":false,"sources":[]}]"#
                    )
                    .replacingOccurrences(of: #""coins":60"#, with: #""coins":999999"#)
                    #expect(forged != text, "the forgery changes something")
                    return (response, HTTPBody(Array(forged.utf8)))
                case .replayOlderAnswer:
                    let (oldResponse, oldBytes) = try #require(older)
                    return (oldResponse, HTTPBody(oldBytes))
                case .stripSignature:
                    var stripped = response
                    stripped.headerFields[HTTPField.Name("Storekeeper-Signature")!] = nil
                    return (stripped, HTTPBody(bytes))
                }
            }
        }

        static func storekeeper(_ demo: DemoServer, credentials: Credentials, proxy: Proxy, answers: AnswerVerifier) throws -> Storekeeper {
            let api = Client(
                serverURL: demo.serverURL,
                transport: URLSessionTransport(),
                middlewares: [CredentialsMiddleware(credentials: { credentials }), SignedAnswersMiddleware(verifier: answers), proxy]
            )
            let journal = FileManager.default.temporaryDirectory.appendingPathComponent("sk-kit-info-\(UUID().uuidString).json")
            return Storekeeper(api: api, journal: try PurchaseJournal(url: journal), answers: answers)
        }

        @Test func aSignedAnswerIsBelievedCachedAndStreamed() async throws {
            try await DemoServer.run { demo in
                let (credentials, _, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let storekeeper = try Self.storekeeper(demo, credentials: credentials, proxy: Proxy(), answers: try demo.answers())
                let updates = await storekeeper.customerInfoUpdates()
                var iterator = updates.makeAsyncIterator()

                let before = try await storekeeper.customerInfo()
                #expect(before.verified && before.isGuest && before.wallet["coins", default: 0] == 0)
                #expect(await iterator.next()?.wallet["coins", default: 0] == 0)
                // Asked again with nothing changed: no new element (the next one below is the purchase's).
                _ = try await storekeeper.customerInfo()
                #expect(try await storekeeper.purchase(Self.coins) == .delivered)
                // Refreshed after the purchase, without the app asking.
                let streamed = await iterator.next()
                #expect(streamed?.wallet["coins"] == 60, "the change is streamed")
                let after = try await storekeeper.customerInfo()
                #expect(after.wallet["coins"] == 60)
                #expect(await storekeeper.cachedCustomerInfo == after)
            }
        }

        @Test(arguments: Attack.allCases)
        func aTamperedAnswerIsRefused(attack: Attack) async throws {
            try await DemoServer.run { demo in
                let (credentials, _, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let proxy = Proxy()
                let storekeeper = try Self.storekeeper(demo, credentials: credentials, proxy: proxy, answers: try demo.answers())
                #expect(try await storekeeper.purchase(Self.coins) == .delivered)
                let genuine = try await storekeeper.customerInfo()
                #expect(genuine.wallet["coins"] == 60)

                // Another account, answered and signed by the server in its own right.
                let other = try await demo.api().createGuest().created.body.json.token
                proxy.lock.withLock {
                    proxy.attack = attack
                    proxy.otherGuest = other
                }
                if attack == .replayOlderAnswer {
                    // The recorded answer is the first one; make the server's current answer differ from it.
                    _ = try await demo.api(credentials).spendCoins(body: .json(.init(amount: 10, idempotencyKey: UUID().uuidString)))
                }
                await #expect { try await storekeeper.customerInfo() } throws: { ($0 as? StorekeeperError)?.code == .untrusted }
                #expect(await storekeeper.cachedCustomerInfo == genuine, "a refused answer changes nothing")
            }
        }

        @Test func anAnswerSignedByAnotherKeyIsRefused() async throws {
            try await DemoServer.run { demo in
                let (credentials, _, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let other = try AnswerVerifier(publicKeyPEM: P256.Signing.PrivateKey().publicKey.pemRepresentation)
                let storekeeper = try Self.storekeeper(demo, credentials: credentials, proxy: Proxy(), answers: other)
                await #expect { try await storekeeper.customerInfo() } throws: { ($0 as? StorekeeperError)?.code == .untrusted }
                #expect(await storekeeper.cachedCustomerInfo == nil)
            }
        }
    }
}
#endif

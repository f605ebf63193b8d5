import AppStoreSimulator
import AppStoreWire
import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import StorekeeperTestSupport
import Synchronization
import Testing

/// Notifications posted to a real webhook over loopback, retried on Apple's schedule, with faults.
@Suite struct NotificationDeliveryTests {
    typealias H = SimulatorHarness

    /// A webhook target that records what it receives and answers with queued statuses (200 once they run out).
    final class Target: Sendable {
        let received = Mutex<[String]>([])
        let bodies = Mutex<[Data]>([])
        let statuses = Mutex<[HTTPResponse.Status]>([])
        let delay = Mutex<Duration>(.zero)

        func application() -> some ApplicationProtocol {
            let router = Router()
            router.post("apple") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                let data = Data(body.readableBytesView)
                let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
                self.received.withLock { $0.append(object?["signedPayload"] as? String ?? "") }
                self.bodies.withLock { $0.append(data) }
                let pause = self.delay.withLock { $0 }
                if pause > .zero { try await Task.sleep(for: pause) }
                let status = self.statuses.withLock { $0.isEmpty ? .ok : $0.removeFirst() }
                return Response(status: status)
            }
            return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        }
    }

    func withTarget(
        format: NotificationDeliveryService.Format = .v2,
        timeout: TimeAmount = .seconds(5),
        _ body: @Sendable @escaping (Target, NotificationDeliveryService, H) async throws -> Void
    ) async throws {
        let target = Target()
        let h = try await H()
        await h.store.setDeliversNotifications(true)
        try await target.application().test(.live) { client in
            let port = try #require(client.port)
            let service = NotificationDeliveryService(
                store: h.store,
                url: "http://127.0.0.1:\(port)/apple",
                httpClient: HTTPClient.shared,
                format: format,
                timeout: timeout
            )
            try await body(target, service, h)
        }
    }

    // MARK: Tests

    @Test func deliversSignedPayloadsThatVerify() async throws {
        try await withTarget { target, service, h in
            let account = try await h.store.createAccount()
            _ = try await h.store.purchase(productId: H.monthly, account: account.id)
            try await h.store.advance(by: 8 * H.day)
            #expect(await service.deliverDue() == 2)
            let received = target.received.withLock { $0 }
            #expect(received.count == 2)
            for signed in received { _ = try await h.verifier.verifyNotification(signed) }
            let sent = await h.store.sentNotifications()
            #expect(await h.store.sendAttempts(notificationUUID: sent[0].notificationUUID).map(\.sendAttemptResult) == [.success])
            #expect(await service.deliverDue() == 0)  // nothing is sent twice
        }
    }

    @Test func failuresAreRetriedOnApplesScheduleAndShowInHistory() async throws {
        try await withTarget { target, service, h in
            target.statuses.withLock { $0 = [.internalServerError, .serviceUnavailable] }
            let account = try await h.store.createAccount()
            _ = try await h.store.purchase(productId: "com.example.storekeeper.coins.60", account: account.id)
            #expect(await service.deliverDue() == 1)  // fails (500)
            try await h.store.advance(by: 3_599)
            #expect(await service.deliverDue() == 0)  // the first retry is an hour later
            try await h.store.advance(by: 1)
            #expect(await service.deliverDue() == 1)  // fails (503)
            try await h.store.advance(by: 12 * 3_600)
            #expect(await service.deliverDue() == 1)  // delivered
            let uuid = try #require(await h.store.sentNotifications().first?.notificationUUID)
            let attempts = await h.store.sendAttempts(notificationUUID: uuid)
            #expect(attempts.map(\.sendAttemptResult) == [.unsuccessfulHTTPResponseCode, .unsuccessfulHTTPResponseCode, .success])
            let start = await h.store.currentDate - 30 * H.day
            let history = try await h.store.notificationHistory(
                .init(startDate: start, endDate: await h.store.currentDate + 1)
            )
            #expect(history.first?.sendAttempts?.count == 3)
            #expect(
                try await h.store.notificationHistory(.init(startDate: start, endDate: await h.store.currentDate + 1, onlyFailures: true)).isEmpty
            )
        }
    }

    @Test func droppedNotificationsAreOnlyInHistoryAndDuplicatesArriveTwice() async throws {
        try await withTarget { target, service, h in
            let account = try await h.store.createAccount()
            await h.store.setDeliveryFaults(.init(dropNext: 1))
            _ = try await h.store.purchase(productId: "com.example.storekeeper.coins.60", account: account.id)
            #expect(await service.deliverDue() == 0)
            try await h.store.advance(by: 10 * H.day)
            #expect(await service.deliverDue() == 0)  // never retried
            #expect(target.received.withLock { $0.isEmpty })
            let now = await h.store.currentDate
            let failures = try await h.store.notificationHistory(.init(startDate: now - 20 * H.day, endDate: now, onlyFailures: true))
            #expect(failures.count == 1)

            await h.store.setDeliveryFaults(.init(duplicate: true, outOfOrder: true))
            _ = try await h.store.purchase(productId: "com.example.storekeeper.coins.300", account: account.id)
            _ = try await h.store.purchase(productId: "com.example.storekeeper.chapter.2", account: account.id)
            #expect(await service.deliverDue() == 4)
            let received = target.received.withLock { $0 }
            let order = try await received.asyncMap { try await h.verifier.verifyNotification($0).notificationUUID ?? "" }
            let sent = await h.store.sentNotifications().map(\.notificationUUID)
            #expect(order == [sent[2], sent[2], sent[1], sent[1]])
        }
    }

    @Test func aSlowTargetTimesOutAndIsRetried() async throws {
        // Generous margins: a loaded machine must not turn the prompt answer into a timeout too.
        try await withTarget(timeout: .seconds(3)) { target, service, h in
            target.delay.withLock { $0 = .seconds(8) }
            let account = try await h.store.createAccount()
            _ = try await h.store.purchase(productId: "com.example.storekeeper.coins.60", account: account.id)
            #expect(await service.deliverDue() == 1)
            let uuid = try #require(await h.store.sentNotifications().first?.notificationUUID)
            #expect(await h.store.sendAttempts(notificationUUID: uuid).map(\.sendAttemptResult) == [.timedOut])
            target.delay.withLock { $0 = .zero }
            try await h.store.advance(by: 3_600)
            #expect(await service.deliverDue() == 1)
            #expect(await h.store.sendAttempts(notificationUUID: uuid).last?.sendAttemptResult == .success)
        }
    }

    @Test func v1BodiesCarryTheUnifiedReceiptAndTheSharedSecret() async throws {
        let identity = try ReceiptSigningIdentity.generate()
        let composer = V1NotificationComposer(identity: identity, sharedSecret: "v1-secret")
        try await withTarget(format: .v1(composer)) { target, service, h in
            let account = try await h.store.createAccount()
            _ = try await h.store.purchase(productId: "com.example.storekeeper.coins.60", account: account.id)
            _ = try await h.store.purchase(productId: H.monthly, account: account.id)
            try await h.store.advance(by: 8 * H.day)
            // ONE_TIME_CHARGE has no V1 form; INITIAL_BUY and DID_RENEW do.
            #expect(await service.deliverDue() == 2)
            let bodies = target.bodies.withLock { $0 }
            #expect(bodies.count == 2)
            let first = try JSONDecoder().decode(ResponseBodyV1.self, from: bodies[0])
            #expect(first.notificationType == .initialBuy)
            #expect(first.isAuthentic(sharedSecret: "v1-secret"))
            #expect(first.bid == "com.example.storekeeper")
            let latest = try #require(first.unifiedReceipt?.latestReceipt)
            let receipt = try await AppReceiptSignatureVerifier(trustedRoots: [identity.root], bundleId: "com.example.storekeeper")
                .verify(base64Encoded: latest)
            #expect(receipt.inAppPurchases.contains { $0.productId == H.monthly })
            let second = try JSONDecoder().decode(ResponseBodyV1.self, from: bodies[1])
            #expect(second.notificationType == .didRenew)
            #expect(second.unifiedReceipt?.latestReceiptInfo?.first?.productId == H.monthly)
            let skipped = try #require(await h.store.sentNotifications().first?.notificationUUID)
            #expect(await h.store.sendAttempts(notificationUUID: skipped).isEmpty)
        }
    }

    @Test func anUnreachableTargetIsRecordedAndRetried() async throws {
        let h = try await H()
        await h.store.setDeliversNotifications(true)
        let closed = try ReservedClosedPort()
        let service = NotificationDeliveryService(
            store: h.store,
            url: "http://127.0.0.1:\(closed.port)/apple",
            httpClient: HTTPClient.shared,
            timeout: .seconds(2)
        )
        let account = try await h.store.createAccount()
        _ = try await h.store.purchase(productId: "com.example.storekeeper.coins.60", account: account.id)
        #expect(await service.deliverDue() == 1)
        let uuid = try #require(await h.store.sentNotifications().first?.notificationUUID)
        let attempt = try #require(await h.store.sendAttempts(notificationUUID: uuid).first)
        #expect(attempt.sendAttemptResult != .success)
        try await h.store.advance(by: 3_600)
        #expect(await service.deliverDue() == 1)
        withExtendedLifetime(closed) {}
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}

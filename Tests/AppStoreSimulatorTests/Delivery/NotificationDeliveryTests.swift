import AppStoreSimulator
import AppStoreWire
import AsyncHTTPClient
import Foundation
import Hummingbird
import StorekeeperTestSupport
import HummingbirdTesting
import Synchronization
import Testing

/// Notifications posted to a real webhook over loopback, retried on Apple's schedule, with faults.
@Suite struct NotificationDeliveryTests {
    typealias H = SimulatorHarness

    /// A webhook target that records what it receives and answers with queued statuses (200 once they run out).
    final class Target: Sendable {
        let received = Mutex<[String]>([])
        let statuses = Mutex<[HTTPResponse.Status]>([])

        func application() -> some ApplicationProtocol {
            let router = Router()
            router.post("apple") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: String]
                self.received.withLock { $0.append(object?["signedPayload"] ?? "") }
                let status = self.statuses.withLock { $0.isEmpty ? .ok : $0.removeFirst() }
                return Response(status: status)
            }
            return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        }
    }

    func withTarget(
        _ body: @Sendable @escaping (Target, NotificationDeliveryService, H) async throws -> Void
    ) async throws {
        let target = Target()
        let h = try await H()
        await h.store.setDeliversNotifications(true)
        try await target.application().test(.live) { client in
            let port = try #require(client.port)
            let service = NotificationDeliveryService(
                store: h.store, url: "http://127.0.0.1:\(port)/apple", httpClient: HTTPClient.shared, timeout: .seconds(5))
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
                .init(startDate: start, endDate: await h.store.currentDate + 1))
            #expect(history.first?.sendAttempts?.count == 3)
            #expect(try await h.store.notificationHistory(.init(startDate: start, endDate: await h.store.currentDate + 1, onlyFailures: true)).isEmpty)
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

    @Test func anUnreachableTargetIsRecordedAndRetried() async throws {
        let h = try await H()
        await h.store.setDeliversNotifications(true)
        let closed = try ReservedClosedPort()
        let service = NotificationDeliveryService(
            store: h.store, url: "http://127.0.0.1:\(closed.port)/apple", httpClient: HTTPClient.shared, timeout: .seconds(2))
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

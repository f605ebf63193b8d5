import AppStoreWire
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// Posts the simulator's notifications to the developer's URL as Apple does (`{"signedPayload": …}`), records
/// each attempt's outcome, and leaves retries to Apple's schedule on the simulator's clock.
public struct NotificationDeliveryService: Service {
    /// What the app's notification URL is set to receive.
    public enum Format: Sendable {
        /// App Store Server Notifications V2: `{"signedPayload": …}`.
        case v2
        /// V1 JSON bodies (types without a V1 form are not sent).
        case v1(V1NotificationComposer)
    }

    public let store: SimulatedAppStore
    public let url: String
    public let httpClient: HTTPClient
    public var format: Format
    /// How often (real time) to look for due sends.
    public var pollInterval: Duration
    /// How long one send may take before it counts as `TIMED_OUT`.
    public var timeout: TimeAmount
    let logger: Logger

    public init(
        store: SimulatedAppStore,
        url: String,
        httpClient: HTTPClient,
        format: Format = .v2,
        pollInterval: Duration = .milliseconds(100),
        timeout: TimeAmount = .seconds(5),
        logger: Logger = Logger(label: "storekeeper.simulator.delivery")
    ) {
        self.store = store
        self.url = url
        self.httpClient = httpClient
        self.format = format
        self.pollInterval = pollInterval
        self.timeout = timeout
        self.logger = logger
    }

    public func run() async throws {
        await store.setDeliversNotifications(true)
        // Shutdown cancels the loop; that is how the service is asked to stop, not a failure of the group.
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    await deliverDue()
                    try await Task.sleep(for: pollInterval)
                }
            }
        } catch is CancellationError {}
    }

    /// One pass: sends everything due now and records the outcomes. Returns how many sends were made.
    @discardableResult
    public func deliverDue() async -> Int {
        let due = await store.takeDueDeliveries()
        var sent = 0
        for delivery in due {
            let body: Data
            switch format {
            case .v2:
                body = (try? JSONSerialization.data(withJSONObject: ["signedPayload": delivery.signedPayload])) ?? Data()
            case .v1(let composer):
                guard let notification = await store.notification(uuid: delivery.notificationUUID),
                    let v1 = try? await composer.body(for: notification, store: store)
                else {
                    // V1 had no such message: Apple sends nothing.
                    await store.skipDelivery(notificationUUID: delivery.notificationUUID)
                    continue
                }
                body = v1
            }
            let result = await send(body)
            sent += 1
            logger.debug(
                "notification sent",
                metadata: ["storekeeper.notification.uuid": "\(delivery.notificationUUID)", "result": "\(result.rawValue)"]
            )
            await store.recordDelivery(notificationUUID: delivery.notificationUUID, result: result)
        }
        return sent
    }

    func send(_ body: Data) async -> SendAttemptResult {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await httpClient.execute(request, timeout: timeout)
            _ = try? await response.body.collect(upTo: 1 << 20)
            // Apple counts 200–206 as delivered; anything else is retried.
            return (200...206).contains(Int(response.status.code)) ? .success : .unsuccessfulHTTPResponseCode
        } catch let error as HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout: return .timedOut
            case .remoteConnectionClosed: return .prematureClose
            default: return .socketIssue
            }
        } catch {
            return .noResponse
        }
    }
}

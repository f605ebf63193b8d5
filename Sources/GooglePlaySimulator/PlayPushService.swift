import Foundation
import GooglePlayWire
import Logging
import ServiceLifecycle

/// Pushes the simulator's real-time developer notifications to the configured endpoint every `interval`, as Pub/Sub
/// would, until graceful shutdown (the demo's; tests call ``PlayPushSender/deliverDue()`` themselves). With
/// `realTime`, the simulator's clock also moves with the wall clock first, so renewals and deadlines come on time; with
/// `follow`, it moves to another clock's time instead (one virtual clock for both simulators).
public struct PlayPushService: Service {
    let store: SimulatedPlayStore
    let sender: PlayPushSender
    let interval: Duration
    let realTime: Bool
    let follow: (@Sendable () async -> Date)?
    let logger: Logger

    public init(
        store: SimulatedPlayStore,
        transport: any PlayHTTPTransport,
        interval: Duration = .seconds(1),
        realTime: Bool = false,
        follow: (@Sendable () async -> Date)? = nil,
        logger: Logger
    ) {
        self.store = store
        sender = PlayPushSender(store: store, transport: transport)
        self.interval = interval
        self.realTime = realTime
        self.follow = follow
        self.logger = logger
    }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                var last = ContinuousClock.now
                while !Task.isCancelled {
                    if realTime {
                        let now = ContinuousClock.now
                        let elapsed = now - last
                        last = now
                        await store.advance(by: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                    } else if let follow {
                        let target = await follow()
                        let current = await store.now
                        if target > current { await store.advance(by: target.timeIntervalSince(current)) }
                    }
                    do {
                        _ = try await sender.deliverDue()
                    } catch is CancellationError {
                        return
                    } catch {
                        logger.warning("Play simulator: pushing notifications failed; trying again", metadata: ["error": "\(error)"])
                    }
                    try await Task.sleep(for: follow == nil ? interval : min(interval, .milliseconds(100)))
                }
            }
        } catch is CancellationError {
            // Stopped as asked.
        }
    }
}

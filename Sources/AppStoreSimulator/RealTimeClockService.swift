import Foundation
import ServiceLifecycle

/// Moves the simulator's clock with the wall clock (Apple's sandbox experience: with the sandbox renewal rate a
/// monthly subscription renews every five real minutes), processing whatever falls due.
public struct RealTimeClockService: Service {
    public let store: SimulatedAppStore
    public var tick: Duration

    public init(store: SimulatedAppStore, tick: Duration = .milliseconds(250)) {
        self.store = store
        self.tick = tick
    }

    public func run() async throws {
        // Shutdown cancels the loop; that is how the service is asked to stop, not a failure of the group.
        do {
            try await cancelWhenGracefulShutdown {
                let clock = ContinuousClock()
                var last = clock.now
                while !Task.isCancelled {
                    try await Task.sleep(for: tick)
                    let now = clock.now
                    let elapsed = now - last
                    last = now
                    try await store.advance(by: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                }
            }
        } catch is CancellationError {}
    }
}

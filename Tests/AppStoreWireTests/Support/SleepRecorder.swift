import Synchronization

/// Records the delays a retry policy asks for instead of sleeping.
final class SleepRecorder: Sendable {
    private let delays = Mutex<[Duration]>([])

    var recorded: [Duration] { delays.withLock { $0 } }

    var sleep: @Sendable (Duration) async throws -> Void {
        { [self] duration in delays.withLock { $0.append(duration) } }
    }
}

import Synchronization

/// A value shared between test tasks, read and changed under a lock (a `Mutex` cannot be captured by an escaping
/// closure; this class can).
public final class LockedBox<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    public var value: Value { mutex.withLock { $0 } }

    @discardableResult
    public func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T {
        mutex.withLock { body(&$0) }
    }
}

import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The device this process plays, for the StoreKit stand-in: the App Store simulator it buys from, the simulator
/// account that is signed in, and the folder where the device keeps unfinished transactions (StoreKit keeps them on
/// the device, so they outlive the app's process).
///
/// StoreKit's own API is static (`Product.products(for:)`, `Transaction.unfinished`), so the stand-in's device is
/// process-wide too; it exists only where StoreKit does not (Linux).
public enum SimulatedDevice {
    struct State: Sendable {
        var simulatorURL: URL
        var account: String
        var storage: URL
        var cancelNextPurchase = false
    }

    private final class Box: @unchecked Sendable {
        let lock = NSLock()
        var state: State?
    }

    private static let box = Box()

    /// Signs the device in to `account` on the simulator at `simulatorURL`, keeping device state under `storage`.
    public static func configure(simulatorURL: URL, account: String, storage: URL) throws {
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        box.lock.withLock { box.state = State(simulatorURL: simulatorURL, account: account, storage: storage) }
    }

    /// The user will tap Cancel on the next purchase sheet.
    public static func cancelNextPurchase() {
        box.lock.withLock { box.state?.cancelNextPurchase = true }
    }

    static func state() throws -> State {
        guard let state = box.lock.withLock({ box.state }) else { throw StoreKitError.notAvailableInStorefront }
        return state
    }

    static func takeCancellation() -> Bool {
        box.lock.withLock {
            let cancel = box.state?.cancelNextPurchase ?? false
            box.state?.cancelNextPurchase = false
            return cancel
        }
    }

    // MARK: Unfinished transactions, as the device keeps them

    struct Stored: Codable, Sendable, Hashable {
        var jws: String
        var id: UInt64
        var originalID: UInt64
        var productID: String
        var appAccountToken: UUID?
    }

    static func unfinished() -> [Stored] {
        guard let state = try? state() else { return [] }
        return box.lock.withLock { read(state) }
    }

    static func keepUnfinished(_ transaction: Stored) throws {
        let state = try state()
        try box.lock.withLock {
            var list = read(state).filter { $0.id != transaction.id }
            list.append(transaction)
            try JSONEncoder().encode(list).write(to: file(state), options: .atomic)
        }
    }

    static func finish(_ id: UInt64) {
        guard let state = try? state() else { return }
        box.lock.withLock {
            let list = read(state).filter { $0.id != id }
            try? JSONEncoder().encode(list).write(to: file(state), options: .atomic)
            // Every call is logged, so a test can count them across the app's processes.
            let log = state.storage.appendingPathComponent("finished.log")
            let line = Data("\(id)\n".utf8)
            if let handle = try? FileHandle(forWritingTo: log) {
                _ = try? handle.seekToEnd()
                try? handle.write(contentsOf: line)
                try? handle.close()
            } else {
                try? line.write(to: log)
            }
        }
    }

    /// Every `finish()` the app called on this device, in order, one entry per call (from every process that
    /// played this device).
    public static func finishCalls() -> [UInt64] {
        guard let state = try? state(),
            let text = try? String(contentsOf: state.storage.appendingPathComponent("finished.log"), encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n").compactMap { UInt64($0) }
    }

    /// The stored list; the caller holds the lock.
    private static func read(_ state: State) -> [Stored] {
        guard let data = FileManager.default.contents(atPath: file(state).path) else { return [] }
        return (try? JSONDecoder().decode([Stored].self, from: data)) ?? []
    }

    private static func file(_ state: State) -> URL { state.storage.appendingPathComponent("unfinished-transactions.json") }

    static func post(_ path: String, _ body: [String: Any]) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: try state().simulatorURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.data(for: request)
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, object)
    }
}

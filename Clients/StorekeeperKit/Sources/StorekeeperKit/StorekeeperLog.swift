import Foundation

/// Where StorekeeperKit tells what it does and what went wrong in the background (a listener's submission that
/// failed, a retry, a refresh that fell back to the kept answer): the app's log, at the level it chooses.
public struct StorekeeperLog: Sendable {
    /// How much to tell.
    public enum Level: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
        case debug, info, warning, error

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    /// Messages below this level are not made.
    public var level: Level
    /// Receives each message at or above `level`.
    public var handler: @Sendable (Level, String) -> Void

    /// By default warnings and errors go to standard error.
    public init(level: Level = .warning, handler: @escaping @Sendable (Level, String) -> Void = StorekeeperLog.standardError) {
        self.level = level
        self.handler = handler
    }

    /// Nothing is told.
    public static let silent = StorekeeperLog(level: .error) { _, _ in }

    public static let standardError: @Sendable (Level, String) -> Void = { level, message in
        FileHandle.standardError.write(Data("[StorekeeperKit] \(level): \(message)\n".utf8))
    }

    func callAsFunction(_ level: Level, _ message: @autoclosure () -> String) {
        guard level >= self.level else { return }
        handler(level, message())
    }
}

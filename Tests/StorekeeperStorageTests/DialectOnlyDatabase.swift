import Logging
import NIOCore
import NIOPosix
import SQLKit

/// A database with a dialect and nothing behind it: it shows the SQL and binds an expression serializes to,
/// for a dialect whose server the test may not have.
struct DialectOnlyDatabase: SQLDatabase {
    /// Thrown by any attempt to run a statement.
    struct NotConnected: Error {}

    let dialect: any SQLDialect
    let logger = Logger(label: "storekeeper.test.dialect-only")

    var eventLoop: any EventLoop { MultiThreadedEventLoopGroup.singleton.any() }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFailedFuture(NotConnected())
    }
}

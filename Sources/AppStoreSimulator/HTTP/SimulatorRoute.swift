/// One route the simulator serves: an HTTP method and a path in OpenAPI form (`/device/accounts/{account}/billing`).
public struct SimulatorRoute: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// `GET`, `POST`, `PUT`…
    public let method: String
    public let path: String

    public init(method: String, path: String) {
        self.method = method
        self.path = path
    }

    public var description: String { "\(method) \(path)" }

    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.path, lhs.method) < (rhs.path, rhs.method) }
}

import Foundation
import Hummingbird

/// A route's path parameter, percent-decoded: clients encode `@` in account ids (`sandbox-1%40storekeeper.test`)
/// and anything else outside RFC 3986's path characters, and the router hands segments over as they arrived.
enum PathParameter {
    /// The decoded value of `name`; a malformed escape is a 400.
    static func require(_ name: String, in context: some RequestContext) throws -> String {
        let raw = try context.parameters.require(name)
        guard let decoded = raw.removingPercentEncoding else {
            throw SimulatorHTTPError(.badRequest, code: "bad_path", message: "path parameter \(name) has a malformed percent escape: \(raw)")
        }
        return decoded
    }
}

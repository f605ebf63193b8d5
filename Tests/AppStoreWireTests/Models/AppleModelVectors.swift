import AppStoreWire
import Foundation
import Testing

/// Locates Apple's unsigned model fixtures (`apple-test-vectors/models`) outside the repository.
///
/// The folder lives in `../shared/reference/apple-test-vectors` next to the package root and is never copied
/// into the repository; tests that read it are gated with `.enabled(if: AppleModelVectors.isAvailable)`.
enum AppleModelVectors {
    /// The `models` folder, or `nil` when the shared reference material is not present.
    static let directory: URL? = locate()

    /// Whether the fixtures can be read.
    static var isAvailable: Bool { directory != nil }

    /// The raw bytes of `models/<name>.json`.
    static func data(_ name: String) throws -> Data {
        let directory = try #require(directory, "apple-test-vectors/models not found")
        return try Data(contentsOf: directory.appendingPathComponent("\(name).json"))
    }

    /// `models/<name>.json` decoded with ``AppStoreJSON/makeDecoder()``.
    static func decode<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try AppStoreJSON.makeDecoder().decode(type, from: data(name))
    }

    /// A `Date` from epoch milliseconds, computed the way ``AppStoreJSON/makeDecoder()`` does.
    static func date(ms milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Walks up from this file to the directory holding `Package.swift`, then looks for
    /// `../shared/reference/apple-test-vectors/models`. If that is missing (e.g. a scratch checkout deeper in
    /// the tree), the remaining ancestors are tried as `<ancestor>/shared/reference/apple-test-vectors/models`.
    private static func locate(filePath: String = #filePath) -> URL? {
        let fileManager = FileManager.default
        let suffix = "shared/reference/apple-test-vectors/models"
        func isDirectory(_ url: URL) -> Bool {
            var isDirectory: ObjCBool = false
            return fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
        }
        var directory = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if fileManager.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                break
            }
            directory = directory.deletingLastPathComponent()
        }
        guard directory.path != "/" else { return nil }
        var ancestor = directory.deletingLastPathComponent()
        while true {
            let candidate = ancestor.appendingPathComponent(suffix)
            if isDirectory(candidate) { return candidate }
            if ancestor.path == "/" { return nil }
            ancestor = ancestor.deletingLastPathComponent()
        }
    }
}

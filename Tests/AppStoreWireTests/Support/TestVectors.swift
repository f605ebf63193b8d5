import Foundation

/// Locates `../shared/reference` beside the repository (Apple's test vectors and certificates), when present.
///
/// The vectors are read in place and never copied into the repository; tests that need them are skipped when
/// the folder is absent.
enum TestVectors {
    static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
            url.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    static let reference = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/reference")
    static let appleVectors = reference.appendingPathComponent("apple-test-vectors")

    static var available: Bool { FileManager.default.fileExists(atPath: appleVectors.path) }
    static var referenceAvailable: Bool { FileManager.default.fileExists(atPath: reference.path) }

    static func string(_ relativePath: String) throws -> String {
        try String(contentsOf: appleVectors.appendingPathComponent(relativePath), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: appleVectors.appendingPathComponent(relativePath))
    }
}

#if os(Linux)
import Foundation
import Testing

/// The StoreKit stand-in declares what StoreKit declares: every public symbol of `StoreKitStandIn` (but the
/// simulated device and UIKit's opaque handles) is in `storekit-declarations.json`, Apple's declarations as the
/// documentation gives them, with the same declaration (name, labels, types, `async`/`throws`, `@MainActor`) and the
/// same availability per platform. The stand-in's side is read from its compiled module by the toolchain's
/// `swift-symbolgraph-extract`, so it is what the compiler saw, not what its source looks like.
@Suite struct StoreKitDeclarationTests {
    static let platforms = ["iOS", "macOS", "tvOS", "watchOS", "visionOS"]

    /// One declaration, as Apple documents it or as the stand-in declares it.
    struct Declaration: Codable, Sendable, Hashable {
        var symbol: String
        var declaration: String
        /// Platform → the version it came in; a platform that is absent does not have it.
        var availability: [String: String]
        /// Platform → the version that deprecated it.
        var deprecated: [String: String]?
        var url: String?
    }

    struct Reference: Codable, Sendable {
        /// The stand-in's own public symbols that are not StoreKit's (top-level names).
        var standInOnly: [String]
        var declarations: [Declaration]
    }

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static func reference() throws -> Reference {
        let url = packageRoot.appendingPathComponent("Tests/StorekeeperKitTests/storekit-declarations.json")
        return try JSONDecoder().decode(Reference.self, from: Data(contentsOf: url))
    }

    /// The stand-in's public declarations, from its built module's symbol graph.
    static func standIn(standInOnly: [String]) throws -> [Declaration] {
        let modules = try builtModules()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("sk-symbols-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: output) }
        let extract = Process()
        extract.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        #if arch(x86_64)
        let triple = "x86_64-unknown-linux-gnu"
        #else
        let triple = "aarch64-unknown-linux-gnu"
        #endif
        extract.arguments = [
            "swift-symbolgraph-extract", "-module-name", "StoreKitStandIn", "-I", modules.path, "-target", triple,
            "-minimum-access-level", "public", "-output-dir", output.path,
        ]
        try extract.run()
        extract.waitUntilExit()
        #expect(extract.terminationStatus == 0, "swift-symbolgraph-extract failed")
        let graph = try JSONDecoder().decode(
            SymbolGraph.self,
            from: Data(contentsOf: output.appendingPathComponent("StoreKitStandIn.symbols.json"))
        )
        return graph.symbols.compactMap { symbol in
            // Only what the stand-in's source declares: not what conformances bring (`!=`, `map`, `hashValue`).
            guard symbol.location != nil, let top = symbol.pathComponents.first, !standInOnly.contains(top) else { return nil }
            var availability: [String: String] = [:]
            var deprecated: [String: String] = [:]
            for entry in symbol.availability ?? [] where platforms.contains(entry.domain ?? "") {
                guard let domain = entry.domain, entry.isUnconditionallyUnavailable != true else { continue }
                if let introduced = entry.introduced { availability[domain] = introduced.text }
                if let deprecation = entry.deprecated { deprecated[domain] = deprecation.text }
            }
            return Declaration(
                symbol: symbol.pathComponents.joined(separator: "."),
                declaration: symbol.declarationFragments.map(\.spelling).joined(),
                availability: availability,
                deprecated: deprecated.isEmpty ? nil : deprecated
            )
        }
    }

    /// `.build/<config>/Modules` beside the test bundle, where the stand-in's module was built.
    static func builtModules() throws -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let modules = directory.appendingPathComponent("Modules")
            if FileManager.default.fileExists(atPath: modules.appendingPathComponent("StoreKitStandIn.swiftmodule").path) { return modules }
            directory.deleteLastPathComponent()
        }
        let fallback = packageRoot.appendingPathComponent(".build/debug/Modules")
        try #require(FileManager.default.fileExists(atPath: fallback.appendingPathComponent("StoreKitStandIn.swiftmodule").path))
        return fallback
    }

    /// `let x: T` and `var x: T { get }` read the same to a caller (Apple's pages write `let` for properties a
    /// resilient library may give availability to, which a stored property here cannot carry); white space folds.
    static func normalized(_ declaration: String) -> String {
        var text = declaration.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if text.hasPrefix("let ") { text = "var " + text.dropFirst(4) + " { get }" }
        if text.hasPrefix("static let ") { text = "static var " + text.dropFirst(11) + " { get }" }
        return text
    }

    /// What differs: a stand-in symbol StoreKit does not document, or one whose declaration or availability is not
    /// Apple's.
    static func mismatches(standIn: [Declaration], reference: [Declaration]) -> [String] {
        // Overloads share a symbol path; the declaration tells them apart.
        let byKey = Dictionary(grouping: reference, by: \.symbol)
        var found: [String] = []
        for declared in standIn.sorted(by: { $0.symbol < $1.symbol }) {
            guard let candidates = byKey[declared.symbol] else {
                found.append("\(declared.symbol): not in StoreKit's documented declarations")
                continue
            }
            let same = candidates.filter { normalized($0.declaration) == normalized(declared.declaration) }
            guard let apple = same.first else {
                found.append(
                    "\(declared.symbol): declared `\(declared.declaration)`, Apple declares "
                        + candidates.map { "`\($0.declaration)`" }.joined(separator: " or ")
                )
                continue
            }
            // The same declaration may be documented twice (`jwsRepresentation` for each signed type): one must fit.
            guard !same.contains(where: { $0.availability == declared.availability && ($0.deprecated ?? [:]) == (declared.deprecated ?? [:]) })
            else { continue }
            if apple.availability != declared.availability {
                found.append(
                    "\(declared.symbol): available \(declared.availability.sorted { $0.key < $1.key }), Apple: \(apple.availability.sorted { $0.key < $1.key })"
                )
            } else {
                found.append("\(declared.symbol): deprecated \(declared.deprecated ?? [:]), Apple: \(apple.deprecated ?? [:])")
            }
        }
        return found
    }

    @Test func theStandInDeclaresWhatStoreKitDeclares() throws {
        let reference = try Self.reference()
        let declared = try Self.standIn(standInOnly: reference.standInOnly)
        #expect(declared.count > 100, "the symbol graph was read")
        let differences = Self.mismatches(standIn: declared, reference: reference.declarations)
        #expect(differences.isEmpty, "\(differences.count) differences:\n\(differences.joined(separator: "\n"))")
        #expect(reference.declarations.allSatisfy { $0.url?.hasPrefix("https://developer.apple.com/documentation/storekit/") == true })
    }

    /// The comparison notices a change of any part: a label, `async`, `@MainActor`, a platform, a version.
    @Test(
        arguments: [
            ("Product.purchase(options:)", "func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult", nil),
            (
                "Product.PurchaseOption.promotionalOffer(_:compactJWS:)",
                "static func promotionalOffer(_ offerID: String, compactJWS: String) -> Product.PurchaseOption", nil
            ),
            ("Transaction.finish()", "func finish()", nil),
            ("PurchaseIntent.offer", nil, ["iOS": "18.0", "macOS": "15.0", "visionOS": "2.0"]),
            ("Product.PurchaseOption.winBackOffer(_:)", nil, ["iOS": "17.0", "macOS": "15.0", "tvOS": "18.0", "watchOS": "11.0", "visionOS": "2.0"]),
        ] as [(String, String?, [String: String]?)]
    )
    func aChangedDeclarationIsCaught(symbol: String, declaration: String?, availability: [String: String]?) throws {
        let reference = try Self.reference()
        let declared = try Self.standIn(standInOnly: reference.standInOnly)
        let changed = declared.map { original -> Declaration in
            guard original.symbol == symbol else { return original }
            var edited = original
            if let declaration { edited.declaration = declaration }
            if let availability { edited.availability = availability }
            return edited
        }
        #expect(changed != declared, "the symbol is declared")
        let differences = Self.mismatches(standIn: changed, reference: reference.declarations)
        #expect(differences.count == 1 && differences[0].hasPrefix(symbol + ":"), "\(differences)")
    }
}

/// The parts of a symbol graph (`swift-symbolgraph-extract`'s JSON) the comparison reads.
private struct SymbolGraph: Decodable {
    struct Symbol: Decodable {
        struct Fragment: Decodable { var spelling: String }
        struct Availability: Decodable {
            struct Version: Decodable {
                var major: Int
                var minor: Int?
                var text: String { "\(major).\(minor ?? 0)" }
            }
            var domain: String?
            var introduced: Version?
            var deprecated: Version?
            var isUnconditionallyUnavailable: Bool?
        }
        struct Location: Decodable { var uri: String }
        var pathComponents: [String]
        var declarationFragments: [Fragment]
        var availability: [Availability]?
        var location: Location?
    }
    var symbols: [Symbol]
}
#endif

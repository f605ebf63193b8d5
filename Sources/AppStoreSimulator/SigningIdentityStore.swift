import AppStoreTestSigning
import AppStoreWire
import Crypto
import Foundation
import SwiftASN1
import X509

/// Keeps the simulator's signing chain in a directory, so runs are repeatable and a Storekeeper configured to
/// pin the root keeps working across restarts. Files: `root.pem`, `intermediate.pem`, `leaf.pem` (certificates)
/// and `root-key.pem`, `intermediate-key.pem`, `leaf-key.pem` (private keys, never needed outside).
public enum SigningIdentityStore {
    /// Loads the chain from `directory`, or generates one (see ``SimulatorSigningChain``, whose intermediate and
    /// leaf name `ocspURL` as their OCSP responder) and writes it there.
    public static func loadOrCreate(
        directory: URL,
        name: String = "Storekeeper Simulator",
        ocspURL: String = SimulatorSigningChain.defaultOCSPURL
    ) throws -> AppStoreSigningChain {
        let manager = FileManager.default
        let files = ["root.pem", "intermediate.pem", "leaf.pem", "root-key.pem", "intermediate-key.pem", "leaf-key.pem"]
        if files.allSatisfy({ manager.fileExists(atPath: directory.appendingPathComponent($0).path) }) {
            func text(_ file: String) throws -> String {
                try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            }
            return AppStoreSigningChain(
                root: try Certificate(pemEncoded: try text("root.pem")),
                intermediate: try Certificate(pemEncoded: try text("intermediate.pem")),
                leaf: try Certificate(pemEncoded: try text("leaf.pem")),
                rootKey: try P384.Signing.PrivateKey(pemRepresentation: try text("root-key.pem")),
                intermediateKey: try P384.Signing.PrivateKey(pemRepresentation: try text("intermediate-key.pem")),
                leafKey: try P256.Signing.PrivateKey(pemRepresentation: try text("leaf-key.pem"))
            )
        }
        let chain = try SimulatorSigningChain.generate(name: name, ocspURL: ocspURL)
        try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        let contents: [(String, String)] = [
            ("root.pem", try chain.root.serializeAsPEM().pemString),
            ("intermediate.pem", try chain.intermediate.serializeAsPEM().pemString),
            ("leaf.pem", try chain.leaf.serializeAsPEM().pemString),
            ("root-key.pem", chain.rootKey.pemRepresentation),
            ("intermediate-key.pem", chain.intermediateKey.pemRepresentation),
            ("leaf-key.pem", chain.leafKey.pemRepresentation),
        ]
        for (file, text) in contents {
            let url = directory.appendingPathComponent(file)
            try (text + "\n").write(to: url, atomically: true, encoding: .utf8)
            if file.hasSuffix("-key.pem") {
                // Private keys stay readable by their owner only.
                try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
            }
        }
        return chain
    }
}

import AppStoreWire
import ArgumentParser
import Foundation
import X509

/// `storekeeper verify`: verify App Store signed data offline and print the decoded payload as JSON.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a JWS (transaction, renewal info, notification, app transaction) or an app receipt.",
        discussion: """
            Prints the verified, decoded payload as JSON on standard output and exits 0. On failure prints the \
            reason on standard error and exits non-zero. JWS chains are validated to Apple Root CA - G3 (built in) \
            unless --root is given, at the payload's signedDate unless --now is given. App receipts are checked \
            against Apple Inc. Root (built in) unless --root is given.
            """
    )

    @Option(name: .customLong("root"), help: "A trusted root certificate (PEM or DER); replaces the built-in Apple root. Repeatable.")
    var roots: [String] = []

    @Option(name: .customLong("bundle-id"), help: "The app's bundle id; checked when given.")
    var bundleId: String?

    @Option(help: "Accepted environment: Production, Sandbox, Xcode or LocalTesting (default: Production and Sandbox).")
    var environment: [String] = []

    @Option(name: .customLong("app-apple-id"), help: "The app's App Apple ID; checked on Production payloads when given.")
    var appAppleId: Int64?

    @Flag(help: "Validate certificates at the current time instead of the payload's signedDate.")
    var now = false

    @Option(help: "Payload kind, when it cannot be guessed: \(SignedPayloadKind.allCases.map(\.rawValue).joined(separator: ", ")).")
    var kind: String?

    @Argument(help: "A file holding the signed data, or - for standard input.")
    var input: String

    func run() async throws {
        do {
            let text = try InputReader.read(input)
            let output = try await verify(text)
            print(try JSONOutput.render(output))
        } catch let error as CommandFailure {
            FileHandle.standardError.write(Data("storekeeper verify: \(error)\n".utf8))
            throw ExitCode(2)
        } catch let error as SignedDataVerificationError {
            FileHandle.standardError.write(Data("storekeeper verify: \(error)\n".utf8))
            throw ExitCode(1)
        } catch let error as ReceiptVerificationFailure {
            FileHandle.standardError.write(Data("storekeeper verify: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    private func verify(_ text: String) async throws -> [String: Any] {
        let kindOverride = try kind.map { name in
            guard let kind = SignedPayloadKind(rawValue: name) else { throw CommandFailure("unknown --kind \(name)") }
            return kind
        }
        let certificates = try roots.flatMap { path in
            do { return try TrustedRoots.loadCertificates(fromFile: path) } catch {
                throw CommandFailure("cannot load root \(path): \(error)")
            }
        }
        switch try SignedInput.classify(text, kind: kindOverride) {
        case .jws(let jws, let kind):
            let verifier = try makeVerifier(roots: certificates)
            return try await JWSInspection.verified(jws, kind: kind, verifier: verifier)
        case .appReceipt(let bytes):
            return try await ReceiptInspection.appReceipt(bytes, roots: certificates, bundleId: bundleId, verify: true)
        case .transactionReceipt(let base64):
            return try ReceiptInspection.transactionReceipt(base64, verify: true)
        }
    }

    private func makeVerifier(roots: [Certificate]) throws -> SignedDataVerifier {
        let environments = Set(environment.map(AppStoreEnvironment.init(rawValue:)))
        for environment in environments where !environment.isKnown {
            throw CommandFailure("unknown environment \(environment.rawValue)")
        }
        let configuration = SignedDataVerifier.Configuration(
            bundleId: bundleId,
            appAppleId: appAppleId,
            environments: environments.isEmpty ? [.production, .sandbox] : environments,
            roots: roots.isEmpty ? try TrustedRoots.apple() : try TrustedRoots.only(roots),
            // An inspection tool: extra roots and an unchecked bundle id are the operator's explicit choice.
            deployment: .development,
            validationTime: now ? .now : .signedDate
        )
        do {
            return try SignedDataVerifier(configuration: configuration)
        } catch {
            throw CommandFailure("\(error)")
        }
    }
}

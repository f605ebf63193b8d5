import AppStoreWire
import ArgumentParser
import Foundation

/// `storekeeper decode`: print App Store signed data as JSON without verifying it.
struct DecodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode a JWS or a receipt WITHOUT verifying it (output is marked \"verified\": false).",
        discussion: "Use `storekeeper verify` for anything you intend to trust."
    )

    @Option(help: "Payload kind, when it cannot be guessed: \(SignedPayloadKind.allCases.map(\.rawValue).joined(separator: ", ")).")
    var kind: String?

    @Argument(help: "A file holding the signed data, or - for standard input.")
    var input: String

    func run() async throws {
        do {
            let text = try InputReader.read(input)
            let kindOverride = try kind.map { name in
                guard let kind = SignedPayloadKind(rawValue: name) else { throw CommandFailure("unknown --kind \(name)") }
                return kind
            }
            let output: [String: Any]
            switch try SignedInput.classify(text, kind: kindOverride) {
            case .jws(let jws, let kind): output = try JWSInspection.unverified(jws, kind: kind)
            case .appReceipt(let bytes): output = try await ReceiptInspection.appReceipt(bytes, roots: [], bundleId: nil, verify: false)
            case .transactionReceipt(let base64): output = try ReceiptInspection.transactionReceipt(base64, verify: false)
            }
            FileHandle.standardError.write(Data("storekeeper decode: UNVERIFIED — do not trust this output\n".utf8))
            print(try JSONOutput.render(output))
        } catch {
            FileHandle.standardError.write(Data("storekeeper decode: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

#if os(Linux)
import Foundation
import StorekeeperKit

#if canImport(StoreKit)
print("StorekeeperKitExample plays an iPhone against the App Store simulator; on Apple platforms use StoreKit itself.")
exit(2)
#else
import StoreKitStandIn

// A command-line "app" that buys from `storekeeper demo`'s App Store simulator with the same calls an iOS app makes
// (README, "In your app"). It is also the app process the SDK's tests kill: `--hold-after STEP` stops the purchase at
// that step (printing `holding STEP`) until the process is killed.
//
//   StorekeeperKitExample --server URL --simulator URL --account ID --device DIR --guest TOKEN buy PRODUCT
//   StorekeeperKitExample ... resume

let usage = """
    usage: StorekeeperKitExample --server URL --simulator URL --account ID --device DIR (--guest TOKEN | --bearer TOKEN)
                                 [--answer-key PEM] (buy PRODUCT [--hold-after ordered|charged|journaled] | resume | me)
    """

var options: [String: String] = [:]
var command: [String] = []
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    if argument.hasPrefix("--") {
        guard let value = arguments.next() else {
            FileHandle.standardError.write(Data("\(argument) needs a value\n\(usage)\n".utf8))
            exit(2)
        }
        options[String(argument.dropFirst(2))] = value
    } else {
        command.append(argument)
    }
}

guard let server = options["server"].flatMap(URL.init(string:)), let simulator = options["simulator"].flatMap(URL.init(string:)),
    let account = options["account"], let device = options["device"]
else {
    FileHandle.standardError.write(Data("\(usage)\n".utf8))
    exit(2)
}
let credentials: Credentials? = options["guest"].map(Credentials.guest) ?? options["bearer"].map(Credentials.bearer)
let hold = options["hold-after"]
// The public half of the server's answer-signing key, pinned as an app ships it.
let answers = try options["answer-key"].map { try AnswerVerifier(publicKeyPEM: String(contentsOfFile: $0, encoding: .utf8)) }

/// One line to standard output, written at once (the tests read it while the app runs).
@Sendable func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

// The iPhone: signed in to the simulator's `account`, keeping StoreKit's unfinished transactions under `device`.
let deviceURL = URL(fileURLWithPath: device)
try SimulatedDevice.configure(simulatorURL: simulator, account: account, storage: deviceURL)

// At launch, as the app delegate would.
let storekeeper = try Storekeeper(
    serverURL: server,
    journalURL: deviceURL.appendingPathComponent("storekeeper-journal.json"),
    answers: answers,
    progress: { step in
        let (name, id): (String, String) =
            switch step {
            case .ordered(let orderId): ("ordered", orderId)
            case .charged(let transactionId): ("charged", transactionId)
            case .journaled(let transactionId): ("journaled", transactionId)
            case .submitted(let transactionId, _): ("submitted", transactionId)
            }
        say("progress \(name) \(id)")
        if name == hold {
            say("holding \(name)")
            while true { try? await Task.sleep(for: .seconds(3600)) }
        }
    },
    credentials: { credentials }
)

// What the app tells its user when the server or the App Store cannot be reached: nothing is lost (a charge is in
// StoreKit and the journal), and the next launch carries on.
do {
    switch command.first {
    case "resume":
        for (transactionId, settlement) in try await storekeeper.resume().sorted(by: { $0.key < $1.key }) {
            say("resumed \(transactionId) \(settlement)")
        }
        say("done")
    case "buy" where command.count == 2:
        // Launch first: whatever an earlier launch left is delivered before anything new is bought.
        for (transactionId, settlement) in try await storekeeper.resume().sorted(by: { $0.key < $1.key }) {
            say("resumed \(transactionId) \(settlement)")
        }
        let outcome = try await storekeeper.purchase(command[1])
        say("outcome \(outcome)")
        // What the user has now, to show them.
        let info = try await storekeeper.customerInfo()
        say("entitlements \(info.entitlements.keys.sorted()) wallet \(info.wallet.sorted { $0.key < $1.key }) verified \(info.verified)")
    case "me":
        let info = try await storekeeper.customerInfo()
        say("entitlements \(info.entitlements.keys.sorted()) wallet \(info.wallet.sorted { $0.key < $1.key }) verified \(info.verified)")
    default:
        FileHandle.standardError.write(Data("\(usage)\n".utf8))
        exit(2)
    }
} catch {
    say("error \(error)")
    exit(1)
}
#endif
#else
print("StorekeeperKitExample plays an iPhone through the StoreKit stand-in: Linux only.")
#endif

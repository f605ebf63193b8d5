import Foundation
import StorekeeperKit

// What the journal costs a purchase on this device: one durable record and one durable removal (each an atomic
// replace with fsync of the file and its directory), with `--pending` other entries already waiting.
//
//   swift run -c release --package-path Clients/StorekeeperKit StorekeeperKitBench [--purchases N] [--pending N] [--dir PATH]

var purchases = 500
var pending = 0
var directory = FileManager.default.temporaryDirectory
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--purchases": purchases = max(1, min(1_000_000, Int(arguments.next() ?? "") ?? purchases))
    case "--pending": pending = max(0, min(100_000, Int(arguments.next() ?? "") ?? pending))
    case "--dir": directory = URL(fileURLWithPath: arguments.next() ?? directory.path)
    default:
        print("usage: StorekeeperKitBench [--purchases N] [--pending N] [--dir PATH]")
        exit(2)
    }
}

let url = directory.appendingPathComponent("sk-journal-bench-\(UUID().uuidString).json")
defer { try? FileManager.default.removeItem(at: url) }
let journal = try PurchaseJournal(url: url)
let jws = String(repeating: "x", count: 3_000)  // about the size of a signed transaction
for index in 0..<pending {
    try await journal.record(.init(id: "waiting-\(index)", payload: .purchase(signedTransaction: jws, orderId: nil), createdAt: Date()))
}
var records: [Duration] = []
var removals: [Duration] = []
let clock = ContinuousClock()
for index in 0..<purchases {
    let id = "purchase-\(index)"
    records.append(
        try await clock.measure {
            try await journal.record(.init(id: id, payload: .purchase(signedTransaction: jws, orderId: "order"), createdAt: Date()))
        }
    )
    removals.append(try await clock.measure { try await journal.remove(id) })
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
}
func summary(_ name: String, _ samples: [Duration]) -> String {
    let sorted = samples.map(milliseconds).sorted()
    let median = sorted[sorted.count / 2]
    let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
    return "\(name): median \(String(format: "%.3f", median)) ms, p99 \(String(format: "%.3f", p99)) ms"
}
print("journal at \(directory.path), \(purchases) purchases, \(pending) other entries waiting")
print(summary("record (durable)", records))
print(summary("remove (durable)", removals))

import ArgumentParser

/// The `storekeeper` command: App Store purchase verification and, later, the Storekeeper server.
@main
struct Storekeeper: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storekeeper",
        abstract: "Self-hosted App Store in-app purchase server and tools.",
        subcommands: [VerifyCommand.self, DecodeCommand.self, SignOfferCommand.self, SampleCommand.self, SimulatorCommand.self, SimulatorAdvanceCommand.self, BenchCommand.self]
    )
}

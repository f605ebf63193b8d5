import ArgumentParser

/// The `storekeeper` command: the Storekeeper server, its demo, and App Store tools.
@main
struct Storekeeper: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storekeeper",
        abstract: "Self-hosted App Store in-app purchase server and tools.",
        subcommands: [
            ServeCommand.self, MigrateCommand.self, DemoCommand.self, VerifyCommand.self, DecodeCommand.self, SignOfferCommand.self,
            SampleCommand.self, SimulatorCommand.self, SimulatorAdvanceCommand.self, BenchCommand.self,
            BenchPurchasesCommand.self, BenchNotificationsCommand.self, BenchPlayCommand.self, ReportCommand.self, ReconcileCommand.self,
            EventsCommand.self,
            BenchWebhooksCommand.self, BenchRetentionCommand.self, BenchAnalyticsCommand.self,
        ]
    )

    static func main() async {
        MallocTuning.keepFreedMemory()
        await main(nil)
    }
}

import ArgumentParser

/// `storekeeper sign-offer`: sign subscription offers for operators.
struct SignOfferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sign-offer", abstract: "Sign a subscription offer.")
}

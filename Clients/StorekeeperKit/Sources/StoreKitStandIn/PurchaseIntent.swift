import Foundation

/// A purchase the user started outside the app (`PurchaseIntent`): a promoted in-app purchase on the App Store
/// product page, or a win-back offer the App Store showed a lapsed subscriber.
@available(iOS 16.4, macOS 14.4, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
@available(visionOS, unavailable)
public struct PurchaseIntent: Identifiable, Equatable, Hashable, Sendable {
    public let product: Product
    public var id: Product.ID { product.id }
    let subscriptionOffer: Product.SubscriptionOffer?

    /// The offer the user chose with the product, if any (Apple declares a `let`; see `winBackOffers`).
    @available(iOS 18.0, macOS 15.0, *)
    public var offer: Product.SubscriptionOffer? { subscriptionOffer }

    /// The intents, as the user starts them, for as long as the app iterates.
    public static var intents: PurchaseIntent.PurchaseIntents { PurchaseIntents(stream: SimulatedDevice.intents()) }

    /// An asynchronous sequence of purchase intents (`PurchaseIntent.PurchaseIntents`).
    public struct PurchaseIntents: AsyncSequence, Sendable {
        public typealias Element = PurchaseIntent
        let stream: AsyncStream<PurchaseIntent>

        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<PurchaseIntent>.Iterator
            public mutating func next() async -> PurchaseIntent? { await base.next() }
        }

        public func makeAsyncIterator() -> PurchaseIntent.PurchaseIntents.AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
    }
}

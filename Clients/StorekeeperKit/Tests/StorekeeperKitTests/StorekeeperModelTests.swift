#if os(Linux)
import Foundation
import Observation
import StorekeeperAPI
import Synchronization
import Testing

@testable import StorekeeperKit

import StoreKitStandIn

extension OnTheDevice {
    /// The `@Observable` model SwiftUI binds to: it loads customer info and offerings, shows the purchase in
    /// progress while it runs, and follows customer info as it changes.
    @Suite struct StorekeeperModelTests {
        /// The model, once made, for the purchase's progress observer to look at mid-purchase.
        final class ModelBox: Sendable {
            let model = Mutex<StorekeeperModel?>(nil)
            let seenInProgress = Mutex<[String?]>([])
        }

        @Test func theModelLoadsShowsThePurchaseInProgressAndFollowsCustomerInfo() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let box = ModelBox()
                let storekeeper = try Storekeeper(
                    serverURL: demo.serverURL,
                    journalURL: journal,
                    answers: try demo.answers(),
                    log: .silent,
                    progress: { step in
                        guard case .charged = step, let model = box.model.withLock({ $0 }) else { return }
                        let inProgress = await model.purchaseInProgress
                        box.seenInProgress.withLock { $0.append(inProgress) }
                    }
                ) {
                    credentials
                }
                let model = await StorekeeperModel(storekeeper)
                box.model.withLock { $0 = model }
                await MainActor.run { #expect(model.customerInfo == nil && model.offerings == nil && !model.isEntitled(to: "membership")) }

                let observing = Task { await model.observe() }
                defer { observing.cancel() }
                #expect(try await ListenerTests.eventually { await MainActor.run { model.offerings != nil && model.customerInfo != nil } })
                #expect(await model.lastError == nil)
                let package = try #require(await model.offerings?.current?.packages.first { $0.id == PaywallTests.monthly })

                // SwiftUI re-renders on what it read: reading purchaseInProgress and customerInfo registers both.
                let changed = Mutex(0)
                await MainActor.run {
                    withObservationTracking {
                        _ = model.purchaseInProgress
                    } onChange: {
                        changed.withLock { $0 += 1 }
                    }
                }
                let outcome = await model.purchase(package)
                #expect(outcome == .delivered)
                #expect(await model.lastOutcome == .delivered)
                #expect(box.seenInProgress.withLock { $0 } == [PaywallTests.monthly], "in progress while the App Store charged")
                #expect(changed.withLock { $0 } == 1, "the view watching purchaseInProgress was told")
                #expect(await model.purchaseInProgress == nil)
                #expect(await model.isEntitled(to: "membership"))
                #expect(await model.offerings?.current?.packages.first { $0.id == PaywallTests.monthly }?.product.id == PaywallTests.standard)

                // A change from elsewhere (a coin purchase through the Storekeeper itself) reaches the model.
                #expect(try await storekeeper.purchase(ListenerTests.coins) == .delivered)
                #expect(try await ListenerTests.eventually { await MainActor.run { model.customerInfo?.wallet["coins"] == 60 } })

                // A purchase that fails is an error to show, not a crash: the paywall held from before the trial sells
                // the monthly plan with its trial, which the server now refuses (the model's own offerings moved on).
                #expect(await model.purchase(package) == nil)
                let failure = await model.lastError
                #expect(failure?.code == .server && failure?.serverCode == "introductory_offer_not_eligible", "\(String(describing: failure))")
                #expect(await !model.isPurchasing)
            }
        }
    }
}
#endif

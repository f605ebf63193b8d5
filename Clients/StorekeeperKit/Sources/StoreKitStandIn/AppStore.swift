import Foundation

/// The App Store itself (`AppStore`): syncing, and the sheets it shows over the app.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public enum AppStore {
    /// Brings the device's transactions up to date with the App Store (the user signs in, if asked).
    public static func sync() async throws {
        _ = try await SimulatedDevice.sync()
    }

    /// Shows the App Store's subscription management sheet; the stand-in records that it was shown.
    @available(iOS 15.0, visionOS 1.0, *)
    @available(macOS, unavailable)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    @MainActor public static func showManageSubscriptions(in scene: UIWindowScene) async throws {
        try SimulatedDevice.recordSheet("manageSubscriptions")
    }

    /// Shows the App Store's offer-code redemption sheet; the user redeems the code the simulated device was given
    /// (`SimulatedDevice.enterOfferCode`), and the transaction reaches the app through `Transaction.updates`.
    @available(iOS, introduced: 16.0, deprecated: 27.0)
    @available(visionOS, introduced: 1.0, deprecated: 27.0)
    @available(macOS, unavailable)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    @MainActor public static func presentOfferCodeRedeemSheet(in scene: UIWindowScene) async throws {
        _ = try await SimulatedDevice.redeemOfferCode()
    }

    /// iOS 27's offer-code redemption sheet, which returns the redeemed transaction; closing the sheet throws
    /// `StoreKitError.userCancelled`.
    @available(iOS 27.0, visionOS 27.0, *)
    @available(macOS, unavailable)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    @MainActor public static func presentOfferCodeRedeemSheet(
        from viewController: UIViewController,
        options: Set<RedeemOption> = []
    )
        async throws -> VerificationResult<Transaction>
    {
        guard let transaction = try await SimulatedDevice.redeemOfferCode(returned: true) else { throw StoreKitError.userCancelled }
        return .verified(transaction)
    }
}

/// An option of the offer-code redemption sheet (`RedeemOption`, iOS 27); the stand-in knows none.
@available(iOS 27.0, macOS 27.0, visionOS 27.0, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
public struct RedeemOption: Equatable, Hashable, Sendable {}

import Foundation

/// StoreKit's errors (`StoreKitError`), with StoreKit's cases; the stand-in raises `networkError` when the App Store
/// simulator cannot be reached and `systemError` when it refuses a request.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public enum StoreKitError: Error {
    case unknown
    case userCancelled
    case networkError(URLError)
    case systemError(any Error)
    case notAvailableInStorefront
    @available(iOS 15.4, macOS 12.3, tvOS 15.4, watchOS 8.5, visionOS 1.0, *)
    case notEntitled
    @available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
    case unsupported
    @available(iOS 27.0, macOS 27.0, tvOS 27.0, watchOS 27.0, visionOS 27.0, *)
    case invalidPresentationContext
}

/// What the App Store simulator answered when it refused a request (the stand-in's `StoreKitError.systemError`).
public struct SimulatorRefusal: Error, Sendable, CustomStringConvertible {
    public var status: Int
    public var code: String?
    public var description: String { "the App Store answered \(status)\(code.map { " (\($0))" } ?? "")" }
}

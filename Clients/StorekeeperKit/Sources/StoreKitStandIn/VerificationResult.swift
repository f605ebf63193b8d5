import Foundation

/// A value the App Store signed, and whether StoreKit could verify its signature (`VerificationResult<SignedType>`).
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
@frozen public enum VerificationResult<SignedType> {
    case unverified(SignedType, VerificationResult<SignedType>.VerificationError)
    case verified(SignedType)
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension VerificationResult {
    /// Why a signed value failed StoreKit's verification.
    public enum VerificationError: Error {
        case revokedCertificate
        case invalidCertificateChain
        case invalidDeviceVerification
        case invalidEncoding
        case invalidSignature
        case missingRequiredProperties
    }

    /// The value, whatever its verification said.
    public var unsafePayloadValue: SignedType {
        switch self {
        case .verified(let value), .unverified(let value, _): value
        }
    }

    /// The value if it verified; its verification error otherwise.
    public var payloadValue: SignedType {
        get throws {
            switch self {
            case .verified(let value): value
            case .unverified(_, let error): throw error
            }
        }
    }

    /// The JWS as the App Store signed it.
    public var jwsRepresentation: String {
        (unsafePayloadValue as? any SignedByTheAppStore)?.jws ?? ""
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension VerificationResult: Sendable where SignedType: Sendable {}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension VerificationResult: Equatable where SignedType: Equatable {}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension VerificationResult: Hashable where SignedType: Hashable {}

/// A value that keeps the JWS it was decoded from (the stand-in's way to answer `jwsRepresentation`).
protocol SignedByTheAppStore {
    var jws: String { get }
}

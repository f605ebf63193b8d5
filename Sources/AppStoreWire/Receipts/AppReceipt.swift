import Crypto
import Foundation

/// The decoded payload of a PKCS#7 app receipt (protocol reference §9), as read by ``AppReceiptParser``.
///
/// Fields are optional: Xcode receipts and old receipts lack some, and the parser never invents values.
/// Attributes 0, 1, 15, 16 and 18 are known only from third-party parsers; they are read on a best-effort
/// basis and left `nil` when their value is not the expected ASN.1 type.
public struct AppReceipt: Sendable, Hashable, Codable {
    /// 0: the receipt type, such as `Production`, `ProductionSandbox` or `Xcode`.
    public var receiptType: String?
    /// 1: the app's Apple ID (0 outside production).
    public var appItemId: Int64?
    /// 2: the bundle identifier.
    public var bundleId: String?
    /// 2: the DER bytes of the bundle identifier as stored in the receipt, an input of the device hash.
    public var bundleIdData: Data?
    /// 3: the app version (`CFBundleVersion`) the receipt was created for.
    public var appVersion: String?
    /// 4: the opaque value, an input of the device hash.
    public var opaqueValue: Data?
    /// 5: the SHA-1 device hash.
    public var sha1Hash: Data?
    /// 12: when the App Store created the receipt; the time its signature chain is validated at.
    public var creationDate: Date?
    /// 15: the download identifier.
    public var downloadId: Int64?
    /// 16: the version external identifier.
    public var versionExternalIdentifier: Int64?
    /// 18: when the app was originally purchased.
    public var originalPurchaseDate: Date?
    /// 19: the app version originally purchased.
    public var originalApplicationVersion: String?
    /// 21: when a Volume Purchase Program receipt expires.
    public var expirationDate: Date?
    /// 17: every in-app purchase entry, in receipt order.
    public var inAppPurchases: [AppReceiptInAppPurchase] = []

    /// A receipt with no fields set; assign the ones you need.
    public init() {}

    /// The environment named by ``receiptType``: `ProductionSandbox` is ``AppStoreEnvironment/sandbox``;
    /// other values map by name.
    public var environment: AppStoreEnvironment? {
        switch receiptType {
        case nil: return nil
        case "Production": return .production
        case "ProductionSandbox", "Sandbox": return .sandbox
        case "Xcode": return .xcode
        case let other?: return AppStoreEnvironment(rawValue: other)
        }
    }

    /// Whether ``sha1Hash`` equals `SHA1(deviceIdentifier ‖ opaqueValue ‖ bundleIdData)`.
    ///
    /// - Parameter deviceIdentifier: the 16 bytes of `identifierForVendor` (iOS, tvOS, watchOS) or the primary
    ///   MAC address (macOS).
    public func isValidDeviceHash(deviceIdentifier: some DataProtocol) -> Bool {
        guard let opaqueValue, let bundleIdData, let sha1Hash else { return false }
        return Self.deviceHash(deviceIdentifier: deviceIdentifier, opaqueValue: opaqueValue, bundleIdData: bundleIdData)
            == sha1Hash
    }

    /// Whether ``sha1Hash`` matches the device with this `identifierForVendor`.
    public func isValidDeviceHash(identifierForVendor: UUID) -> Bool {
        isValidDeviceHash(deviceIdentifier: Self.bytes(of: identifierForVendor))
    }

    /// Computes `SHA1(deviceIdentifier ‖ opaqueValue ‖ bundleIdData)`, the value of attribute 5.
    public static func deviceHash(
        deviceIdentifier: some DataProtocol,
        opaqueValue: some DataProtocol,
        bundleIdData: some DataProtocol
    ) -> Data {
        var sha1 = Insecure.SHA1()
        sha1.update(data: deviceIdentifier)
        sha1.update(data: opaqueValue)
        sha1.update(data: bundleIdData)
        return Data(sha1.finalize())
    }

    /// The 16 raw bytes of a UUID, in the order `identifierForVendor` stores them.
    static func bytes(of uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }
}

import Foundation

/// An app's Google Play side: its package, the service account that calls the Play Developer API, and the Pub/Sub
/// push subscription whose requests carry its real-time developer notifications. Secrets never appear in
/// descriptions.
public struct GooglePlayConfiguration: Sendable, CustomStringConvertible {
    public var packageName: String
    /// The service account's JSON key file, or the JSON itself (tests, the demo).
    public var serviceAccountPath: String?
    public var serviceAccountJSON: String?
    /// Where the Play Developer API is called instead of Google's host (a simulator).
    public var apiURL: URL?
    /// The audience the push subscription's OIDC tokens name (the push endpoint's URL, or what was configured), and
    /// the push subscription's service account; without both, `POST /google/rtdn` refuses every push.
    public var pushAudience: String?
    public var pushServiceAccount: String?
    /// Google's certificates for ID tokens, or a simulator's.
    public var certsURL: URL?
    /// Whether test purchases (license testers) are delivered; they are always flagged and kept out of revenue.
    public var allowTestPurchases: Bool
    /// The developer account's Cloud Storage bucket of financial reports (`pubsite_prod_rev_…`): with it, Play
    /// sales are reconciled against Google's monthly earnings reports.
    public var reportsBucket: String?
    /// Where Cloud Storage is called instead of Google's host (a simulator).
    public var reportsURL: URL?

    public init(
        packageName: String,
        serviceAccountPath: String? = nil,
        serviceAccountJSON: String? = nil,
        apiURL: URL? = nil,
        pushAudience: String? = nil,
        pushServiceAccount: String? = nil,
        certsURL: URL? = nil,
        allowTestPurchases: Bool = true,
        reportsBucket: String? = nil,
        reportsURL: URL? = nil
    ) {
        self.packageName = packageName
        self.serviceAccountPath = serviceAccountPath
        self.serviceAccountJSON = serviceAccountJSON
        self.apiURL = apiURL
        self.pushAudience = pushAudience
        self.pushServiceAccount = pushServiceAccount
        self.certsURL = certsURL
        self.allowTestPurchases = allowTestPurchases
        self.reportsBucket = reportsBucket
        self.reportsURL = reportsURL
    }

    /// Reads `apps.<name>.googlePlay.*`: `packageName` (the group is off without it), `serviceAccount.path` (the JSON
    /// key; required), `api.url` (instead of Google's host), `push.audience`, `push.serviceAccount`, `push.certsURL`
    /// (instead of Google's), `allowTestPurchases` (true), `reports.bucket` (the financial reports' Cloud Storage bucket,
    /// `pubsite_prod_rev_…`), `reports.url` (instead of Google's Cloud Storage). Environment form: `APPS_MAIN_GOOGLE_PLAY_PACKAGE_NAME`, ...
    init?(name: String, reader: StrictConfigReader) throws {
        guard let packageName = try reader.string("packageName") else { return nil }
        guard Self.isPackageName(packageName) else {
            throw ConfigurationError.invalid("apps.\(name).googlePlay.packageName is not an Android package name")
        }
        func url(_ key: String) throws -> URL? {
            guard let text = try reader.string(key) else { return nil }
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ConfigurationError.invalid("apps.\(name).googlePlay.\(key) is not an http(s) URL")
            }
            return url
        }
        guard let path = try reader.string("serviceAccount.path") else {
            throw ConfigurationError.missing("apps.\(name).googlePlay.serviceAccount.path (the Play Developer API's JSON key)")
        }
        self.init(
            packageName: packageName,
            serviceAccountPath: path,
            apiURL: try url("api.url"),
            pushAudience: try reader.string("push.audience"),
            pushServiceAccount: try reader.string("push.serviceAccount"),
            certsURL: try url("push.certsURL"),
            allowTestPurchases: try reader.bool("allowTestPurchases") ?? true,
            reportsBucket: try reader.string("reports.bucket"),
            reportsURL: try url("reports.url")
        )
        if let reportsBucket, !Self.isBucketName(reportsBucket) {
            throw ConfigurationError.invalid("apps.\(name).googlePlay.reports.bucket is not a Cloud Storage bucket name (pubsite_prod_rev_…)")
        }
        if (pushAudience == nil) != (pushServiceAccount == nil) {
            throw ConfigurationError.missing("apps.\(name).googlePlay.push.audience and .serviceAccount go together")
        }
    }

    /// Android's rule: two or more dot-separated segments of letters, digits and underscores, each starting with a
    /// letter.
    static func isPackageName(_ name: String) -> Bool {
        let segments = name.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count >= 2, name.utf8.count <= 255 else { return false }
        return segments.allSatisfy { segment in
            guard let first = segment.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else { return false }
            return segment.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
        }
    }

    /// Cloud Storage's rule for bucket names: 3 to 63 lowercase letters, digits, `_`, `-` and `.`, starting and
    /// ending with a letter or digit.
    static func isBucketName(_ name: String) -> Bool {
        let scalars = Array(name.unicodeScalars)
        guard (3...63).contains(scalars.count), let first = scalars.first, let last = scalars.last else { return false }
        func letterOrDigit(_ s: Unicode.Scalar) -> Bool { ("a"..."z").contains(s) || ("0"..."9").contains(s) }
        return letterOrDigit(first) && letterOrDigit(last) && scalars.allSatisfy { letterOrDigit($0) || $0 == "_" || $0 == "-" || $0 == "." }
    }

    public var description: String {
        "GooglePlayConfiguration(\(packageName), serviceAccount: "
            + (serviceAccountPath ?? (serviceAccountJSON == nil ? "none" : "<in memory>")) + ", push: "
            + (pushServiceAccount ?? "off") + ", reports: " + (reportsBucket ?? "off") + ")"
    }
}

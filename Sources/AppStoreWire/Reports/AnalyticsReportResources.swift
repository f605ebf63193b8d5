import Foundation

/// App Store Connect's Analytics Reports API resources (ASC API 3.4, reference §12.5), as JSON:API documents carry
/// them: a report request per app and access type, its reports by name, each report's instances per granularity and
/// processing date, and each instance's segments — gzip files of tab-separated rows behind short-lived URLs.
public enum AnalyticsReports {
    /// `ONGOING` (new instances from now on) or `ONE_TIME_SNAPSHOT` (the history, once).
    public enum AccessType: String, Codable, Sendable, Hashable {
        case ongoing = "ONGOING"
        case oneTimeSnapshot = "ONE_TIME_SNAPSHOT"
    }

    /// The reports Storekeeper reads.
    public static let subscriptionEventStandard = "App Store Subscription Event Standard"
    public static let subscriptionStateStandard = "App Store Subscription State Standard"

    /// `analyticsReportRequests`.
    public struct Request: Codable, Sendable, Hashable {
        public struct Attributes: Codable, Sendable, Hashable {
            public var accessType: AccessType?
            public var stoppedDueToInactivity: Bool?

            public init(accessType: AccessType?, stoppedDueToInactivity: Bool? = nil) {
                self.accessType = accessType
                self.stoppedDueToInactivity = stoppedDueToInactivity
            }
        }

        public var type: String
        public var id: String
        public var attributes: Attributes?

        public init(id: String, attributes: Attributes?) {
            self.type = "analyticsReportRequests"
            self.id = id
            self.attributes = attributes
        }
    }

    /// `analyticsReports`.
    public struct Report: Codable, Sendable, Hashable {
        public struct Attributes: Codable, Sendable, Hashable {
            public var name: String?
            public var category: String?

            public init(name: String?, category: String?) {
                self.name = name
                self.category = category
            }
        }

        public var type: String
        public var id: String
        public var attributes: Attributes?

        public init(id: String, attributes: Attributes?) {
            self.type = "analyticsReports"
            self.id = id
            self.attributes = attributes
        }
    }

    /// `analyticsReportInstances`.
    public struct Instance: Codable, Sendable, Hashable {
        public struct Attributes: Codable, Sendable, Hashable {
            /// `DAILY`, `WEEKLY`, `MONTHLY`.
            public var granularity: String?
            /// `YYYY-MM-DD`.
            public var processingDate: String?

            public init(granularity: String?, processingDate: String?) {
                self.granularity = granularity
                self.processingDate = processingDate
            }
        }

        public var type: String
        public var id: String
        public var attributes: Attributes?

        public init(id: String, attributes: Attributes?) {
            self.type = "analyticsReportInstances"
            self.id = id
            self.attributes = attributes
        }
    }

    /// `analyticsReportSegments`.
    public struct Segment: Codable, Sendable, Hashable {
        public struct Attributes: Codable, Sendable, Hashable {
            /// The MD5 of the compressed file, 32 hex digits.
            public var checksum: String?
            public var sizeInBytes: Int?
            /// A pre-signed download URL, valid a few minutes; fetched without the JWT.
            public var url: String?

            public init(checksum: String?, sizeInBytes: Int?, url: String?) {
                self.checksum = checksum
                self.sizeInBytes = sizeInBytes
                self.url = url
            }
        }

        public var type: String
        public var id: String
        public var attributes: Attributes?

        public init(id: String, attributes: Attributes?) {
            self.type = "analyticsReportSegments"
            self.id = id
            self.attributes = attributes
        }
    }

    /// A JSON:API list document.
    public struct List<Item: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
        public struct Links: Codable, Sendable, Hashable {
            public var next: String?
            public init(next: String?) { self.next = next }
        }

        public var data: [Item]
        public var links: Links?

        public init(data: [Item], next: String? = nil) {
            self.data = data
            self.links = Links(next: next)
        }
    }

    /// A JSON:API single-resource document.
    public struct Single<Item: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
        public var data: Item
        public init(data: Item) { self.data = data }
    }

    /// The body of `POST /v1/analyticsReportRequests`.
    public struct CreateRequest: Codable, Sendable, Hashable {
        public struct Data: Codable, Sendable, Hashable {
            public struct Relationships: Codable, Sendable, Hashable {
                public struct App: Codable, Sendable, Hashable {
                    public struct Linkage: Codable, Sendable, Hashable {
                        public var type: String
                        public var id: String
                    }
                    public var data: Linkage
                }
                public var app: App
            }

            public var type: String
            public var attributes: Request.Attributes
            public var relationships: Relationships
        }

        public var data: Data

        public init(appAppleId: String, accessType: AccessType) {
            data = Data(
                type: "analyticsReportRequests",
                attributes: .init(accessType: accessType),
                relationships: .init(app: .init(data: .init(type: "apps", id: appAppleId)))
            )
        }
    }
}

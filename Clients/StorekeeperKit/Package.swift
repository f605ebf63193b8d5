// swift-tools-version:6.0
// StorekeeperKit: the client SDK an app adds to carry each purchase from StoreKit to a Storekeeper server without
// losing it. Its own package, so an app's dependency graph gets none of the server's (NIO, databases, Hummingbird).
import PackageDescription

let package = Package(
    name: "StorekeeperKit",
    platforms: [.iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "StorekeeperKit", targets: ["StorekeeperKit"])
    ],
    targets: [
        .target(
            name: "StorekeeperKit",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        ),
        .testTarget(name: "StorekeeperKitTests", dependencies: ["StorekeeperKit"]),
    ]
)

// swift-tools-version:6.0
// StorekeeperKit: the client SDK an app adds to carry each purchase from StoreKit to a Storekeeper server without
// losing it. Its own package, so an app's dependency graph gets none of the server's (NIO, databases, Hummingbird):
// the API contract (../StorekeeperAPI) and URLSession.
import PackageDescription

let package = Package(
    name: "StorekeeperKit",
    platforms: [.iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "StorekeeperKit", targets: ["StorekeeperKit"])
    ],
    dependencies: [
        .package(path: "../StorekeeperAPI"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // CryptoKit's API: on Apple platforms it forwards to CryptoKit itself.
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    ],
    targets: [
        // StoreKit 2's API, as far as StorekeeperKit uses it, backed by the App Store simulator: for platforms
        // without StoreKit, where the SDK's StoreKit adapter compiles against it and runs in the tests.
        .target(name: "StoreKitStandIn"),
        .target(
            name: "StorekeeperKit",
            dependencies: [
                .target(name: "StoreKitStandIn", condition: .when(platforms: [.linux])),
                .product(name: "StorekeeperAPI", package: "StorekeeperAPI"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        ),
        // A command-line "app" that buys from the demo's App Store simulator with the calls README shows; the tests
        // kill it mid-purchase. Linux only: it plays an iPhone through the StoreKit stand-in.
        .executableTarget(
            name: "StorekeeperKitExample",
            dependencies: ["StorekeeperKit", .target(name: "StoreKitStandIn", condition: .when(platforms: [.linux]))]
        ),
        // Measures the journal's cost per purchase (README, "In your app").
        .executableTarget(name: "StorekeeperKitBench", dependencies: ["StorekeeperKit"]),
        .testTarget(
            name: "StorekeeperKitTests",
            dependencies: [
                "StorekeeperKit",
                .target(name: "StoreKitStandIn", condition: .when(platforms: [.linux])),
                .product(name: "StorekeeperAPI", package: "StorekeeperAPI"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            // Apple's StoreKit declarations, which StoreKitDeclarationTests holds the stand-in to.
            exclude: ["storekit-declarations.json"]
        ),
    ]
)

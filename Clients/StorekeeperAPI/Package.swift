// swift-tools-version:6.0
// Storekeeper's HTTP API as Swift types and a client, generated from the server's openapi.yaml
// (scripts/generate-api). A package of its own so that the server's tests and the client SDK share one copy, and an
// app that depends on it gets no server dependencies.
import PackageDescription

let package = Package(
    name: "StorekeeperAPI",
    platforms: [.iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "StorekeeperAPI", targets: ["StorekeeperAPI"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "StorekeeperAPI",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            exclude: ["openapi-generator-config.yaml"],
            // Generated code: its imports are written for any document, so unused-import warnings are noise.
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])]
        )
    ]
)

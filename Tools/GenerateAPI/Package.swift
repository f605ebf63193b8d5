// swift-tools-version:6.0
// Builds Apple's swift-openapi-generator on its own, so `scripts/generate-api` can regenerate `StorekeeperAPI`
// from `openapi.yaml` without the build plugin slowing every clean build of the product; and `admin-scopes`, which
// writes each admin operation's declared scope out of the same document for the server's admin middleware.
import PackageDescription

let package = Package(
    name: "GenerateAPI",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3"),
        // Already built for the generator; named here for admin-scopes.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        .executableTarget(name: "admin-scopes", dependencies: [.product(name: "Yams", package: "Yams")])
    ]
)

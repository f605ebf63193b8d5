// swift-tools-version:6.0
// Builds Apple's swift-openapi-generator on its own, so `scripts/generate-api` can regenerate `StorekeeperAPI`
// from `openapi.yaml` without the build plugin slowing every clean build of the product.
import PackageDescription

let package = Package(
    name: "GenerateAPI",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3")
    ]
)

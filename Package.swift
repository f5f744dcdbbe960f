// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "PropertyObservation",
  platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6)],
  products: [
    .library(name: "PropertyObservation", targets: ["PropertyObservation"]),
    .executable(name: "walkthrough", targets: ["Walkthrough"]),
    .executable(name: "download", targets: ["Download"]),
    .executable(name: "bindings", targets: ["Bindings"]),
  ],
  targets: [
    .target(name: "PropertyObservation", path: "Sources/Observation"),
    .executableTarget(
      name: "Walkthrough",
      dependencies: ["PropertyObservation"],
      path: "Examples/Walkthrough"
    ),
    .executableTarget(
      name: "Download",
      dependencies: ["PropertyObservation"],
      path: "Examples/Download",
      exclude: ["expected-output.txt"]
    ),
    .executableTarget(
      name: "Bindings",
      dependencies: ["PropertyObservation"],
      path: "Examples/Bindings",
      exclude: ["expected-output.txt"]
    ),
    .testTarget(
      name: "PropertyObservationTests",
      dependencies: ["PropertyObservation"],
      path: "Tests/PropertyObservationTests"
    ),
  ],
  swiftLanguageModes: [.v6]
)

// Stricter checks for the library's own code only: examples and tests compile the way a user's
// code would, so the tutorial's `public class User` builds unchanged.
for target in package.targets where target.type == .regular {
  target.swiftSettings =
    (target.swiftSettings ?? []) + [
      .enableUpcomingFeature("ExistentialAny"),
      .enableUpcomingFeature("InternalImportsByDefault"),
      .enableUpcomingFeature("MemberImportVisibility"),
    ]
}

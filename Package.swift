// swift-tools-version: 6.2
import PackageDescription

let package = Package(
  name: "PropertyObservation",
  platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6)],
  products: [
    .library(name: "PropertyObservation", targets: ["PropertyObservation"]),
    .library(name: "PropertyObservationTesting", targets: ["PropertyObservationTesting"]),
    .executable(name: "walkthrough", targets: ["Walkthrough"]),
    .executable(name: "observingamodel", targets: ["ObservingAModel"]),
    .executable(name: "bindings", targets: ["Bindings"]),
    .executable(name: "download", targets: ["Download"]),
    .executable(name: "bindingamodel", targets: ["BindingAModel"]),
    .executable(name: "drivingaview", targets: ["DrivingAView"]),
    .executable(name: "masterdetail", targets: ["MasterDetail"]),
    .executable(name: "listscreen", targets: ["ListScreen"]),
  ],
  targets: [
    .target(
      name: "PropertyObservation",
      dependencies: ["PropertyObservationAtomics"],
      path: "Sources/Observation"
    ),
    // What Swift's standard library offers only from macOS 15 and its peers on, or not at all:
    // one relaxed atomic counter (see `ObservationContext.progress`), and on Linux the lock's
    // futex word (see `Lock`), whose system call C alone can make.
    .target(name: "PropertyObservationAtomics", path: "Sources/Atomics"),
    .target(
      name: "PropertyObservationTesting",
      dependencies: ["PropertyObservation"],
      path: "Sources/PropertyObservationTesting"
    ),
    .executableTarget(
      name: "Walkthrough",
      dependencies: ["PropertyObservation"],
      path: "Examples/Walkthrough",
      exclude: ["expected-output.txt"]
    ),
    .executableTarget(
      name: "ObservingAModel",
      dependencies: ["PropertyObservation"],
      path: "Examples/ObservingAModel",
      exclude: ["expected-output.txt"]
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
    .executableTarget(
      name: "BindingAModel",
      dependencies: ["PropertyObservation"],
      path: "Examples/BindingAModel",
      exclude: ["expected-output.txt"]
    ),
    .executableTarget(
      name: "DrivingAView",
      dependencies: ["PropertyObservation"],
      path: "Examples/DrivingAView",
      exclude: ["expected-output.txt"]
    ),
    .executableTarget(
      name: "MasterDetail",
      dependencies: ["PropertyObservation"],
      path: "Examples/MasterDetail",
      exclude: ["expected-output.txt"]
    ),
    .executableTarget(
      name: "ListScreen",
      dependencies: ["PropertyObservation"],
      path: "Examples/ListScreen",
      exclude: ["expected-output.txt"]
    ),
    // Scaffolding shared by the test targets (gates, bounded waits, the recording log); a
    // target, not a product, so nothing outside this package can depend on it.
    .target(
      name: "TestSupport",
      dependencies: ["PropertyObservation"],
      path: "Tests/TestSupport"
    ),
    .testTarget(
      name: "PropertyObservationTests",
      dependencies: ["PropertyObservation", "PropertyObservationTesting", "TestSupport"],
      path: "Tests/PropertyObservationTests"
    ),
    .testTarget(
      name: "PropertyObservationTestingTests",
      dependencies: ["PropertyObservation", "PropertyObservationTesting", "TestSupport"],
      path: "Tests/PropertyObservationTestingTests"
    ),
  ],
  swiftLanguageModes: [.v6]
)

// Stricter checks for the library's own code (and the tests' shared support target) only:
// examples and tests compile the way a user's code would, so the tutorial's `public class User`
// builds unchanged.
for target in package.targets where target.type == .regular {
  target.swiftSettings =
    (target.swiftSettings ?? []) + [
      .enableUpcomingFeature("ExistentialAny"),
      .enableUpcomingFeature("InternalImportsByDefault"),
      .enableUpcomingFeature("MemberImportVisibility"),
    ]
}

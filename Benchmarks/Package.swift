// swift-tools-version: 6.2
import PackageDescription

// A separate package, so that the library itself keeps zero dependencies. Run everything with
// `swift run -c release --package-path Benchmarks benchmarks` from the repository root, or a
// quick run of every workload with `... benchmarks --smoke`.
let package = Package(
  name: "PropertyObservationBenchmarks",
  platforms: [.macOS(.v10_15)],
  products: [
    .executable(name: "benchmarks", targets: ["Benchmarks"])
  ],
  dependencies: [
    .package(name: "PropertyObservation", path: ".."),
    .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
  ],
  targets: [
    // Counts heap allocations and live heap bytes by interposing malloc and friends.
    .target(name: "MallocCounter"),
    .executableTarget(
      name: "Benchmarks",
      dependencies: [
        "MallocCounter",
        .product(name: "PropertyObservation", package: "PropertyObservation"),
        .product(name: "OpenCombine", package: "OpenCombine"),
        .product(name: "OpenCombineDispatch", package: "OpenCombine"),
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)

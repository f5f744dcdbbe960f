import Dispatch
import PropertyObservation

#if canImport(Darwin)
  import Darwin  // exit(_:)
#elseif canImport(Glibc)
  import Glibc
#endif

/// A download whose progress a background queue updates.
final class Download: Sendable {
  let progress = Observable(0.0)
  private let network = DispatchQueue(label: "network")

  /// Reports progress in four steps, on the network's queue.
  func start() {
    network.async {
      for step in 1...4 {
        self.progress.value = Double(step) / 4
      }
    }
  }
}

/// Stands in for a label: prints its text whenever it is set.
@MainActor
final class Label {
  var text: String? {
    didSet { print("[label] \(text ?? "")") }
  }
}

let download = Download()
let label = Label()

let progress = download.progress.asDriver()
progress.drive(with: label) { label, fraction in
  label.text = "\(Int(fraction * 100))%"
}
download.start()
dispatchMain()

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

/// Stands in for a progress bar: prints a bar whenever its fraction is set.
@MainActor
final class ProgressBar {
  var fraction = 0.0 {
    didSet {
      let filled = Int(fraction * 4)
      let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 4 - filled)
      print("[bar] \(bar)")
    }
  }
}

let download = Download()
let label = Label()
let bar = ProgressBar()

let progress = download.progress.asDriver()
progress.drive(with: label) { label, fraction in
  label.text = "\(Int(fraction * 100))%"
}
let token = progress.drive { fraction in
  bar.fraction = fraction
  if fraction == 1 {
    print("done")
    closeScreen()
  }
}

/// The screen closes: both drives end, and with them the driver's registration on the model.
@MainActor func closeScreen() {
  token.cancel()
  progress.stopDriving(label)
  print("observers of the download: \(download.progress.observerCount)")
  exit(0)
}

download.start()
dispatchMain()

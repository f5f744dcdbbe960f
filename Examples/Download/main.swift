// A download screen in MVC without UIKit: the model is updated from background queues (a
// simulated network), the controller drives plain stand-ins for a label and a progress view
// through Drivers, so every view update happens on the main queue, in order.
//
// It shows the three promises of a Driver: main-queue delivery, one shared request for two
// labels (the RxCocoa tutorial's double request), and a fallback value instead of a failure.
// The simulated network waits for the screen to catch up between steps, so the output is the
// same on every run.
import Dispatch
import PropertyObservation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

// MARK: - Views

/// Stands in for a label: prints its text whenever it changes.
@MainActor
final class Label {
  let name: String
  var text: String? {
    didSet { print("[\(name)] \(text ?? "")") }
  }

  init(name: String) {
    self.name = name
  }
}

/// Stands in for a progress view: redraws (prints a bar) whenever its fraction changes.
@MainActor
final class ProgressView {
  private(set) var redraws = 0
  var fraction = 0.0 {
    didSet {
      redraws += 1
      let filled = Int(fraction * 10)
      let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 10 - filled)
      print("[progress] \(bar) \(Int((fraction * 100).rounded()))%")
    }
  }
}

// MARK: - Model

enum DownloadError: Error {
  case offline
}

/// The model: observable state, changed only on the network's background queue.
final class Download: Sendable {
  let progress = Observable(0.0)
  let status = Observable<Result<String, DownloadError>>(.success("Waiting"))
  let requestCount = Observable(0)
  private let network = DispatchQueue(label: "network")

  /// Simulates a download of `chunks` chunks of five progress updates each, then its outcome.
  /// While each chunk arrives the main queue is busy (a long layout pass), which is when a
  /// coalescing driver skips the values nobody could see.
  func start(chunks: Int, failing: Bool, then next: @escaping @MainActor () -> Void) {
    network.async {
      self.progress.value = 0
      self.status.value = .success("Downloading report.pdf")
      self.catchUp()
      for chunk in 0..<chunks {
        let layoutPass = DispatchSemaphore(value: 0)
        DispatchQueue.main.async { layoutPass.wait() }
        for step in 1...5 {
          self.progress.value = Double(chunk * 5 + step) / Double(chunks * 5)
        }
        layoutPass.signal()
        self.catchUp()
        if failing && chunk == 1 {
          self.status.value = .failure(.offline)
          self.catchUp()
          DispatchQueue.main.async { MainActor.assumeIsolated(next) }
          return
        }
      }
      self.status.value = .success("Downloaded report.pdf")
      self.catchUp()
      DispatchQueue.main.async { MainActor.assumeIsolated(next) }
    }
  }

  /// Asks the server for a summary: the expensive request that must run once per screen.
  func fetchSummary() async throws -> String {
    requestCount.update { $0 += 1 }
    DispatchQueue.main.sync { print("(network) summary request sent") }
    return "Quarterly report, 12 pages"
  }

  /// Waits until the main queue has delivered everything queued so far; a real network would not.
  private func catchUp() {
    DispatchQueue.main.sync {}
  }
}

// MARK: - Controller

/// Drives the views from the model; every closure below runs on the main queue.
@MainActor
final class DownloadViewController {
  let statusLabel = Label(name: "status")
  let titleLabel = Label(name: "title")
  let lengthLabel = Label(name: "length")
  let progressView = ProgressView()
  static let loading = "Loading summary…"
  private(set) var progress: Driver<Double>?

  func show(_ download: Download) {
    let progress = download.progress.asDriver(policy: .coalescing)
    progress.drive(progressView, \.fraction)
    self.progress = progress
    download.status.asDriver(onErrorJustReturn: "Download failed, showing the cached copy")
      .drive(statusLabel, \.text)
  }

  /// The tutorial's two labels on one request: both drive the same Driver.
  func showSummary(of download: Download) -> Driver<String> {
    let summary = Driver(initialValue: Self.loading, onErrorJustReturn: "No summary") {
      try await download.fetchSummary()
    }
    summary.drive(titleLabel, \.text)
    summary.drive(with: self) { controller, text in
      controller.lengthLabel.text = text == Self.loading ? "…" : "\(text.count) characters"
    }
    return summary
  }
}

// MARK: - Run

/// What shows the screen: a window's root view controller in an app. Closing the screen empties
/// it, and then nothing may keep the controller alive.
var presentedScreen: DownloadViewController?

@MainActor func run() {
  let download = Download()
  let controller = DownloadViewController()
  presentedScreen = controller

  print("--- Showing the screen (current values, at once, on the main queue) ---")
  controller.show(download)

  print("--- Downloading on a background queue ---")
  // The closures below outlive this call, so they capture the screen weakly: a strong capture
  // would keep it alive after it closed.
  download.start(chunks: 4, failing: false) { [weak controller] in
    guard let controller else { return }
    print("--- One request for two labels ---")
    let summary = controller.showSummary(of: download)
    // A third subscriber of the same driver waits for the response to go on; it too shares
    // the one request.
    var waiting: ObservationToken?
    waiting = summary.drive { [weak controller] text in
      guard text != DownloadViewController.loading else { return }
      waiting?.cancel()
      print("requests sent: \(download.requestCount.value)")

      print("--- Downloading again, offline ---")
      download.start(chunks: 4, failing: true) { [weak controller] in
        if let controller {
          let hops = controller.progress?.mainQueueHopCount ?? 0
          let redraws = controller.progressView.redraws
          print("--- Done ---")
          print("progress view: \(redraws) redraws, \(hops) main-queue hops")
        }
        closeScreen(showing: download)
        print("screen deallocated: \(controller == nil)")
        exit(0)
      }
    }
  }
}

/// Closes the screen and prints what is left observing the model.
@MainActor func closeScreen(showing download: Download) {
  print("--- The screen is closed ---")
  presentedScreen = nil
  printObservers(of: download)
  // A drive owned by a view keeps its driver, and the driver's registration, until the driver
  // notices that the view is gone: at its next value (see "Driving UI from the main queue").
  print("The model changes once more; nothing prints, and both drivers let go of it:")
  download.progress.value = 0
  download.status.value = .success("Closed")
  printObservers(of: download)
}

/// Prints how many registrations can still run on each observable of `download`.
@MainActor func printObservers(of download: Download) {
  let observers = [
    download.progress.observerCount, download.status.observerCount,
    download.requestCount.observerCount,
  ]
  print("observers of progress, status and requests: \(observers)")
}

run()
dispatchMain()

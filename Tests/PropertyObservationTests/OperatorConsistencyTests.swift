import PropertyObservation
import TestSupport
import Testing

/// The new operators inherit the derived machinery's consistency: in a diamond they publish only
/// combinations that existed, and a transaction reaches them as one change.
@Suite("Operator consistency")
struct OperatorConsistencyTests {
  @Test func variadicCombineLatestInADiamondPublishesOnlyCombinationsThatExisted() {
    let a = Observable(1)
    let combined = combineLatest(a, a.map { $0 * 10 }, a.map { "\($0)" })
    let log = RecordingLog<String>()
    let token = combined.observe { value, _ in log.append("\(value.0) \(value.1) \(value.2)") }
    a.value = 2
    a.value = 3
    #expect(log.events == ["2 20 2", "3 30 3"])
    token.cancel()
  }

  @Test func arrayCombineLatestInADiamondPublishesOnlyArraysThatExisted() {
    let a = Observable(1)
    let combined = combineLatest([a, a.map { $0 * 10 }, a.map { $0 * 100 }])
    let log = RecordingLog<[Int]>()
    let token = combined.observe { values, _ in log.append(values) }
    a.value = 2
    #expect(log.events == [[2, 20, 200]])
    token.cancel()
  }

  @Test func aFilterInADiamondIsCombinedWithItsOwnSourcesValue() {
    let a = Observable(2)
    let combined = a.combineLatest(a.filter(initial: 0) { $0 % 2 == 0 })
    let log = RecordingLog<String>()
    let token = combined.observe { pair, _ in log.append("\(pair.0) \(pair.1)") }
    a.value = 3  // rejected: the filter keeps 2
    a.value = 4
    #expect(log.events == ["3 2", "4 4"])
    token.cancel()
  }

  @Test func aTransactionReachesAFilterAsOneChange() {
    let source = Observable(0)
    let even = source.filter(initial: 0) { $0 % 2 == 0 }
    let log = RecordingLog<Int>()
    let token = even.observe { value, _ in log.append(value) }
    withObservationTransaction {
      source.value = 2
      source.value = 3
      source.value = 4
    }
    #expect(log.events == [4])
    token.cancel()
  }

  @Test func aTransactionThatSwitchesAndSetsTheNewInnerPublishesItsFinalValueOnce() {
    let names = [Observable("Ray"), Observable("Ada")]
    let selection = Observable(0)
    let selectedName = selection.flatMapLatest { names[$0] }
    let log = RecordingLog<String>()
    let token = selectedName.observe { name, _ in log.append(name) }
    withObservationTransaction {
      selection.value = 1
      names[1].value = "Ada L."
      names[0].value = "Raymond"
    }
    #expect(log.events == ["Ada L."])
    #expect(names.map(\.observerCount) == [0, 1])
    token.cancel()
  }

  @Test func aTransactionThatSetsTheSelectedInnerAndSwitchesAwayPublishesTheNewSelectionOnce() {
    let names = [Observable("Ray"), Observable("Ada")]
    let selection = Observable(0)
    let selectedName = selection.flatMapLatest { names[$0] }
    let log = RecordingLog<String>()
    let token = selectedName.observe { name, _ in log.append(name) }
    withObservationTransaction {
      names[0].value = "Raymond"
      selection.value = 1
    }
    #expect(log.events == ["Ada"])
    token.cancel()
  }

  @Test func flatMapLatestOfADeeperObservableOfTheSameSourcePublishesOnlyItsNewValue() {
    let a = Observable(1)
    let hundreds = a.map { $0 * 10 }.map { $0 * 10 }
    let selected = a.flatMapLatest { _ in hundreds }
    let log = RecordingLog<Int>()
    let token = selected.observe { value, _ in log.append(value) }
    a.value = 2
    a.value = 3
    #expect(log.events == [200, 300])
    token.cancel()
  }

  @Test func flatMapLatestToAnObservableBuiltOnAValueDerivedFromTheSameSourceIsSeededFresh() {
    let a = Observable(1)
    let tens = a.map { $0 * 10 }
    let selected = a.flatMapLatest { _ in tens.map { $0 + 1 } }
    let log = RecordingLog<Int>()
    let token = selected.observe { value, _ in log.append(value) }
    a.value = 2
    a.value = 3
    #expect(log.events == [21, 31])
    token.cancel()
  }

  @Test func aTransactionThatSetsBothSidesOfAConvertingBindingLeavesThemAgreeing() {
    let model = Observable(1)
    let field = Observable("")
    let binding = model.bindBidirectionally(to: field, forward: { "\($0)" }, backward: { Int($0) })
    withObservationTransaction {
      field.value = "5"
      model.value = 7
    }
    // Whichever round runs first, the two sides end up agreeing.
    #expect(field.value == String(model.value))
    withExtendedLifetime(binding) {}
  }
}

import Foundation
import PropertyObservation
import TestSupport
import Testing

/// A model class written the drop-in way: synthesized `Codable`, observable properties.
private final class Player: Codable {
  @Observed var name = "Ray"
  @Observed var scores: [Int] = []
  @Observed var nickname: String? = nil
}

@Suite("The @Observed property wrapper")
struct ObservedTests {
  @Test func wrappedValueReadsAndSetsTheProjectedObservable() {
    let player = Player()
    #expect(player.$name.value == "Ray")
    player.name = "Ada"
    #expect(player.$name.value == "Ada")
    player.$name.value = "Grace"
    #expect(player.name == "Grace")
  }

  @Test func projectedValueKeepsItsIdentity() {
    let player = Player()
    let first = player.$scores
    player.scores = [1]
    player.scores.append(2)
    #expect(first === player.$scores)
    #expect(first.value == [1, 2])
  }

  @Test func settingThePropertyNotifiesObserversInOrder() {
    let player = Player()
    let log = RecordingLog<String>()
    let token = player.$name.observe(options: [.initial, .new]) { name, _ in log.append(name) }
    player.name = "Ada"
    player.name += "!"
    #expect(log.events == ["Ray", "Ada", "Ada!"])
    token.cancel()
  }

  @MainActor @Test func propertyCanBeBoundAndDerived() {
    let player = Player()
    let label = FakeLabel()
    player.$scores.map { "\($0.reduce(0, +)) points" }.bind(to: label, \.text)
    player.scores.append(10)
    player.scores.append(5)
    #expect(label.log.events == ["0 points", "10 points", "15 points"])
  }

  @Test func modelWithObservedPropertiesRoundTripsThroughJSON() throws {
    let player = Player()
    player.name = "Ada"
    player.scores = [3, 1]
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let data = try encoder.encode(player)
    #expect(String(decoding: data, as: UTF8.self) == #"{"name":"Ada","scores":[3,1]}"#)

    let restored = try JSONDecoder().decode(Player.self, from: data)
    #expect(restored.name == "Ada")
    #expect(restored.scores == [3, 1])
    #expect(restored.nickname == nil)
    #expect(restored.$name !== player.$name)
  }

  @Test func optionalPropertiesAreOmittedWhenNilAndMayBeMissing() throws {
    let player = try JSONDecoder().decode(
      Player.self, from: Data(#"{"name":"Bo","scores":[]}"#.utf8))
    #expect(player.nickname == nil)
    player.nickname = "B"
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let data = try encoder.encode(player)
    #expect(String(decoding: data, as: UTF8.self) == #"{"name":"Bo","nickname":"B","scores":[]}"#)
  }

  @Test func wrapperEncodesJustItsValue() throws {
    let data = try JSONEncoder().encode([Observed(wrappedValue: 7), Observed(wrappedValue: 8)])
    #expect(String(decoding: data, as: UTF8.self) == "[7,8]")
    let decoded = try JSONDecoder().decode([Observed<Int>].self, from: data)
    #expect(decoded.map(\.wrappedValue) == [7, 8])
  }

  @Test func wrapperIsEquatableAndHashableByCurrentValue() {
    let one = Observed(wrappedValue: "a")
    let other = Observed(wrappedValue: "b")
    #expect(one != other)
    other.wrappedValue = "a"
    #expect(one == other)
    #expect(Set([one, other]).count == 1)
  }

  @Test func wrapperIsSendableWhenItsValueIs() async {
    let counter = Observed(wrappedValue: 0)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<4 {
        group.addTask { counter.projectedValue.update { $0 += 1 } }
      }
    }
    #expect(counter.wrappedValue == 4)
  }
}

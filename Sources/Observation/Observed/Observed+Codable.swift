// `Codable` for `@Observed`: the wrapper encodes as its bare value, so a model class keeps its
// synthesized conformance and its JSON looks as if the properties were plain ones.

extension Observed: Encodable where Value: Encodable {
  /// Encodes the current value alone, in a single-value container.
  ///
  /// - Parameter encoder: The encoder to write to.
  /// - Throws: The encoder's error if it cannot encode the value.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(wrappedValue)
  }
}

extension Observed: Decodable where Value: Decodable {
  /// Creates the wrapper from a value encoded by ``encode(to:)``.
  ///
  /// - Parameter decoder: The decoder to read from.
  /// - Throws: The decoder's error if the data does not hold a `Value`.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    self.init(wrappedValue: try container.decode(Value.self))
  }
}

extension KeyedEncodingContainer {
  /// Encodes an optional `@Observed` property like a plain optional one: nothing when it is
  /// `nil`.
  ///
  /// Synthesized `Encodable` conformances call this overload for `@Observed var x: T?`
  /// properties, so a `nil` value leaves its key out instead of writing `null`.
  ///
  /// - Parameters:
  ///   - value: The wrapper to encode.
  ///   - key: The key to encode it under.
  /// - Throws: The encoder's error if it cannot encode the value.
  public mutating func encode<Wrapped: Encodable>(
    _ value: Observed<Wrapped?>,
    forKey key: Key
  ) throws {
    try encodeIfPresent(value.wrappedValue, forKey: key)
  }
}

extension KeyedDecodingContainer {
  /// Decodes an optional `@Observed` property like a plain optional one: a missing key or
  /// `null` gives `nil`.
  ///
  /// Synthesized `Decodable` conformances call this overload for `@Observed var x: T?`
  /// properties, so data saved before the property existed still decodes.
  ///
  /// - Parameters:
  ///   - type: The wrapper type to decode.
  ///   - key: The key the value is under.
  /// - Returns: A wrapper holding the decoded value, or `nil`.
  /// - Throws: The decoder's error if the key holds something other than a `Wrapped`.
  public func decode<Wrapped: Decodable>(
    _ type: Observed<Wrapped?>.Type,
    forKey key: Key
  ) throws -> Observed<Wrapped?> {
    Observed(wrappedValue: try decodeIfPresent(Wrapped.self, forKey: key))
  }
}

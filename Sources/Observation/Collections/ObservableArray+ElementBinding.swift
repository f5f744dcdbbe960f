extension ObservableArray where Element: Identifiable {
  /// Keeps one field of the element whose id is `id` and `other` equal: `other` takes the
  /// field's value at once, then a change of either sets the other one, if the values differ.
  ///
  /// The form for editing one element of a list, such as a detail screen's title field:
  ///
  /// ```swift
  /// let titleField = Observable("")
  /// let token = todos.bindBidirectionally(\.title, ofElementWithID: 1, to: titleField)
  /// titleField.value = "Oat milk"  // todos' element 1 is updated: ~[0→0]
  /// ```
  ///
  /// A change of the element that changes the field sets `other`, wherever the element has
  /// moved (see ``ReadOnlyObservableArray/element(withID:)``). A change of `other` sets the field
  /// of the element with `id` as an update of the array (a change set with one update); a value
  /// equal to the field's sets nothing, which is also what keeps a change from echoing back.
  ///
  /// The binding ends when the element is removed (`other` keeps its last value, and its later
  /// changes set nothing), or when the returned token is cancelled or released. It holds the
  /// array and `other` strongly while it lasts.
  ///
  /// > Important: Both sides are set synchronously, on the thread delivering the change, and
  /// > callbacks run in the isolation this call was made from. As for
  /// > ``Observable/bindBidirectionally(to:)-4sxud``, the sides are meant to be set from one thread
  /// > at a time, typically the main thread.
  ///
  /// - Parameters:
  ///   - field: The element's field to bind.
  ///   - id: The id of the element.
  ///   - other: The observable to keep equal to the field.
  ///   - isolation: Where the binding's callbacks run; the caller's isolation by default.
  /// - Returns: The token that owns the binding.
  /// - Complexity: A change of `other` costs O(*n*): it finds the element and edits the array.
  public func bindBidirectionally<Value: Equatable>(
    _ field: WritableKeyPath<Element, Value>,
    ofElementWithID id: Element.ID,
    to other: Observable<Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> ObservationToken {
    let element = self.element(withID: id)
    let isolation = CallbackIsolation(isolation)
    let forward = element.observe(options: [.initial, .new], in: isolation) {
      element, _ in
      guard let value = element?[keyPath: field], other.value != value else { return }
      other.value = value
    }
    return other.observe(options: [.new], in: isolation) { [self] value, _ in
      withExtendedLifetime(forward) {}
      guard let current = element.value?[keyPath: field], current != value else { return }
      setField(field, ofElementWithID: id, to: value)
    }
  }

  /// Sets `field` of the first element with `id` to `value`, unless it is equal already (or no
  /// element has `id`).
  private func setField<Value: Equatable>(
    _ field: WritableKeyPath<Element, Value>, ofElementWithID id: Element.ID, to value: Value
  ) {
    guard elements.contains(where: { $0.id == id && $0[keyPath: field] != value }) else { return }
    edit { editor in
      guard let index = editor.elements.firstIndex(where: { $0.id == id }),
        editor[index][keyPath: field] != value
      else { return }
      editor[index][keyPath: field] = value
    }
  }
}

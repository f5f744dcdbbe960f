// A whole `main.swift` that imports the library: the snippet is the rest of the file.
import PropertyObservation

// snippet: here

import Dispatch

/// Seconds on a monotonic clock: for durations and deadlines, which a change of the wall clock
/// must not stretch.
public func monotonicSeconds() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}

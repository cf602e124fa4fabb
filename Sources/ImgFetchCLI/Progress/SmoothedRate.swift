import Glibc

/// The rate at which a growing count (bytes, or items done) grows: an exponentially weighted
/// mean whose weights fall by `e` every `timeConstant` seconds, so it follows a run that speeds
/// up or slows down without jumping at every burst.
///
/// Samples may come at any interval (a frame every 0.1 s, a plain status line every 10 s); the
/// weight of each depends on the time it covers, not on how often it was taken.
struct SmoothedRate {
    /// Seconds over which an old rate fades to 1/e of its weight.
    let timeConstant: Double
    /// Seconds of samples before the rate counts as known.
    let warmUp: Double

    private var first: (time: Double, value: Double)?
    private var last: (time: Double, value: Double)?
    /// nil until `warmUp` seconds have been sampled.
    private(set) var rate: Double?

    init(timeConstant: Double = 5, warmUp: Double = 2) {
        self.timeConstant = timeConstant
        self.warmUp = warmUp
    }

    /// Samples closer together than this only repeat the last rate: too little time to measure.
    static let minimumInterval = 0.2

    /// Feeds the count's value at `time` (seconds, monotonic) and returns the rate per second,
    /// or nil while it is still unknown.
    @discardableResult
    mutating func sample(_ value: Double, at time: Double) -> Double? {
        guard let first, let last else {
            self.first = (time, value)
            self.last = (time, value)
            return nil
        }
        let elapsed = time - last.time
        guard elapsed >= Self.minimumInterval else { return rate }
        if let rate {
            // A count that went back (a retried item's partial work) is a pause, not negative speed.
            let instant = max(0, value - last.value) / elapsed
            let weight = 1 - exp(-elapsed / timeConstant)
            self.rate = rate + weight * (instant - rate)
        } else if time - first.time >= warmUp {
            // The first estimate is the mean over the warm-up, not one noisy interval.
            rate = max(0, value - first.value) / (time - first.time)
        }
        self.last = (time, value)
        return rate
    }
}

/// How long the rest of the run will take: the work left over the smoothed rate of work done.
///
/// Work is counted in items, and an item in flight counts for the fraction of its body already
/// received. So the estimate moves with the bytes while a few large or slow items hold the count
/// still, instead of growing with the clock as `elapsed / done × left` does.
struct RemainingTimeEstimator {
    private var rate: SmoothedRate

    init(timeConstant: Double = 5, warmUp: Double = 2) {
        rate = SmoothedRate(timeConstant: timeConstant, warmUp: warmUp)
    }

    /// Feeds the work done (items, fractional) out of `total` at `time`; returns the seconds
    /// left, or nil while there is not enough signal: before the warm-up, before any work, or
    /// while the total is still growing (`totalIsFinal` false).
    mutating func estimate(done: Double, total: Int, totalIsFinal: Bool, at time: Double) -> Double? {
        let perSecond = rate.sample(done, at: time)
        guard totalIsFinal else { return nil }
        let left = Double(total) - done
        if left <= 0 { return 0 }
        guard let perSecond, perSecond > 0, done > 0 else { return nil }
        return left / perSecond
    }
}

/// What is left of a run, as the progress model sees it at one moment.
struct RemainingWork {
    /// Items done; an item in flight counts for the fraction of its body received.
    var done: Double
    var total: Int
    /// False while the list is still being read: the total is only a lower bound.
    var totalIsFinal: Bool
    /// Bytes still to come (`ProgressModel.bytesLeft`); nil when nothing can be said of sizes.
    var bytesLeft: Double? = nil
    /// The smoothed byte rate; nil while it is unknown.
    var bytesPerSecond: Double? = nil
    /// Every transfer in flight is waiting for its response or stalled.
    var allIdle = false
}

/// How long the rest of the run will take, from two rates that each miss what the other sees:
/// items (many small images finish at a steady pace whatever their bytes) and bytes (a few large
/// or slow bodies hold the item count still while their bytes come in). The estimate is the
/// larger of the two: a run is done when both its items and its bytes are (without a byte rate,
/// as when the items left come from the cache, the items' estimate alone). It is nil, shown as
/// `--`, when there is no rate to back it: before the warm-up, while the list still grows, and
/// while every running transfer waits or is stalled.
struct RemainingTimeEstimator {
    private var items: SmoothedRate

    init(timeConstant: Double = 5, warmUp: Double = 2) {
        items = SmoothedRate(timeConstant: timeConstant, warmUp: warmUp)
    }

    /// Feeds `work` at `time`; returns the seconds left, or nil when they cannot be backed.
    mutating func estimate(_ work: RemainingWork, at time: Double) -> Double? {
        let perSecond = items.sample(work.done, at: time)
        guard work.totalIsFinal else { return nil }
        let left = Double(work.total) - work.done
        if left <= 0 { return 0 }
        guard !work.allIdle, let perSecond, perSecond > 0, work.done > 0 else { return nil }
        let seconds = left / perSecond
        // Without a byte rate (items that finish from the cache, say), the items' rate alone.
        guard let bytesLeft = work.bytesLeft, bytesLeft > 0, let rate = work.bytesPerSecond, rate >= 1 else { return seconds }
        return max(seconds, bytesLeft / rate)
    }
}

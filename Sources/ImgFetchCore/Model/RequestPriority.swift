/// A list line's `priority=` class: a higher class always starts before a lower one.
public enum RequestPriority: String, Sendable, CaseIterable, Comparable {
    case high, normal, low

    /// 0 for the class that starts first.
    var rankFromHighest: Int {
        switch self {
        case .high: 0
        case .normal: 1
        case .low: 2
        }
    }

    public static func < (lhs: RequestPriority, rhs: RequestPriority) -> Bool { lhs.rankFromHighest > rhs.rankFromHighest }
}

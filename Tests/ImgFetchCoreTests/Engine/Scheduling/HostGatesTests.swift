import XCTest
@testable import ImgFetchCore

final class HostGatesTests: XCTestCase {
    private let host = "http://a.example"
    private let second: UInt64 = 1_000_000_000
    private let refused = DownloadError(.network, "could not connect to a.example port 80: connection refused")

    func testARateSpacesRequestsAfterAFirstOneThatGoesAtOnce() {
        var gates = HostGates(policy: HostGates.Policy(rate: 2))
        XCTAssertEqual(gates.earliestStart(of: host), 0)
        gates.started(host, now: 10 * second)
        XCTAssertEqual(gates.earliestStart(of: host), 10 * second + second / 2)
        // A request started late (the host waited for a connection) spaces the next from its own start.
        gates.started(host, now: 11 * second)
        XCTAssertEqual(gates.earliestStart(of: host), 11 * second + second / 2)
        XCTAssertEqual(gates.earliestStart(of: "http://b.example"), 0, "another host is not held back")
    }

    func testAFractionalRateWaitsSeconds() {
        var gates = HostGates(policy: HostGates.Policy(rate: 0.5))
        gates.started(host, now: 0)
        XCTAssertEqual(gates.earliestStart(of: host), 2 * second)
    }

    func testNoRateHoldsNothingBack() {
        var gates = HostGates(policy: HostGates.Policy())
        gates.started(host, now: 5 * second)
        XCTAssertEqual(gates.earliestStart(of: host), 0)
    }

    func testASlowDownPausesTheHostForRetryAfterCapped() {
        var gates = HostGates(policy: HostGates.Policy(pauseCap: 60))
        let (tripped, paused) = gates.record(.slowDown(status: 429, retryAfter: 3), host: host, now: 0)
        XCTAssertNil(tripped)
        XCTAssertEqual(paused, 3)
        XCTAssertEqual(gates.earliestStart(of: host), 3 * second)
        XCTAssertEqual(gates.paused(now: second).first?.seconds, 2)

        var capped = HostGates(policy: HostGates.Policy(pauseCap: 60))
        XCTAssertEqual(capped.record(.slowDown(status: 503, retryAfter: 60), host: host, now: 0).paused, 60)
    }

    func testRepeated429sDoubleThePauseAndSuccessesHalveIt() {
        var gates = HostGates(policy: HostGates.Policy(pauseCap: 8, basePause: 1, failureLimit: 0))
        var now: UInt64 = 0
        var pauses: [Double] = []
        for _ in 0..<5 {
            let paused = gates.record(.slowDown(status: 429, retryAfter: nil), host: host, now: now).paused!
            pauses.append(paused)
            now += UInt64(paused * 1e9) + 1
        }
        XCTAssertEqual(pauses, [1, 2, 4, 8, 8], "doubled up to the cap")
        _ = gates.record(.served, host: host, now: now)
        _ = gates.record(.served, host: host, now: now)
        XCTAssertEqual(gates.record(.slowDown(status: 429, retryAfter: nil), host: host, now: now).paused, 4,
                       "two successes halved 8 to 2; the next 429 doubles that")
    }

    func testAnswersToRequestsMadeBeforeThePauseDoNotDoubleIt() {
        var gates = HostGates(policy: HostGates.Policy(basePause: 1, failureLimit: 2))
        XCTAssertEqual(gates.record(.slowDown(status: 429, retryAfter: nil), host: host, now: 0).paused, 1)
        // Five more 429s to requests that were in flight when the first came back.
        for _ in 0..<5 {
            let (tripped, paused) = gates.record(.slowDown(status: 429, retryAfter: nil), host: host, now: second / 2)
            XCTAssertNil(paused)
            XCTAssertNil(tripped, "in-flight answers count as one slow-down")
        }
        // Each answer still asks for its own pause from when it came: the last ends 1 s after 0.5 s.
        XCTAssertEqual(gates.earliestStart(of: host), second + second / 2)
    }

    func testAHostThatKeepsAnswering429GivesUp() {
        var gates = HostGates(policy: HostGates.Policy(basePause: 1, failureLimit: 3))
        var now: UInt64 = 0
        var tripped: DownloadError?
        for _ in 0..<3 {
            let answer = gates.record(.slowDown(status: 429, retryAfter: nil), host: host, now: now)
            tripped = answer.tripped
            now += UInt64((answer.paused ?? 0) * 1e9) + 1
        }
        XCTAssertEqual(tripped?.kind, .http)
        XCTAssertTrue(tripped?.message.contains("HTTP 429") == true, tripped?.message ?? "")
        XCTAssertTrue(tripped?.message.contains("3 times in a row") == true, tripped?.message ?? "")
        XCTAssertEqual(gates.failure(of: host), tripped)
    }

    func testTheBreakerTripsAfterConsecutiveConnectionFailuresAndNamesTheLastError() {
        var gates = HostGates(policy: HostGates.Policy(failureLimit: 3))
        XCTAssertNil(gates.record(.connectionFailed(refused), host: host, now: 0).tripped)
        XCTAssertNil(gates.record(.connectionFailed(refused), host: host, now: 0).tripped)
        let tripped = gates.record(.connectionFailed(refused), host: host, now: 0).tripped
        XCTAssertEqual(tripped?.kind, .hostUnreachable)
        XCTAssertEqual(tripped?.message, "host unreachable: 3 connection failures in a row to http://a.example (--host-failures); "
                       + "the last: could not connect to a.example port 80: connection refused")
        XCTAssertEqual(gates.failure(of: host), tripped)
        XCTAssertNil(gates.failure(of: "http://b.example"))
        XCTAssertNil(gates.record(.connectionFailed(refused), host: host, now: 0).tripped, "a breaker trips once")
        XCTAssertEqual(gates.failure(of: host), tripped)
    }

    func testAnyAnswerResetsTheConnectionFailureCount() {
        var gates = HostGates(policy: HostGates.Policy(failureLimit: 2))
        _ = gates.record(.connectionFailed(refused), host: host, now: 0)
        _ = gates.record(.answered, host: host, now: 0)
        XCTAssertNil(gates.record(.connectionFailed(refused), host: host, now: 0).tripped)
        _ = gates.record(.served, host: host, now: 0)
        XCTAssertNil(gates.record(.connectionFailed(refused), host: host, now: 0).tripped)
        XCTAssertNotNil(gates.record(.connectionFailed(refused), host: host, now: 0).tripped)
    }

    func testALimitOfZeroNeverTrips() {
        var gates = HostGates(policy: HostGates.Policy(failureLimit: 0))
        for _ in 0..<100 {
            XCTAssertNil(gates.record(.connectionFailed(refused), host: host, now: 0).tripped)
            XCTAssertNil(gates.record(.slowDown(status: 429, retryAfter: nil), host: host, now: 0).tripped)
        }
    }

    func testManyQuietHostsAreForgotten() {
        var gates = HostGates(policy: HostGates.Policy(rate: 1000))
        for index in 0..<10_000 { gates.started("http://h\(index).example", now: UInt64(index) * second) }
        XCTAssertLessThan(gates.count, 200, "hosts whose spacing is over are swept away")
        XCTAssertGreaterThan(gates.earliestStart(of: "http://h9999.example"), 0, "the latest host is still spaced")
    }
}

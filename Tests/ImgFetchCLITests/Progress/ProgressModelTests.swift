import XCTest
import ImgFetchCore
@testable import ImgFetchCLI

final class ProgressModelTests: XCTestCase {
    // MARK: - Bytes: the bar and the summary agree

    func testCancelledTransfersKeepTheirBytesInTheSummary() {
        let model = ProgressModel(now: 0)
        (1...3).forEach { _ in model.itemQueued() }
        let (a, b, c) = (ProgressItem(), ProgressItem(), ProgressItem())
        model.progress(a, transfer: "http://x/a.jpg", name: "a.jpg", received: 500_000, expected: 1_000_000)
        model.progress(b, transfer: "http://x/b.jpg", name: "b.jpg", received: 200_000, expected: nil)
        var saved = DownloadResult(status: .saved, paths: ["c.jpg"])
        saved.bytes = 4000
        model.finished(c, transfer: "http://x/c.jpg", saved)
        let shown = model.snapshot(now: 1).bytes
        XCTAssertEqual(shown, 704_000)
        let cancelled = DownloadResult(status: .cancelled, error: DownloadError(.cancelled, "cancelled"))
        model.finished(a, transfer: "http://x/a.jpg", cancelled)
        model.finished(b, transfer: "http://x/b.jpg", cancelled)
        XCTAssertEqual(model.summary.bytes, shown, "the summary says what the bar last showed")
        XCTAssertEqual(model.snapshot(now: 2).bytes, shown)
    }

    func testProgressArrivingAfterTheItemFinishedIsIgnored() {
        // Ctrl-C: the engine thread already holds the callbacks when the item is cancelled.
        let model = ProgressModel(now: 0)
        let item = ProgressItem()
        model.progress(item, transfer: "http://x/a.jpg", name: "a.jpg", received: 500, expected: 1000)
        model.finished(item, transfer: "http://x/a.jpg", DownloadResult(status: .cancelled, error: DownloadError(.cancelled, "cancelled")))
        model.progress(item, transfer: "http://x/a.jpg", name: "a.jpg", received: 520, expected: 1000)
        let snapshot = model.snapshot(now: 1)
        XCTAssertEqual(snapshot.bytes, 500)
        XCTAssertEqual(model.summary.bytes, 500)
        XCTAssertEqual(snapshot.active, [], "no ghost row")
    }

    func testBytesAfterTheLastProgressEventAndSharedTransfersCountOnce() {
        let model = ProgressModel(now: 0)
        let (first, second) = (ProgressItem(), ProgressItem())
        model.progress(first, transfer: "http://x/a.jpg", name: "a.jpg", received: 900, expected: 1000)
        model.progress(second, transfer: "http://x/a.jpg", name: "a.jpg", received: 900, expected: 1000)
        var shared = DownloadResult(status: .saved, paths: ["a-1.jpg"])
        shared.bytes = 1000
        shared.coalesced = true
        model.finished(second, transfer: "http://x/a.jpg", shared)
        var own = shared
        own.coalesced = false
        model.finished(first, transfer: "http://x/a.jpg", own)
        XCTAssertEqual(model.summary.bytes, 1000)
        XCTAssertEqual(model.snapshot(now: 1).bytes, 1000)
    }

    func testARetryThatStartsAgainCountsWhatItReceivesAgain() {
        // The engine reports no zero when a retry starts: the next event is its first chunk.
        let model = ProgressModel(now: 0)
        let item = ProgressItem()
        for received: Int64 in [600, 400, 1000] {
            model.progress(item, transfer: "http://x/a.jpg", name: "a.jpg", received: received, expected: 1000)
        }
        XCTAssertEqual(model.snapshot(now: 1).bytes, 1600, "the bytes crossed the network twice")
    }

    func testWithoutProgressEventsTheSummaryCountsResults() {
        let model = ProgressModel(now: 0)
        var saved = DownloadResult(status: .saved, paths: ["a.jpg"])
        saved.bytes = 1234
        model.finished(nil, transfer: "http://x/a.jpg", saved)
        XCTAssertEqual(model.summary.bytes, 1234)
    }

    // MARK: - Rate

    func testRateIsTheRunAverageUntilTheSmoothedOneIsKnown() {
        let model = ProgressModel(now: 10)
        let item = ProgressItem()
        model.progress(item, transfer: "http://x/a.jpg", name: "a.jpg", received: 1000, expected: nil)
        let early = model.snapshot(now: 11)
        XCTAssertEqual(early.bytesPerSecond, 1000, accuracy: 0.001, "not 0 B/s while bytes arrive")
        XCTAssertEqual(early.averageBytesPerSecond, 1000, accuracy: 0.001)
        model.progress(item, transfer: "http://x/a.jpg", name: "a.jpg", received: 5000, expected: nil)
        XCTAssertEqual(model.snapshot(now: 12).averageBytesPerSecond, 2500, accuracy: 0.001)
    }

    func testPlainStatusLineShowsTheAverageRate() {
        let snapshot = ProgressSnapshot(done: 3, total: 12, listComplete: true, saved: 2, skipped: 0, failed: 1,
                                        bytes: 3 << 20, bytesPerSecond: 0, averageBytesPerSecond: 300 * 1024)
        XCTAssertEqual(PlainStatusDisplay.statusLine(snapshot, at: "2026-12-03T18:00:10Z"),
                       "imgfetch: 2026-12-03T18:00:10Z 3/12 items: 2 saved, 0 skipped, 1 failed; 3.0 MiB, 300.0 KiB/s on average, ETA --\n")
        var paused = snapshot
        paused.pausedHosts = [PausedHost(host: "https://a.example", secondsLeft: 11.2), PausedHost(host: "https://b.example", secondsLeft: 2)]
        paused.etaSeconds = 42
        XCTAssertEqual(PlainStatusDisplay.statusLine(paused, at: "2026-12-03T18:00:10Z"),
                       "imgfetch: 2026-12-03T18:00:10Z 3/12 items: 2 saved, 0 skipped, 1 failed; 3.0 MiB, 300.0 KiB/s on average, ETA 0:42; "
                       + "2 hosts paused after 429/503 (longest 12 s more)\n")
    }

    func testTimestampsAreUTCInISO8601() {
        XCTAssertEqual(Timestamp.utc(0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(Timestamp.utc(1_796_320_810), "2026-12-03T18:00:10Z")
    }

    func testTheStartLineRedactsSecrets() {
        let arguments = ["urls.txt", "-u", "bob:s3cret", "--header=X-Api-Key: 123", "-HCookie: a=b",
                         "--user=al:pw", "https://u:pw@example.com/a b.jpg", "-o", "pics"]
        XCTAssertEqual(SecretRedactor.shellWords(SecretRedactor.redactArguments(arguments)),
                       "urls.txt -u 'bob:***' '--header=X-Api-Key: ***' '-HCookie: ***' '--user=al:***' "
                           + "'https://u:***@example.com/a b.jpg' -o pics")
        XCTAssertEqual(SecretRedactor.shellWords(["it's"]), #"'it'\''s'"#)
        // Bundles, as the parser reads them; after `--`, lists; a value that only looks like -u.
        XCTAssertEqual(SecretRedactor.redactArguments(["-qu", "bob:pw", "-qubob:pw", "-vHAuthorization: Bearer x", "-j4",
                                                       "-o", "-u", "plain", "--", "-u"]),
                       ["-qu", "bob:***", "-qubob:***", "-vHAuthorization: ***", "-j4", "-o", "-u", "plain", "--", "-u"])
        XCTAssertEqual(SecretRedactor.redactArguments(["-u"]), ["-u"], "a value missing at the end")
    }

    func testTheSecretsToMaskInArgvAreTheRedactedBytes() {
        let arguments = ["urls.txt", "-u", "bob:s3cret", "--header=X-Api-Key: 123", "-qubob:pw",
                         "https://u:pw@example.com/a.jpg", "-u", "nopassword", "-o", "pics"]
        let masked = SecretRedactor.secretRanges(arguments).reduce(into: arguments.map { Array($0.utf8) }) { bytes, secret in
            for index in secret.bytes { bytes[secret.argument][index] = UInt8(ascii: "*") }
        }.map { String(decoding: $0, as: UTF8.self) }
        XCTAssertEqual(masked, ["urls.txt", "-u", "bob:******", "--header=X-Api-Key: ***", "-qubob:**",
                                "https://u:**@example.com/a.jpg", "-u", "nopassword", "-o", "pics"])
    }

    func testSmoothedRateFollowsAChangeWithoutJumping() {
        var rate = SmoothedRate(timeConstant: 5, warmUp: 2)
        var bytes = 0.0
        var time = 0.0
        XCTAssertNil(rate.sample(bytes, at: time))
        // 1000 B/s in bursts: a whole second's bytes arrive every other frame pair.
        while time < 10 {
            time += 0.1
            if Int((time * 10).rounded()) % 10 == 0 { bytes += 1000 }
            if let value = rate.sample(bytes, at: time), time > 3 {
                XCTAssertEqual(value, 1000, accuracy: 450, "at \(time) s")
            }
        }
        // The rate doubles: after three time constants the estimate is within 5 % of it.
        while time < 25 {
            time += 0.1
            bytes += 200
            rate.sample(bytes, at: time)
        }
        XCTAssertEqual(try XCTUnwrap(rate.rate), 2000, accuracy: 100)
    }

    // MARK: - ETA with a scripted rate

    func testETAIsUnknownUntilThereIsSignalThenStaysNearTheTruth() {
        var estimator = RemainingTimeEstimator()
        // 14 items at one item every 0.5 s, each body arriving evenly while it runs, 4 at a time.
        let total = 14
        let perItem = 2.0
        let concurrency = 4
        let runtime = Double(total) / Double(concurrency) * perItem
        var time = 0.0
        var estimates: [(time: Double, eta: Double)] = []
        while time < runtime {
            let started = min(Double(total), (time / perItem).rounded(.down) * Double(concurrency) + Double(concurrency))
            let done = min(Double(total), (time / perItem).rounded(.down) * Double(concurrency))
            let partial = (started - done) * (time.truncatingRemainder(dividingBy: perItem) / perItem)
            let eta = estimator.estimate(RemainingWork(done: done + partial, total: total, totalIsFinal: true), at: time)
            if time < 2 { XCTAssertNil(eta, "no estimate from less than the warm-up, at \(time) s") }
            if let eta { estimates.append((time, eta)) }
            time += 0.1
        }
        XCTAssertFalse(estimates.isEmpty)
        for (time, eta) in estimates {
            let truth = runtime - time
            // Within 30 % of the true time left (or a second, near the end), never climbing away.
            XCTAssertEqual(eta, truth, accuracy: max(1, 0.3 * truth), "at \(time) s")
        }
    }

    func testETAWhileTheCounterStandsStillFollowsTheBytes() {
        // The issue's run: 2/14 done for seconds while a few big bodies arrive. The estimate
        // must not climb with the clock.
        var estimator = RemainingTimeEstimator()
        var time = 0.0
        var previous: Double?
        var climbs = 0
        while time < 6 {
            // 12 items in flight, all at the same pace, finishing together at 7.5 s.
            let partial = 12 * min(time / 7.5, 1)
            if let eta = estimator.estimate(RemainingWork(done: 2 + partial, total: 14, totalIsFinal: true), at: time) {
                XCTAssertEqual(eta, 7.5 - time, accuracy: max(0.5, 0.3 * (7.5 - time)), "at \(time) s")
                if let previous, eta > previous + 0.05 { climbs += 1 }
                previous = eta
            }
            time += 0.1
        }
        XCTAssertEqual(climbs, 0)
        XCTAssertNotNil(previous)
    }

    func testTheModelsETACountsTheBodiesOfRunningItems() {
        // Four items, none finished, each body received at 10 % a second: done in 10 s.
        let model = ProgressModel(now: 0)
        (1...4).forEach { _ in model.itemQueued() }
        model.listFinished()
        let items = (1...4).map { _ in ProgressItem() }
        var eta: Double?
        for tenth in 0...50 {
            let time = Double(tenth) / 10
            for (index, item) in items.enumerated() {
                model.progress(item, transfer: "http://x/\(index).jpg", name: "\(index).jpg",
                               received: Int64(time * 100), expected: 1000, now: time)
            }
            eta = model.snapshot(now: time).etaSeconds
            if time < 2 { XCTAssertNil(eta) }
        }
        XCTAssertEqual(try XCTUnwrap(eta), 5, accuracy: 0.5, "the counter stood at 0/4 the whole time")
    }

    /// The issue's run: 30 small items in the first two seconds, then 20 of 1 MB at 50 KB/s each, 16
    /// at a time. The item rate, still high from the small ones, says a few seconds; with the bytes
    /// the estimate follows them.
    func testETAFollowsTheBytesWhenLargeSlowItemsFollowFastOnes() {
        let model = ProgressModel(now: 0)
        (1...50).forEach { _ in model.itemQueued() }
        model.listFinished()
        var itemsOnly = RemainingTimeEstimator()
        var small = 0
        let slow = (0..<16).map { _ in ProgressItem() }
        var eta: Double?
        var itemEstimate: Double?
        for tenth in 0...40 {
            let time = Double(tenth) / 10
            while small < 30 && Double(small) < time * 15 {
                let item = ProgressItem()
                model.progress(item, transfer: "http://x/small\(small)", name: "s", received: 100_000, expected: 100_000, now: time)
                model.finished(item, transfer: "http://x/small\(small)", Self.saved(bytes: 100_000))
                small += 1
            }
            var partial = 0.0
            if time >= 2 {
                for (index, item) in slow.enumerated() {
                    let received = Int64((time - 2) * 50_000)
                    model.progress(item, transfer: "http://x/big\(index)", name: "b", received: received, expected: 1_000_000, now: time)
                    partial += Double(received) / 1_000_000
                }
            }
            eta = model.snapshot(now: time).etaSeconds
            itemEstimate = itemsOnly.estimate(RemainingWork(done: Double(small) + partial, total: 50, totalIsFinal: true), at: time)
        }
        // At 4 s: 16 bodies at 100 KB of 1 MB and 4 not started, 800 KB/s in all: about 34 s left,
        // since the last 4 run alone. Both estimates assume today's rate holds, but the bytes' is
        // the closer: the byte rate still carries some of the small items' speed.
        XCTAssertLessThan(itemEstimate ?? 99, 8, "the item rate alone is still the small items'")
        XCTAssertGreaterThan(eta ?? 0, 11, "the bytes left back a longer estimate")
        XCTAssertLessThan(eta ?? 99, 40)
    }

    private static func saved(bytes: Int64) -> DownloadResult {
        var result = DownloadResult(status: .saved, paths: ["x.jpg"])
        result.bytes = bytes
        return result
    }

    func testETAIsUnknownWhileEveryTransferWaits() {
        let model = ProgressModel(now: 0)
        (1...4).forEach { _ in model.itemQueued() }
        model.listFinished()
        // Two items arrive over the first 2.4 s; then two requests get no response.
        let first = (0..<2).map { _ in ProgressItem() }
        for tenth in 0...24 {
            let time = Double(tenth) / 10
            for (index, item) in first.enumerated() where !(index == 0 && time > 1.2) {
                let received = Int64(min(1, time / (1.2 * Double(index + 1))) * 5000)
                model.progress(item, transfer: "http://x/\(index)", name: "a", received: received, expected: 5000, now: time)
            }
            if tenth == 12 { model.finished(first[0], transfer: "http://x/0", Self.saved(bytes: 5000)) }
            _ = model.snapshot(now: time)
        }
        model.finished(first[1], transfer: "http://x/1", Self.saved(bytes: 5000))
        XCTAssertNotNil(model.snapshot(now: 2.5).etaSeconds, "two done, two to come, rates known")
        let hanging = (0..<2).map { _ in ProgressItem() }
        for (index, item) in hanging.enumerated() {
            model.progress(item, transfer: "http://x/hang\(index)", name: "hang\(index).jpg", received: 0, expected: nil, now: 2.5)
        }
        for tenth in 26...125 { _ = model.snapshot(now: Double(tenth) / 10) }
        let snapshot = model.snapshot(now: 12.5)
        XCTAssertNil(snapshot.etaSeconds, "two transfers that wait for 10 s back no estimate")
        XCTAssertEqual(snapshot.active.map(\.note), ["waiting 10s", "waiting 10s"])
    }

    func testTransfersAreMarkedWaitingThenStalled() {
        var transfer = ActiveTransfer(name: "a.jpg", received: 0, expected: nil, idleSeconds: 0.5)
        XCTAssertNil(transfer.note, "a fresh request")
        transfer.idleSeconds = 7.2
        XCTAssertEqual(transfer.note, "waiting 7s")
        transfer.received = 1000
        transfer.idleSeconds = 4
        XCTAssertNil(transfer.note, "a body that moved 4 s ago")
        transfer.idleSeconds = 75
        XCTAssertEqual(transfer.note, "stalled 1m15s")
        XCTAssertEqual(ProgressFields.age(3725), "1h02m")
    }

    func testAWorkCountThatGoesBackIsAPauseNotNegativeSpeed() {
        var rate = SmoothedRate(timeConstant: 5, warmUp: 1)
        rate.sample(0, at: 0)
        rate.sample(10, at: 1)
        XCTAssertEqual(rate.sample(1, at: 1.5) ?? -1, 10 * exp(-0.1), accuracy: 0.001)
    }

    func testETAIsUnknownWhileTheListGrowsAndZeroWhenDone() {
        var estimator = RemainingTimeEstimator(timeConstant: 5, warmUp: 0.5)
        XCTAssertNil(estimator.estimate(RemainingWork(done: 0, total: 10, totalIsFinal: false), at: 0))
        XCTAssertNil(estimator.estimate(RemainingWork(done: 5, total: 10, totalIsFinal: false), at: 1))
        XCTAssertNotNil(estimator.estimate(RemainingWork(done: 6, total: 10, totalIsFinal: true), at: 2))
        XCTAssertEqual(estimator.estimate(RemainingWork(done: 10, total: 10, totalIsFinal: true), at: 3), 0)
    }

    func testETAOfAStalledRunIsUnknownNotInfinite() {
        var estimator = RemainingTimeEstimator(timeConstant: 1, warmUp: 1)
        XCTAssertNil(estimator.estimate(RemainingWork(done: 0, total: 10, totalIsFinal: true), at: 0))
        XCTAssertNil(estimator.estimate(RemainingWork(done: 0, total: 10, totalIsFinal: true), at: 2), "no work yet")
    }
}

final class PausedHostProgressTests: XCTestCase {
    func testPausedHostsShowLongestFirstAndDropOnceTheirPauseEnds() {
        let model = ProgressModel(now: 0)
        model.hostPaused("https://a.example", seconds: 3, now: 10)
        model.hostPaused("https://b.example", seconds: 8, now: 10)
        XCTAssertEqual(model.snapshot(now: 11).pausedHosts,
                       [PausedHost(host: "https://b.example", secondsLeft: 7), PausedHost(host: "https://a.example", secondsLeft: 2)])
        XCTAssertEqual(model.snapshot(now: 13.5).pausedHosts.map(\.host), ["https://b.example"])
        XCTAssertEqual(model.snapshot(now: 18).pausedHosts, [])
    }

    func testThePausedLineFitsTheWidthAndCountsWhatDidNotFit() {
        let formatter = ProgressLineFormatter(columns: 70, colors: false, maxRows: 5, spinnerPhase: 0)
        let hosts = (1...6).map { PausedHost(host: "https://cdn-\($0).example.org", secondsLeft: Double(60 - $0)) }
        let line = formatter.pausedLine(hosts)
        XCTAssertEqual(line.count, 1)
        XCTAssertLessThanOrEqual(TerminalText.visibleWidth(line[0]), 69)
        XCTAssertTrue(line[0].contains("paused (429/503): https://cdn-1.example.org 59 s"), line[0])
        XCTAssertTrue(line[0].contains("more"), line[0])
        XCTAssertEqual(formatter.pausedLine([]), [])
        let hostile = formatter.pausedLine([PausedHost(host: "https://evil\u{1B}[2J.example", secondsLeft: 1)])
        XCTAssertFalse(hostile[0].contains("\u{1B}[2J"), "escape sequences in a host reach the terminal")
    }
}

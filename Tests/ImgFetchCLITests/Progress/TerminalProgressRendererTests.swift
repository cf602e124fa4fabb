import Synchronization
import XCTest
@testable import ImgFetchCLI

final class TerminalProgressRendererTests: XCTestCase {
    private let sink = BufferSink()

    private func renderer(columns: Int = 60, colors: Bool = false, maxRows: Int = 6) -> TerminalProgressRenderer {
        TerminalProgressRenderer(sink: sink, columns: { columns }, colors: colors, maxRows: maxRows)
    }

    /// What the sink received since the last call: one frame, message or final erase.
    private var consumed = 0
    private func newOutput() -> String {
        let text = sink.text
        let output = String(text.dropFirst(consumed))
        consumed = text.count
        return output
    }

    private func snapshot(_ active: [ActiveTransfer] = [], done: Int = 1, total: Int = 4) -> ProgressSnapshot {
        ProgressSnapshot(done: done, total: total, listComplete: true, saved: done, skipped: 0, failed: 0,
                         bytes: 2048, bytesPerSecond: 1024, etaSeconds: 3, active: active)
    }

    private func transfers(_ count: Int) -> [ActiveTransfer] {
        (1...count).map { ActiveTransfer(name: "file\($0).jpg", received: 100, expected: 1000) }
    }

    // MARK: - Exact frames

    func testFirstFrameThenSecondFrameMovesUpAndOverwrites() {
        let renderer = renderer(columns: 60)
        renderer.render(snapshot([ActiveTransfer(name: "cat.jpg", received: 512, expected: 1024)]))
        XCTAssertEqual(newOutput(),
            "[=====>              ] 1/4  1 saved     1.0 KiB/s  ETA 0:03\u{1B}[K\n"
            + "  cat.jpg [==========>         ]  50%  512 B / 1.0 KiB\u{1B}[K\n")

        renderer.render(snapshot([ActiveTransfer(name: "cat.jpg", received: 1024, expected: 1024)], done: 2))
        XCTAssertEqual(newOutput(),
            "\r\u{1B}[2A"
            + "[==========>         ] 2/4  2 saved     1.0 KiB/s  ETA 0:03\u{1B}[K\n"
            + "  cat.jpg [====================] 100%  1.0 KiB / 1.0 KiB\u{1B}[K\n"
            + "\u{1B}[J")
    }

    func testNothingIsWrittenBeforeTheFirstRender() {
        let renderer = renderer()
        XCTAssertEqual(sink.text, "")
        renderer.printAbove("imgfetch: warning: slow server")
        XCTAssertEqual(newOutput(), "imgfetch: warning: slow server\n")
        renderer.finish(summary: nil)
        XCTAssertEqual(newOutput(), "")
    }

    // MARK: - Width

    func testNoLineReachesTheLastColumnAtAnyWidth() {
        let busy = ProgressSnapshot(
            done: 123_456, total: 999_999, listComplete: false, saved: 120_000, skipped: 3_000, failed: 456,
            bytes: 5 << 40, bytesPerSecond: 999 * 1024 * 1024, etaSeconds: 359_999,
            active: [
                ActiveTransfer(name: String(repeating: "very-long-name-", count: 20) + "end.jpg", received: 3 << 30, expected: 4 << 30),
                ActiveTransfer(name: "写真写真写真写真写真写真写真写真写真写真.jpg", received: 10, expected: 1000),
                ActiveTransfer(name: "stream.png", received: 123_456_789, expected: nil),
                ActiveTransfer(name: "tab\there\u{1B}[2J.jpg", received: 0, expected: 0),
                ActiveTransfer(name: "", received: 1, expected: 2),
                ActiveTransfer(name: "more.jpg", received: 1, expected: 2),
                ActiveTransfer(name: "hidden.jpg", received: 1, expected: 2),
                ActiveTransfer(name: "waiting.jpg", received: 0, expected: nil, idleSeconds: 4000),
                ActiveTransfer(name: "stalled.jpg", received: 10, expected: 20, idleSeconds: 4000),
            ])
        for columns in [1, 5, 12, 20, 40, 80, 200] {
            for colors in [false, true] {
                let sink = BufferSink()
                let renderer = TerminalProgressRenderer(sink: sink, columns: { columns }, colors: colors)
                var screen = ScreenEmulator(columns: columns)
                for _ in 0..<3 { renderer.render(busy) }
                screen.feed(sink.text)
                XCTAssertFalse(screen.reachedLastColumn, "width \(columns), colors \(colors):\n\(screen.lines.joined(separator: "\n"))")
                XCTAssertEqual(screen.unknownSequences, [])
                let frame = ProgressLineFormatter(columns: columns, colors: colors, maxRows: 6, spinnerPhase: 0).lines(for: busy)
                for line in frame {
                    XCTAssertLessThanOrEqual(TerminalText.visibleWidth(line), max(columns - 1, 0), "width \(columns): \(line)")
                }
                if columns >= 12 { XCTAssertEqual(screen.lines.count, frame.count, "width \(columns)") }
            }
        }
    }

    func testLongNameIsCutInTheMiddleAndKeepsItsBar() {
        let name = "a-very-long-photo-name-" + String(repeating: "x", count: 200) + "-0042.jpg"
        for columns in [60, 80, 200] {
            let lines = ProgressLineFormatter(columns: columns, colors: false, maxRows: 6, spinnerPhase: 0)
                .lines(for: snapshot([ActiveTransfer(name: name, received: 1, expected: 4)]))
            let row = lines[1]
            XCTAssertTrue(row.hasPrefix("  a-very-long"), row)
            XCTAssertTrue(row.contains("…"), row)
            XCTAssertTrue(row.contains("-0042.jpg ["), row)
            XCTAssertTrue(row.contains("]  25%  1 B / 4 B"), row)
            XCTAssertLessThanOrEqual(TerminalText.visibleWidth(row), columns - 1)
        }
    }

    /// A transfer with no response yet says how long it has waited; a body that stopped says so.
    func testWaitingAndStalledTransfersAreMarked() {
        let active = [ActiveTransfer(name: "cat.jpg", received: 50, expected: 100),
                      ActiveTransfer(name: "hang.jpg", received: 0, expected: nil, idleSeconds: 7.4),
                      ActiveTransfer(name: "drip.jpg", received: 30, expected: 100, idleSeconds: 12)]
        let lines = ProgressLineFormatter(columns: 80, colors: false, maxRows: 6, spinnerPhase: 0).lines(for: snapshot(active))
        XCTAssertEqual(lines[1], "  cat.jpg  [==============>             ]  50%  50 B / 100 B")
        XCTAssertEqual(lines[2], "  hang.jpg |  waiting 7s")
        XCTAssertEqual(lines[3], "  drip.jpg [========>                   ]  30%  30 B / 100 B  stalled 12s")
        for columns in [60, 70] {
            for line in ProgressLineFormatter(columns: columns, colors: true, maxRows: 6, spinnerPhase: 0).lines(for: snapshot(active)) {
                XCTAssertLessThanOrEqual(TerminalText.visibleWidth(line), columns - 1, line)
            }
        }
    }

    func testNarrowTerminalsDropRowBarsThenRows() {
        let active = [ActiveTransfer(name: "cat.jpg", received: 50, expected: 100)]
        func lines(_ columns: Int) -> [String] {
            ProgressLineFormatter(columns: columns, colors: false, maxRows: 6, spinnerPhase: 0).lines(for: snapshot(active))
        }
        XCTAssertEqual(lines(80)[1], "  cat.jpg [===============>              ]  50%  50 B / 100 B")
        XCTAssertEqual(lines(60)[1], "  cat.jpg [===========>          ]  50%  50 B / 100 B")
        XCTAssertEqual(lines(59), ["[====>              ] 1/4  1 saved     1.0 KiB/s  ETA 0:03"], "below 60 columns, no rows")
        XCTAssertEqual(lines(40), ["[===>          ] 1/4  1 saved  ETA 0:03"])
        XCTAssertEqual(lines(20), ["[===>         ] 1/4"])
        XCTAssertEqual(lines(13), ["1/4  1 saved"])
        XCTAssertEqual(lines(12), ["1/4"])
    }

    func testCutNamesKeepThePartThatTellsThemApart() {
        func rows(_ names: [String], columns: Int = 60) -> [String] {
            ProgressLineFormatter(columns: columns, colors: false, maxRows: 6, spinnerPhase: 0)
                .activeRows(names.map { ActiveTransfer(name: $0, received: 1, expected: 2) })
                .map { String($0.dropFirst(2).prefix { $0 != " " }) }
        }
        let counters = (1204...1207).map { "img000000\($0).jpg" }
        XCTAssertEqual(Set(rows(counters, columns: 60)).count, 4)
        let products = ["product-photo-00123-large-1200x800-with-a-long-tail.jpg", "product-photo-00124-large-1200x800-with-a-long-tail.jpg"]
        let shown = rows(products)
        XCTAssertEqual(Set(shown).count, 2, "\(shown)")
        XCTAssertTrue(shown[0].contains("123") && shown[1].contains("124"), "\(shown)")

        XCTAssertEqual(TerminalText.middleTruncated("img0000001205.jpg", toWidth: 13, distinct: 9..<17), "img0…1205.jpg")
        XCTAssertEqual(TerminalText.middleTruncated("img0000001205.jpg", toWidth: 13, distinct: 12..<13), "img000…05.jpg")
        // Names that share their end too: a second ellipsis keeps where they differ.
        let ranges = TerminalText.distinctRanges(["IMG_1234_large_1200x800.jpg", "IMG_1299_large_1200x800.jpg"])
        XCTAssertEqual(ranges, [6..<8, 6..<8])
        XCTAssertEqual(TerminalText.middleTruncated("IMG_1234_large_1200x800.jpg", toWidth: 12, distinct: ranges[0]), "IMG…234….jpg")
        XCTAssertEqual(TerminalText.middleTruncated("IMG_1299_large_1200x800.jpg", toWidth: 12, distinct: ranges[1]), "IMG…299….jpg")
        // A name that differs early keeps the even cut.
        XCTAssertEqual(TerminalText.middleTruncated("abcdefghij.jpg", toWidth: 9, distinct: 1..<14), "abcd….jpg")
        XCTAssertEqual(TerminalText.distinctRanges(["photo-0001.jpg", "photo-0002.jpg", "x.jpg"]), [9..<10, 9..<10, 0..<1])
    }

    func testColumnsAreReadOnEveryFrame() {
        let width = Width(80)
        let renderer = TerminalProgressRenderer(sink: sink, columns: { width.value }, colors: false)
        renderer.render(snapshot(transfers(1)))
        XCTAssertTrue(newOutput().contains("  file1.jpg [===>"))
        width.value = 30
        renderer.render(snapshot(transfers(1)))
        XCTAssertEqual(width.reads, 2)
        // 6 rows up: on a terminal that rewraps, the old 79- and 65-column lines now take 3 rows each.
        XCTAssertEqual(newOutput(), "\r\u{1B}[6A"
            + "[===>         ] 1/4  ETA 0:03\u{1B}[K\n"
            + "\u{1B}[J")
    }

    func testRedrawAfterTheTerminalNarrowedClimbsOverRewrappedLines() {
        XCTAssertEqual(TerminalProgressRenderer.rowsOccupied(lineWidths: [59, 20], drawnColumns: 60, columns: 60), 2)
        XCTAssertEqual(TerminalProgressRenderer.rowsOccupied(lineWidths: [59, 20], drawnColumns: 60, columns: 30), 3)
        XCTAssertEqual(TerminalProgressRenderer.rowsOccupied(lineWidths: [59, 0], drawnColumns: 60, columns: 20), 4)
        XCTAssertEqual(TerminalProgressRenderer.rowsOccupied(lineWidths: [59, 20], drawnColumns: 60, columns: 100), 2)
    }

    func testNarrowingATerminalThatDoesNotRewrapKeepsTheLinesAboveTheArea() {
        // xterm and the Linux console cut lines on a narrowing instead of rewrapping them: a climb
        // over rewrapped rows would land in the result lines and erase them.
        let width = Width(100)
        let renderer = TerminalProgressRenderer(sink: sink, columns: { width.value }, colors: false, rewrapsOnResize: false)
        var screen = ScreenEmulator(columns: 100)
        renderer.printAbove("result A")
        renderer.printAbove("result B")
        renderer.render(snapshot(transfers(2)))
        width.value = 50
        renderer.printAbove("result C")
        renderer.render(snapshot(transfers(2), done: 2))
        screen.feed(sink.text)
        XCTAssertEqual(screen.lines, ["result A", "result B", "result C", "[=====>    ] 2/4  2 saved     1.0 KiB/s  ETA 0:03"])
    }

    func testTheAreaNeverFillsAShortScreen() {
        let renderer = TerminalProgressRenderer(sink: sink, size: { TerminalSize(columns: 80, rows: 5) }, colors: false)
        renderer.render(snapshot(transfers(9)))
        renderer.render(snapshot(transfers(9)))
        var screen = ScreenEmulator(columns: 80)
        screen.feed(sink.text)
        XCTAssertEqual(screen.lines.count, 4, "overall line, three rows, and the cursor's line:\n\(screen.lines.joined(separator: "\n"))")
        XCTAssertEqual(screen.lines[3], "  … and 7 more")
        XCTAssertTrue(sink.text.contains("\r\u{1B}[4A"), "climbs no higher than the area")
    }

    func testRetiredRendererPrintsLinesAsTheyComeAndNoFrames() {
        let renderer = renderer(columns: 60)
        var screen = ScreenEmulator(columns: 60)
        renderer.render(snapshot(transfers(2)))
        renderer.printAbove("pending")
        renderer.retire()
        renderer.render(snapshot(transfers(2), done: 2))
        renderer.printAbove("after")
        renderer.finish(summary: "summary")
        screen.feed(sink.text)
        XCTAssertEqual(screen.lines, ["pending", "after", "summary"])
        XCTAssertEqual(screen.wholeScreenClears, 0)
    }

    // MARK: - Unknown sizes

    func testUnknownSizeShowsAnAdvancingSpinnerAndNoPercent() {
        let renderer = renderer(columns: 60)
        let frames = (0..<5).map { _ -> String in
            renderer.render(snapshot([ActiveTransfer(name: "stream.png", received: 1536, expected: nil)]))
            return newOutput().components(separatedBy: "\n")[1].replacingOccurrences(of: "\u{1B}[K", with: "")
        }
        XCTAssertEqual(frames, ["|", "/", "-", "\\", "|"].map { "  stream.png \($0)  1.5 KiB" })
        XCTAssertFalse(frames.contains { $0.contains("%") || $0.contains("[") })
    }

    // MARK: - Messages above the area

    func testPrintAboveWaitsForTheNextFrameWhichErasesPrintsAndRedraws() {
        let renderer = renderer(columns: 60)
        var screen = ScreenEmulator(columns: 60)
        renderer.render(snapshot(transfers(1)))
        screen.feed(newOutput())
        renderer.printAbove("imgfetch: failed http://x/a.jpg: HTTP 404\n")
        renderer.printAbove("✓ out/b.jpg  10×10  1.0 KiB")
        XCTAssertEqual(newOutput(), "", "lines wait for the frame")
        renderer.render(snapshot(transfers(1), done: 2))
        let output = newOutput()
        XCTAssertTrue(output.hasPrefix("\r\u{1B}[2K\u{1B}[2A\u{1B}[2K\n\u{1B}[2K\r\u{1B}[1A" + "imgfetch: failed http://x/a.jpg: HTTP 404\n✓ out/b.jpg  10×10  1.0 KiB\n"),
                      output.debugDescription)
        screen.feed(output)
        XCTAssertEqual(screen.lines, [
            "imgfetch: failed http://x/a.jpg: HTTP 404",
            "✓ out/b.jpg  10×10  1.0 KiB",
            "[==========>         ] 2/4  2 saved     1.0 KiB/s  ETA 0:03",
            "  file1.jpg [=>                 ]  10%  100 B / 1000 B",
        ])
        renderer.render(snapshot(transfers(1), done: 4))
        screen.feed(newOutput())
        XCTAssertEqual(screen.lines[1], "✓ out/b.jpg  10×10  1.0 KiB")
        XCTAssertEqual(screen.lines[2], "[====================] 4/4  4 saved     1.0 KiB/s  ETA 0:03")
        XCTAssertEqual(screen.lines.count, 4)
        XCTAssertEqual(screen.cursor, ScreenEmulator.Position(row: 4, column: 0))
        XCTAssertEqual(screen.wholeScreenClears, 0, "the area starts at the top of the screen")
    }

    func testManyLinesBetweenFramesAreWrittenWithoutWaiting() {
        let renderer = renderer(columns: 60)
        var screen = ScreenEmulator(columns: 60)
        renderer.render(snapshot(transfers(1)))
        _ = newOutput()
        let line = String(repeating: "x", count: 50)
        var count = 0
        while newOutput().isEmpty {
            renderer.printAbove(line)
            count += 1
            XCTAssertLessThan(count, 10_000)
        }
        XCTAssertEqual(count, TerminalProgressRenderer.maxPendingBytes / 51 + 1)
        screen.feed(sink.text)
        XCTAssertEqual(screen.lines.count, count + 2, "every line, then the area again")
        XCTAssertTrue(screen.lines[count].hasPrefix("[=====>"))
    }

    func testMessagesAreMadeSafeAndLoseColorsWhenColorsAreOff() {
        renderer(colors: false).printAbove("\u{1B}[31merror:\u{1B}[0m bad\rname\u{1B}[2J")
        XCTAssertEqual(newOutput(), "error: bad^Mname^[[2J\n")
        renderer(colors: true).printAbove("\u{1B}[31merror:\u{1B}[0m x\r\n")
        XCTAssertEqual(newOutput(), "\u{1B}[31merror:\u{1B}[0m x\n")
    }

    // MARK: - Shrinking, growing, finishing

    func testShrinkingFrameLeavesNoStaleRows() {
        let renderer = renderer(columns: 60)
        var screen = ScreenEmulator(columns: 60)
        renderer.render(snapshot(transfers(3)))
        screen.feed(newOutput())
        XCTAssertEqual(screen.lines.count, 4)
        XCTAssertEqual(screen.lines[3], "  file3.jpg [=>                 ]  10%  100 B / 1000 B")

        renderer.render(snapshot(transfers(1), done: 3))
        screen.feed(newOutput())
        XCTAssertEqual(screen.lines, [
            "[===============>    ] 3/4  3 saved     1.0 KiB/s  ETA 0:03",
            "  file1.jpg [=>                 ]  10%  100 B / 1000 B",
        ])
        XCTAssertEqual(screen.cursor, ScreenEmulator.Position(row: 2, column: 0))

        renderer.render(snapshot(transfers(2), done: 3))
        screen.feed(newOutput())
        XCTAssertEqual(screen.lines.count, 3)
        XCTAssertEqual(screen.lines[2], "  file2.jpg [=>                 ]  10%  100 B / 1000 B")
    }

    func testTooManyTransfersEndInACountOfTheHiddenOnes() {
        renderer(columns: 60, maxRows: 3).render(snapshot(transfers(9)))
        var screen = ScreenEmulator(columns: 60)
        screen.feed(newOutput())
        XCTAssertEqual(screen.lines.count, 4)
        XCTAssertTrue(screen.lines[2].hasPrefix("  file2.jpg"))
        XCTAssertEqual(screen.lines[3], "  … and 7 more")
        renderer(columns: 60, maxRows: 0).render(snapshot(transfers(9)))
        XCTAssertEqual(newOutput().components(separatedBy: "\n").count, 2)
    }

    /// The terminal echoes Ctrl-C as `^C` where the cursor rests, below the area: the last erase
    /// clears that line too, so no `^C` is left under the summary.
    func testTheEchoOfCtrlCIsClearedWithTheArea() {
        let renderer = renderer(columns: 80)
        var screen = ScreenEmulator(columns: 80)
        renderer.render(snapshot(transfers(2)))
        screen.feed(sink.text)
        screen.feed("^C")
        consumed = sink.text.count
        renderer.finish(summary: "imgfetch: 4 items: 0 saved, 0 skipped, 0 failed, 4 cancelled; 0 B in 1.0 s")
        screen.feed(newOutput())
        XCTAssertEqual(screen.lines, ["imgfetch: 4 items: 0 saved, 0 skipped, 0 failed, 4 cancelled; 0 B in 1.0 s"])
    }

    func testFinishLeavesOnlyMessagesAndTheSummary() {
        let renderer = renderer(columns: 80)
        var screen = ScreenEmulator(columns: 80)
        renderer.printAbove("warning: one")
        renderer.render(snapshot(transfers(3)))
        renderer.printAbove("warning: two")
        renderer.render(snapshot(transfers(2), done: 3))
        renderer.finish(summary: "imgfetch: 4 items: 3 saved, 0 skipped, 1 failed; 2.0 KiB in 1.0 s")
        screen.feed(sink.text)
        XCTAssertEqual(screen.lines, ["warning: one", "warning: two", "imgfetch: 4 items: 3 saved, 0 skipped, 1 failed; 2.0 KiB in 1.0 s"])
        XCTAssertEqual(screen.cursor, ScreenEmulator.Position(row: 3, column: 0))
        XCTAssertTrue(sink.text.hasSuffix("\r\u{1B}[2K\u{1B}[3A\u{1B}[2K\n\u{1B}[2K\n\u{1B}[2K\r\u{1B}[2A"
                                          + "imgfetch: 4 items: 3 saved, 0 skipped, 1 failed; 2.0 KiB in 1.0 s\n"), sink.text.debugDescription)
        XCTAssertEqual(screen.wholeScreenClears, 0)

        consumed = sink.text.count
        renderer.render(snapshot(transfers(1)))
        renderer.printAbove("late")
        renderer.finish(summary: "again")
        XCTAssertEqual(newOutput(), "")
    }

    func testFinishWithoutSummaryErasesTheArea() {
        let renderer = renderer(columns: 60)
        var screen = ScreenEmulator(columns: 60)
        renderer.printAbove("warning: one")
        renderer.render(snapshot(transfers(2)))
        renderer.finish(summary: nil)
        screen.feed(sink.text)
        XCTAssertEqual(screen.lines, ["warning: one"])
        XCTAssertEqual(screen.cursor, ScreenEmulator.Position(row: 1, column: 0))
        XCTAssertEqual(screen.wholeScreenClears, 0)
    }

    // MARK: - Colors

    func testColorsOffWritesNoSGRButStillMovesTheCursor() {
        let renderer = renderer(columns: 80, colors: false)
        var failing = snapshot([ActiveTransfer(name: "a.jpg", received: 5, expected: 10), ActiveTransfer(name: "b", received: 5, expected: nil)])
        failing.failed = 2
        renderer.render(failing)
        renderer.render(failing)
        renderer.printAbove("warning")
        renderer.finish(summary: "done")
        XCTAssertNil(sink.text.range(of: "\u{1B}\\[[0-9;]*m", options: .regularExpression), sink.text)
        XCTAssertTrue(sink.text.contains("\u{1B}[3A"))
    }

    func testColorsOnPaintsTheBarGreenAndFailuresRed() {
        var failing = snapshot([ActiveTransfer(name: "a.jpg", received: 5, expected: 10)])
        failing.failed = 2
        renderer(columns: 80, colors: true).render(failing)
        let frame = newOutput()
        XCTAssertTrue(frame.hasPrefix("[\u{1B}[32m====>\u{1B}[0m             ]"), frame)
        XCTAssertTrue(frame.contains("\u{1B}[31m2 failed\u{1B}[0m"), frame)
        var screen = ScreenEmulator(columns: 80)
        screen.feed(frame)
        XCTAssertEqual(screen.lines[0], "[====>             ] 1/4  1 saved  2 failed     2.0 KiB     1.0 KiB/s  ETA 0:03")
    }

    // MARK: - Fields

    func testETAAndRateFormatting() {
        XCTAssertEqual(ProgressFields.eta(nil), "ETA --")
        XCTAssertEqual(ProgressFields.eta(.nan), "ETA --")
        XCTAssertEqual(ProgressFields.eta(-1), "ETA --")
        XCTAssertEqual(ProgressFields.eta(0), "ETA 0:00")
        XCTAssertEqual(ProgressFields.eta(41.2), "ETA 0:42")
        XCTAssertEqual(ProgressFields.eta(725), "ETA 12:05")
        XCTAssertEqual(ProgressFields.eta(3725), "ETA 1:02:05")
        XCTAssertEqual(ProgressFields.eta(400_000), "ETA >99h")
        XCTAssertEqual(ProgressFields.rate(0), "0 B/s")
        XCTAssertEqual(ProgressFields.rate(-5), "0 B/s")
        XCTAssertEqual(ProgressFields.rate(.infinity), "0 B/s")
        XCTAssertEqual(ProgressFields.rate(1536), "1.5 KiB/s")
        XCTAssertEqual(ProgressFields.rate(3.5 * 1024 * 1024), "3.5 MiB/s")
        XCTAssertEqual(ProgressFields.percent(0.999), " 99%")
        XCTAssertEqual(ProgressFields.percent(1), "100%")
    }

    func testTotalThatStillGrowsIsMarked() {
        var reading = snapshot(done: 120, total: 300)
        reading.listComplete = false
        reading.etaSeconds = nil
        let line = ProgressLineFormatter(columns: 100, colors: false, maxRows: 6, spinnerPhase: 0).overallLine(reading)
        XCTAssertTrue(line.contains("] 120/300+  120 saved"), line)
        XCTAssertTrue(line.hasSuffix("ETA --"), line)
        reading.listComplete = true
        XCTAssertTrue(ProgressLineFormatter(columns: 100, colors: false, maxRows: 6, spinnerPhase: 0).overallLine(reading).contains("] 120/300  "))
    }

    func testNamesWithControlCharactersArePrintable() {
        XCTAssertEqual(TerminalText.printable("evil\u{1B}[2J\r\n\u{7F}.jpg"), "evil^[[2J^M^J^?.jpg")
        XCTAssertEqual(TerminalText.printable("gpj\u{202E}.exe\u{85}"), "gpj?.exe?")
        XCTAssertEqual(TerminalText.printable("café.jpg"), "café.jpg")
        renderer().render(snapshot([ActiveTransfer(name: "a\u{1B}[2Jb\n.jpg", received: 1, expected: 2)]))
        XCTAssertTrue(newOutput().contains("  a^[[2Jb^J.jpg ["))
    }

    func testWidthsCountEscapesZeroAndWideCharactersTwo() {
        XCTAssertEqual(TerminalText.visibleWidth("\u{1B}[32m===\u{1B}[0m"), 3)
        XCTAssertEqual(TerminalText.visibleWidth("写真.jpg"), 8)
        XCTAssertEqual(TerminalText.visibleWidth("e\u{301}"), 1)
        XCTAssertEqual(TerminalText.truncated("\u{1B}[32m=====\u{1B}[0m", toWidth: 2), "\u{1B}[32m==\u{1B}[0m")
        XCTAssertEqual(TerminalText.middleTruncated("abcdefghij.jpg", toWidth: 9), "abcd….jpg")
        XCTAssertEqual(TerminalText.middleTruncated("写真写真写真.jpg", toWidth: 9), "写真….jpg")
        XCTAssertEqual(TerminalText.middleTruncated("写真写真写真.jpg", toWidth: 8), "写真…jpg")
    }

    // MARK: - Threads

    func testCallsFromManyThreadsNeverInterleave() {
        let recorder = RecordingSink()
        let renderer = TerminalProgressRenderer(sink: recorder, columns: { 60 }, colors: true)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for step in 0..<100 {
                renderer.render(ProgressSnapshot(done: step, total: 100, active: (0...(step % 4)).map {
                    ActiveTransfer(name: "t\(thread)-\($0).jpg", received: Int64(step), expected: step % 2 == 0 ? 100 : nil)
                }))
                if step % 25 == 0 { renderer.printAbove("message \(thread)-\(step)") }
            }
        }
        renderer.finish(summary: "summary")
        renderer.render(ProgressSnapshot())

        var screen = ScreenEmulator(columns: 60)
        for write in recorder.writes { screen.feed(write) }
        let messages = (0..<8).flatMap { thread in stride(from: 0, to: 100, by: 25).map { "message \(thread)-\($0)" } }
        XCTAssertEqual(screen.lines.count, messages.count + 1)
        XCTAssertEqual(Set(screen.lines.dropLast()), Set(messages))
        XCTAssertEqual(screen.lines.last, "summary")
        // Messages ride with the frames: one write per frame, and one for the summary.
        XCTAssertLessThanOrEqual(recorder.writes.count, 8 * 100 + 1 + 1)
    }
}

// MARK: - Test doubles

/// Keeps each write apart, to count frames.
private final class RecordingSink: TextSink {
    private let storage = Mutex<[String]>([])
    var writes: [String] { storage.withLock { $0 } }
    func write(_ text: String) { storage.withLock { $0.append(text) } }
}

/// A terminal width the test changes between frames, as SIGWINCH would; counts how often it is read.
private final class Width: Sendable {
    private let storage: Mutex<(value: Int, reads: Int)>
    init(_ value: Int) { storage = Mutex((value, 0)) }
    var reads: Int { storage.withLock { $0.reads } }
    var value: Int {
        get { storage.withLock { $0.reads += 1; return $0.value } }
        set { storage.withLock { $0.value = newValue } }
    }
}

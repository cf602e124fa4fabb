import XCTest
@testable import ImgFetchCLI

final class TerminalHintTests: XCTestCase {
    func testTheTerminalHintOnlyWhenStdinIsATerminalAndTheListComesFromIt() {
        let hint = "imgfetch: reading URLs from the terminal; end with Ctrl-D\n"
        XCTAssertEqual(ImgFetchCommand.terminalHint(paths: [], stdinIsTerminal: true), hint)
        XCTAssertEqual(ImgFetchCommand.terminalHint(paths: ["a.txt", "-"], stdinIsTerminal: true), hint)
        XCTAssertNil(ImgFetchCommand.terminalHint(paths: ["a.txt"], stdinIsTerminal: true))
        XCTAssertNil(ImgFetchCommand.terminalHint(paths: [], stdinIsTerminal: false))
    }
}

import Foundation
import XCTest

/// `imgfetch --completions bash|zsh|fish`: each script passes its shell's syntax check and
/// completes options, choices, directories and list files in that real shell.
final class CompletionScriptTests: XCTestCase {
    private var scratch: ScratchDirectory!
    /// Where the completions run: a directory, a directory with a space, list files, and a file
    /// whose name looks like an option.
    private var workingDirectory: URL { scratch.file("cwd") }

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
        for directory in ["cwd/pics", "cwd/my dir"] {
            try FileManager.default.createDirectory(at: scratch.file(directory), withIntermediateDirectories: true)
        }
        for file in ["cwd/urls.txt", "cwd/--strange.txt"] { _ = try scratch.write(file, "") }
    }

    override func tearDown() {
        scratch?.remove()
    }

    private func script(_ shell: String) throws -> String {
        let result = try ImgFetchRunner.run(["--completions", shell])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        return try scratch.write("imgfetch.\(shell)", result.stdout)
    }

    private func shell(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Execution {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw XCTSkip("\(path) is not installed (Scripts/install-deps installs it)")
        }
        let environment = ["PATH": "/usr/bin:/bin", "HOME": scratch.path, "LANG": "C.UTF-8"].merging(environment) { $1 }
        return try ImgFetchRunner.run(arguments, in: workingDirectory, environment: environment,
                                      executable: URL(fileURLWithPath: path))
    }

    func testEachScriptPassesItsShellsSyntaxCheck() throws {
        for (name, path) in [("bash", "/bin/bash"), ("zsh", "/usr/bin/zsh"), ("fish", "/usr/bin/fish")] {
            let file = try script(name)
            let check = try shell(path, ["-n", file])
            XCTAssertEqual(check.exitCode, 0, "\(name) -n: \(check.stderr)")
            XCTAssertEqual(check.stderr, "", name)
        }
    }

    func testAnUnknownShellIsAUsageError() throws {
        let result = try ImgFetchRunner.run(["--completions", "tcsh"])
        XCTAssertEqual(result.exitCode, 2)
        XCTAssertEqual(result.stdout, "")
        XCTAssertTrue(result.stderr.contains("invalid value 'tcsh' for '--completions': expected bash, zsh or fish"), result.stderr)
        XCTAssertEqual(try ImgFetchRunner.run(["--completions"]).exitCode, 2)
    }

    // MARK: - bash

    /// What bash offers for `words` with the cursor at the end of the last one: the function that
    /// `complete -p imgfetch` names is called as bash calls it, with COMP_WORDS, COMP_CWORD,
    /// COMP_LINE and COMP_POINT set.
    private func bashCompletions(_ words: String...) throws -> [String] {
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let program = """
            source '\(try script("bash"))'
            COMP_WORDS=(\(quoted)); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
            COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
            spec=$(complete -p imgfetch); function=${spec##*-F }; function=${function%% *}
            COMPREPLY=()
            "$function" imgfetch "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try shell("/bin/bash", ["--norc", "--noprofile", "-c", program])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        return result.stdout.split(separator: "\n").map(String.init).sorted()
    }

    func testBashCompletesALongOption() throws {
        XCTAssertEqual(try bashCompletions("imgfetch", "--sa"), ["--save-as"])
        XCTAssertEqual(try bashCompletions("imgfetch", "urls.txt", "--progress-i"), ["--progress-interval"])
        let all = try bashCompletions("imgfetch", "-")
        for option in ["-o", "--output-dir", "-q", "--http1.1", "--man", "--completions", "--help", "-h"] {
            XCTAssertTrue(all.contains(option), "\(option) not offered: \(all)")
        }
        XCTAssertTrue(all.allSatisfy { $0.hasPrefix("-") }, all.description)
    }

    func testBashCompletesChoices() throws {
        XCTAssertEqual(try bashCompletions("imgfetch", "--cache-policy", "o"), ["only-if-cached"])
        XCTAssertEqual(try bashCompletions("imgfetch", "--save-as", "p"), ["pam", "png", "ppm"])
        // bash splits `--save-as=p` at `=` (COMP_WORDBREAKS).
        XCTAssertEqual(try bashCompletions("imgfetch", "--save-as", "=", "p"), ["pam", "png", "ppm"])
        XCTAssertEqual(try bashCompletions("imgfetch", "--progress", "="), ["auto", "bar", "none", "plain"])
        XCTAssertEqual(try bashCompletions("imgfetch", "--completions", ""), ["bash", "fish", "zsh"])
    }

    func testBashCompletesDirectoriesFilesAndNothingForNumbers() throws {
        XCTAssertEqual(try bashCompletions("imgfetch", "-o", ""), ["my dir", "pics"])
        XCTAssertEqual(try bashCompletions("imgfetch", "--report", "u"), ["urls.txt"])
        XCTAssertEqual(try bashCompletions("imgfetch", "u"), ["urls.txt"], "a list file")
        XCTAssertEqual(try bashCompletions("imgfetch", "-j", ""), [])
        XCTAssertEqual(try bashCompletions("imgfetch", "-H", ""), [])
        // After `--`, a word starting with `-` is a list file too.
        XCTAssertEqual(try bashCompletions("imgfetch", "--", "--s"), ["--strange.txt"])
        XCTAssertFalse(try bashCompletions("imgfetch", "--s").contains("--strange.txt"))
    }

    // MARK: - fish

    /// What fish offers for `line`, as `complete -C` lists it: candidates without descriptions.
    private func fishCompletions(_ line: String) throws -> [String] {
        let program = "source '\(try script("fish"))'; complete -C '\(line)'"
        let result = try shell("/usr/bin/fish", ["--no-config", "-c", program])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        return result.stdout.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }.sorted()
    }

    func testFishCompletesOptionsChoicesAndFiles() throws {
        XCTAssertEqual(try fishCompletions("imgfetch --sa"), ["--save-as"])
        XCTAssertEqual(try fishCompletions("imgfetch --cache-policy o"), ["only-if-cached"])
        XCTAssertEqual(try fishCompletions("imgfetch --progress p"), ["plain"])
        XCTAssertEqual(try fishCompletions("imgfetch -o "), ["my dir/", "pics/"])
        XCTAssertEqual(try fishCompletions("imgfetch --report u"), ["urls.txt"])
        XCTAssertEqual(try fishCompletions("imgfetch u"), ["urls.txt"])
        XCTAssertEqual(try fishCompletions("imgfetch -j "), [])
    }

    // MARK: - zsh

    /// zsh has no non-interactive completion: a real interactive zsh runs in tmux, with the script
    /// as `_imgfetch` in `$fpath` as Scripts/install puts it, and Tab is pressed.
    func testZshCompletesAnOptionAndAChoice() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            throw XCTSkip("tmux is not installed (Scripts/install-deps installs it)")
        }
        let functions = scratch.file("functions")
        try FileManager.default.createDirectory(at: functions, withIntermediateDirectories: true)
        _ = try scratch.write("functions/_imgfetch", try String(contentsOfFile: try script("zsh"), encoding: .utf8))
        _ = try scratch.write(".zshrc", """
            PS1='READY> '
            fpath=('\(functions.path)' $fpath)
            autoload -Uz compinit && compinit -u -D

            """)
        _ = try shell("/usr/bin/zsh", ["-n", scratch.file(".zshrc").path])  // skips without zsh
        let session = "imgfetch-zsh-\(UUID().uuidString.prefix(8))"
        try TmuxSession.start(session, "cd '\(workingDirectory.path)' && ZDOTDIR='\(scratch.path)' exec zsh -d -i")
        defer { TmuxSession.kill(session) }
        XCTAssertTrue(try eventually { try TmuxSession.screen(session).contains("READY>") }, "no zsh prompt")

        func complete(_ typed: String, expect: String) throws {
            try TmuxSession.keys(session, "C-u", typed, "Tab")
            var screen = ""
            XCTAssertTrue(try eventually {
                screen = try TmuxSession.screen(session)
                return screen.contains(expect)
            }, "typed '\(typed)', Tab: no '\(expect)' in\n\(screen)")
        }
        try complete("imgfetch --sa", expect: "READY> imgfetch --save-as=")
        try complete("imgfetch --cache-policy o", expect: "READY> imgfetch --cache-policy only-if-cached")
        try complete("imgfetch -o pi", expect: "READY> imgfetch -o pics/")
    }
}

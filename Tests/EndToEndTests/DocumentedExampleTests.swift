import Foundation
import XCTest

/// Every command the README shows, and every example of `imgfetch --help all` (which the man page
/// and `-h` repeat), runs as written against the test server: an example that stops working fails
/// the build.
///
/// What is substituted is only what a reader would substitute: hosts (`https://example.com/` is the
/// test server's `/files/`, over http; the AWS store and `https://minio.internal:9000` are moto's),
/// the placeholders `…` of the credentials, and the absolute directories of the cluster examples
/// (`/data`, `/out`, `/scratch`), which move under the test's directory. The README's blocks run in
/// order, in one directory, as a reader following it would run them (the offline example needs the
/// fetch before it). A block the harness does not run is listed in `notRun`, with the test that runs
/// it or why it is no command; a new block must be run or listed.
final class DocumentedExampleTests: XCTestCase {
    private var server: TestServer!
    private var store: S3TestStore!
    private var scratch: ScratchDirectory!

    /// README blocks that are not run here, by their first line, with why.
    private static let notRun: [String: String] = [
        "sha256sum --check SHA256SUMS": "PackageTests installs the .deb as the README says, in a clean Debian root",
        "tar -xzf imgfetch-": "PackageTests unpacks the tarball as the README says",
        "podman run --rm": "PackageTests runs the image as the README says",
        "Scripts/test ": "the build's own commands: Scripts/test is this run; InstallScriptTests runs Scripts/install",
        "imgfetch [OPTIONS] [URL | LIST ...]": "the synopsis, not a command",
        "https://example.com/a/cat.jpg": "a list's lines, not a command (ListParserTests reads out= and priority=)",
        "✓ pics/cat.jpg": "what a terminal shows (HumanResultLineTests)",
        "import webdataset as wds": "Python that reads shards: WebDatasetTests reads shards with the webdataset package",
        "Scripts/spark-fetch photos.csv": "Spark needs the packaged binary: DocumentedSparkExampleTests runs it",
        "# on a cluster: the same file with spark-submit": "Spark needs the packaged binary: DocumentedSparkExampleTests runs it",
        "let downloader = try ImageDownloader": "Swift, for the library (its calls are ImageDownloaderTests'; "
            + "LibraryBoundaryTests builds a whole program of the library)",
    ]

    override func setUpWithError() throws {
        server = try TestServer()
        // The README's buckets, in eu-west-1 as its export says: the store refuses requests signed for another region.
        store = try S3TestStore(bucket: "unused", others: ["pics@eu-west-1", "datasets@eu-west-1"])
        scratch = try ScratchDirectory()
    }

    override func tearDown() {
        server?.stop()
        store?.stop()
        scratch?.remove()
    }

    // MARK: - The README

    func testEveryReadmeExampleRunsAsWritten() throws {
        let directory = try fixtures()
        let samples = try String(contentsOf: directory.appendingPathComponent("urls.txt"), encoding: .utf8)
            .split(separator: "\n").map { String($0.split(separator: "/").last ?? "") }.sorted()
        let blocks = try Self.readmeBlocks()
        var listed = Set<String>()
        for block in blocks {
            if let key = Self.notRun.keys.first(where: { block.text.trimmingCharacters(in: .whitespaces).hasPrefix($0) }) {
                listed.insert(key)
                continue
            }
            try run(block.text, in: directory, label: "README.md:\(block.line)")
        }
        XCTAssertEqual(listed, Set(Self.notRun.keys), "a block listed as not run is no longer in the README")

        // What the examples made is there: files, a gallery, a dataset, cluster parts, objects.
        let made = { (path: String) in FileManager.default.fileExists(atPath: directory.appendingPathComponent(path).path) }
        for path in ["pics/cat.jpg", "thumbs", "report.html", "run.jsonl", "fetch.log", "cookies.txt", "shards/000000.tar",
                     "out/part-3"] {
            XCTAssertTrue(made(path), "the examples made no \(path)")
        }
        XCTAssertEqual(try store.objects(prefix: "run1/", in: "pics").keys.sorted(), samples.map { "run1/" + $0 },
                       "imgfetch urls.txt -o s3://pics/run1")
        XCTAssertTrue(try store.objects(prefix: "photos/", in: "datasets").keys.contains("photos/000000.tar"))
    }

    // MARK: - --help, -h and the man page

    func testEveryHelpExampleRunsAsWritten() throws {
        let directory = try fixtures()
        let all = try ImgFetchRunner.run(["--help", "all"])
        let examples = Self.helpExamples(all.stdout, indent: 4)
        XCTAssertGreaterThanOrEqual(examples.count, 10)
        for example in examples {
            try run(example, in: directory, label: "imgfetch --help all: \(example)")
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.appendingPathComponent("home/.local/share/bash-completion/completions/imgfetch").path))

        // -h shows some of them; the man page shows the same ones.
        let brief = Self.helpExamples(try ImgFetchRunner.run(["-h"]).stdout, indent: 2)
        XCTAssertGreaterThanOrEqual(brief.count, 4)
        for example in brief { XCTAssertTrue(examples.contains(example), "-h shows an example --help all lacks: \(example)") }
        XCTAssertEqual(Self.manExamples(try ImgFetchRunner.run(["--man"]).stdout), examples)
    }

    // MARK: - Running

    /// What the examples read: a list of six images, a table of them, a page linking them, a
    /// crawl's list, a cluster's `/data/urls.txt`, a LAION-shaped Parquet part; and `cat.jpg`, which the first
    /// example fetches.
    private func fixtures() throws -> URL {
        let directory = scratch.url
        let names = try server.addSamples(count: 3)
        try server.addFile("cat.jpg", try server.fileData(try XCTUnwrap(names.first { $0.hasSuffix(".jpg") })))
        let urls = names.map { server.url("/files/" + $0) }
        _ = try scratch.write("urls.txt", urls.joined(separator: "\n") + "\n")
        let rows = urls.enumerated().map { "\($0.element),a photo number \($0.offset),\($0.offset),0.3\($0.offset)" }
        _ = try scratch.write("photos.csv", (["url,caption,id,similarity"] + rows).joined(separator: "\n") + "\n")
        // The page's links, with the host substituted as in the commands.
        _ = try scratch.write("page.html", urls.map { "<img src=\"\($0)\">" }.joined(separator: "\n") + "\n")
        // Secrets in files: a header file and the user's netrc (HOME is the test's `home`).
        _ = try scratch.write("headers.txt", "# an API key\nX-Api-Key: 123\n")
        // A crawl's URLs, one of them the cloud's metadata service (the test server's are loopback's).
        _ = try scratch.write("crawl.txt", (urls + ["http://169.254.169.254/latest/meta-data/"]).joined(separator: "\n") + "\n")
        for folder in ["data", "out", "scratch", "home"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        _ = try scratch.write("home/.netrc", "machine 127.0.0.1 login alice password secret\n")
        try FileManager.default.copyItem(at: directory.appendingPathComponent("urls.txt"), to: directory.appendingPathComponent("data/urls.txt"))
        // LAION's shape, for the Parquet example: rows whose URLs are the server's img0.jpg, img1.jpg, ….
        for index in 0..<3 { try server.addFile("img\(index).jpg", try server.fileData("cat.jpg")) }
        let parquet = try ImgFetchRunner.run([TestServer.packageRoot.appendingPathComponent("Scripts/test-support/make_parquet.py").path,
                                              directory.appendingPathComponent("laion-part-00000.parquet").path, "--rows", "3",
                                              "--url-base", server.url("/files")],
                                             executable: TestServer.packageRoot.appendingPathComponent(".venv-tests/bin/python"))
        XCTAssertEqual(parquet.exitCode, 0, parquet.stderr)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("home/.local/share/bash-completion/completions"),
                                                withIntermediateDirectories: true)
        return directory
    }

    /// `script` with the reader's substitutions (see the type's comment).
    private func substituted(_ script: String, in directory: URL) -> String {
        var text = script
        text = text.replacingOccurrences(of: "https://minio.internal:9000", with: store.endpoint)
        text = text.replacingOccurrences(of: "https://example.com/", with: server.url("/files/"))
        // The page's links are https; the test server speaks http.
        text = text.replacingOccurrences(of: "grep -o 'https://", with: "grep -o 'http://")
        text = text.replacingOccurrences(of: "AWS_ACCESS_KEY_ID=…", with: "AWS_ACCESS_KEY_ID=" + store.accessKey)
        text = text.replacingOccurrences(of: "AWS_SECRET_ACCESS_KEY=…", with: "AWS_SECRET_ACCESS_KEY=" + store.secretKey)
        for folder in ["/data/", "/out/", "/scratch/"] {
            text = text.replacingOccurrences(of: " " + folder, with: " " + directory.path + folder)
        }
        // What Kubernetes sets in each pod of an Indexed Job, and Slurm in each task of an array.
        text = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            for variable in ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"] where line.contains("$" + variable) && !line.hasPrefix("#") {
                return "(export \(variable)=3; \(line))"
            }
            return String(line)
        }.joined(separator: "\n")
        XCTAssertFalse(text.split(separator: "\n").contains { !$0.hasPrefix("#") && $0.contains("…") },
                       "a placeholder the harness does not fill: \(script)")
        return text
    }

    /// Runs `script` with bash in `directory`, failing on the first command that fails.
    private func run(_ script: String, in directory: URL, label: String) throws {
        let text = "set -euo pipefail\ntrap 'echo \"example failed (exit $?): $BASH_COMMAND\" >&2' ERR\n"
            + substituted(script, in: directory)
        let environment = [
            "PATH": ImgFetchRunner.binary.deletingLastPathComponent().path + ":/usr/local/bin:/usr/bin:/bin",
            "HOME": directory.appendingPathComponent("home").path,
            "LANG": "C.UTF-8",
            // The AWS store of the first object-storage example is the test's.
            "AWS_ENDPOINT_URL": store.endpoint,
        ]
        let result = try ImgFetchRunner.run(["-c", text], in: directory, environment: environment,
                                            executable: URL(fileURLWithPath: "/bin/bash"))
        XCTAssertEqual(result.exitCode, 0, "\(label)\n\(script)\nstderr: \(result.stderr.suffix(2000))")
        XCTAssertFalse(result.stderr.contains("imgfetch: invalid") || result.stderr.contains("imgfetch: option"), "\(label): \(result.stderr)")
    }

    // MARK: - Reading the documents

    struct Block {
        let line: Int
        let text: String
    }

    /// The README's code blocks: runs of lines indented by four spaces after a blank line, outside fences.
    static func readmeBlocks() throws -> [Block] {
        let readme = try String(contentsOf: TestServer.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        var blocks: [Block] = []
        var current: [String] = []
        var start = 0
        var previousBlank = true
        var fenced = false
        for (index, line) in readme.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("```") { fenced.toggle() }
            if !fenced, line.hasPrefix("    "), !current.isEmpty || previousBlank {
                if current.isEmpty { start = index + 1 }
                current.append(String(line.dropFirst(4)))
            } else if !current.isEmpty {
                blocks.append(Block(line: start, text: current.joined(separator: "\n") + "\n"))
                current = []
            }
            previousBlank = line.trimmingCharacters(in: .whitespaces).isEmpty
        }
        return blocks
    }

    /// The commands under `Examples:` in help text, at `indent` spaces, each with its continuation lines.
    static func helpExamples(_ help: String, indent: Int) -> [String] {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false).drop { $0 != "Examples:" }.dropFirst()
            .prefix { !$0.isEmpty }
        let margin = String(repeating: " ", count: indent)
        var examples: [String] = []
        var continuing = false
        for line in lines {
            if continuing, line.hasPrefix(margin + "    ") {
                examples[examples.count - 1] += "\n" + line.dropFirst(indent)
            } else if line.hasPrefix(margin), !line.dropFirst(indent).hasPrefix(" ") {
                let text = String(line.dropFirst(indent))
                if text.hasSuffix(":") { continuing = false; continue }  // an explanation
                examples.append(text)
            } else {
                continuing = false
                continue
            }
            continuing = line.hasSuffix("\\")
        }
        return examples
    }

    /// The commands of the man page's EXAMPLES (its `.nf` blocks), with roff's escapes undone.
    static func manExamples(_ page: String) -> [String] {
        let lines = page.split(separator: "\n").drop { $0 != ".SH EXAMPLES" }.prefix { $0 != #".SH "SEE ALSO""# }
        var examples: [String] = []
        var inside = false
        var current: [String] = []
        for line in lines {
            if line == ".nf" { inside = true; current = []; continue }
            if line == ".fi" { inside = false; examples.append(current.joined(separator: "\n")); continue }
            if inside { current.append(unroff(String(line))) }
        }
        return examples
    }

    private static func unroff(_ line: String) -> String {
        var text = line
        for (escape, plain) in [(#"\fB"#, ""), (#"\fR"#, ""), (#"\fI"#, ""), (#"\-"#, "-"), (#"\(aq"#, "'"), (#"\(ga"#, "`"),
                                (#"\(ti"#, "~"), (#"\(ha"#, "^"), (#"\&"#, ""), (#"\e"#, "\\")] {
            text = text.replacingOccurrences(of: escape, with: plain)
        }
        return text
    }
}

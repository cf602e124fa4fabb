import ImgFetchCore
import XCTest
@testable import ImgFetchCLI

final class OptionParserTests: XCTestCase {
    // MARK: - Helpers

    private func parse(_ arguments: String..., file: StaticString = #filePath, line: UInt = #line) -> CommandLineOptions {
        do {
            return try OptionParser.parse(arguments)
        } catch {
            XCTFail("unexpected usage error: \(error)", file: file, line: line)
            return CommandLineOptions()
        }
    }

    /// Asserts that parsing fails and returns the one-line message.
    @discardableResult
    private func failure(_ arguments: String..., file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let options = try OptionParser.parse(arguments)
            XCTFail("expected a usage error, got \(options)", file: file, line: line)
            return ""
        } catch {
            XCTAssertFalse(error.description.contains("\n"), "message must be one line", file: file, line: line)
            return error.description
        }
    }

    // MARK: - Defaults

    func testDefaults() {
        let options = parse()
        XCTAssertEqual(options, CommandLineOptions())
        XCTAssertEqual(options.lists, [])
        XCTAssertEqual(options.outputDirectory, ".")
        XCTAssertEqual(options.concurrency, 16)
        XCTAssertEqual(options.perHost, 6)
        XCTAssertEqual(options.order, .fifo)
        XCTAssertEqual(options.timeout, 15)
        XCTAssertEqual(options.connectTimeout, 10)
        XCTAssertNil(options.maxTime)
        XCTAssertEqual(options.retries, 2)
        XCTAssertEqual(options.headers, [])
        XCTAssertNil(options.userAgent)
        XCTAssertNil(options.credentials)
        XCTAssertNil(options.cookieJar)
        XCTAssertFalse(options.insecure)
        XCTAssertFalse(options.allowDowngrade)
        XCTAssertEqual(options.maxSize, 64 * 1024 * 1024)
        XCTAssertEqual(options.naming, .url)
        XCTAssertEqual(options.existingFiles, .skip)
        XCTAssertFalse(options.quiet)
        XCTAssertEqual(options.action, .run)
    }

    // MARK: - Positionals

    func testPositionalsKeepOrderAndInterleaveWithOptions() {
        let options = parse("a.txt", "-j", "4", "b.txt", "--quiet", "c.txt")
        XCTAssertEqual(options.lists, ["a.txt", "b.txt", "c.txt"])
        XCTAssertEqual(options.concurrency, 4)
        XCTAssertTrue(options.quiet)
    }

    func testLoneDashIsStdinPositional() {
        XCTAssertEqual(parse("-").lists, ["-"])
        XCTAssertEqual(parse("a.txt", "-", "-q").lists, ["a.txt", "-"])
    }

    func testDoubleDashEndsOptions() {
        let options = parse("-q", "--", "-j", "--help", "-", "--")
        XCTAssertEqual(options.lists, ["-j", "--help", "-", "--"])
        XCTAssertTrue(options.quiet)
        XCTAssertEqual(options.action, .run)
        XCTAssertEqual(options.concurrency, 16)
    }

    // MARK: - Each option, every spelling

    func testOutputDirectory() {
        XCTAssertEqual(parse("-o", "out").outputDirectory, "out")
        XCTAssertEqual(parse("-oout").outputDirectory, "out")
        XCTAssertEqual(parse("--output-dir", "out").outputDirectory, "out")
        XCTAssertEqual(parse("--output-dir=out").outputDirectory, "out")
        XCTAssertEqual(parse("--output-dir=a=b").outputDirectory, "a=b", "only the first '=' splits")
        XCTAssertEqual(parse("-o", "-").outputDirectory, "-", "a value is taken even if it looks like an option")
    }

    func testConcurrency() {
        XCTAssertEqual(parse("-j", "4").concurrency, 4)
        XCTAssertEqual(parse("-j4").concurrency, 4)
        XCTAssertEqual(parse("--concurrency", "1024").concurrency, 1024)
        XCTAssertEqual(parse("--concurrency=1").concurrency, 1)
    }

    func testPerHost() {
        XCTAssertEqual(parse("--per-host", "2").perHost, 2)
        XCTAssertEqual(parse("--per-host=1024").perHost, 1024)
    }

    func testOrderLastOneWins() {
        XCTAssertEqual(parse("--lifo").order, .lifo)
        XCTAssertEqual(parse("--fifo").order, .fifo)
        XCTAssertEqual(parse("--fifo", "--lifo").order, .lifo)
        XCTAssertEqual(parse("--lifo", "--fifo").order, .fifo)
    }

    func testTimeouts() {
        XCTAssertEqual(parse("-t", "30").timeout, 30)
        XCTAssertEqual(parse("-t2.5").timeout, 2.5)
        XCTAssertEqual(parse("--timeout", ".5").timeout, 0.5)
        XCTAssertEqual(parse("--timeout=7.").timeout, 7)
        XCTAssertEqual(parse("--connect-timeout", "3").connectTimeout, 3)
        XCTAssertEqual(parse("--connect-timeout=0.25").connectTimeout, 0.25)
        XCTAssertEqual(parse("--max-time", "60").maxTime, 60)
        XCTAssertEqual(parse("--max-time=1.5").maxTime, 1.5)
        XCTAssertEqual(parse("--max-time=0.001").maxTime, 0.001)
        XCTAssertEqual(parse("--max-time=1000000").maxTime, 1_000_000)
        // With a unit, as people write durations.
        XCTAssertEqual(parse("-t", "5s").timeout, 5)
        XCTAssertEqual(parse("--timeout=2m").timeout, 120)
        XCTAssertEqual(parse("--connect-timeout", "500ms").connectTimeout, 0.5)
        XCTAssertEqual(parse("--deadline", "1.5h").deadline, 5400)
        XCTAssertEqual(failure("-t", "5 s"), "invalid value '5 s' for '-t': expected a number of seconds (or with ms, s, m or h) "
            + "from 0.001 to 1000000 s")
        XCTAssertEqual(failure("-t", "s"), "invalid value 's' for '-t': expected a number of seconds (or with ms, s, m or h) "
            + "from 0.001 to 1000000")
    }

    func testMistypedOptionsAndValuesGetASuggestion() {
        XCTAssertEqual(failure("--concurency", "8"), "unknown option '--concurency'; did you mean '--concurrency'?")
        XCTAssertEqual(failure("--timout=5"), "unknown option '--timout'; did you mean '--timeout'?")
        XCTAssertEqual(failure("--frobnicate"), "unknown option '--frobnicate'", "nothing close: no guess")
        XCTAssertTrue(failure("--save-as", "jpg").hasSuffix("; did you mean 'jpeg'?"))
        XCTAssertTrue(failure("--save-as", "PNG").hasSuffix("; did you mean 'png'?"))
        // img2dataset's names for the resize modes.
        for (theirs, ours) in [("keep_ratio", "keep-ratio"), ("center_crop", "center-crop"), ("border", "pad"),
                               ("keep_ratio_largest", "keep-ratio-largest")] {
            XCTAssertTrue(failure("--save-as", "jpeg", "--resize", "64", "--fit", theirs).hasSuffix("; did you mean '\(ours)'?"), theirs)
        }
        XCTAssertEqual(Suggestion.distance("concurency", "concurrency"), 1)
        XCTAssertEqual(Suggestion.distance("tiemout", "timeout"), 1, "a swap of neighbours is one edit")
    }

    func testAResizedDatasetIsJPEGUnlessSaveAsIsGivenAndFilesNameTheFix() {
        XCTAssertEqual(parse("--output-format", "webdataset", "--resize", "256", "--fit", "center-crop").saveAs, .jpeg)
        XCTAssertEqual(parse("--output-format", "webdataset", "--max-dimension", "256").saveAs, .jpeg)
        XCTAssertEqual(parse("--output-format", "webdataset", "--resize", "256", "--save-as", "png").saveAs, .png)
        XCTAssertEqual(parse("--output-format", "webdataset").saveAs, .original)
        XCTAssertEqual(failure("--output-format", "webdataset", "--resize", "256", "--save-as", "original"),
                       "option '--resize' needs a pixel format to write: add --save-as jpeg (or png, ppm, pam, webp); "
                        + "original bytes are saved unchanged, never resized")
        XCTAssertEqual(failure("--resize", "256"), "option '--resize' needs a pixel format to write: add --save-as jpeg "
                        + "(or png, ppm, pam, webp); original bytes are saved unchanged, never resized")
    }

    func testRetries() {
        XCTAssertEqual(parse("--retries", "0").retries, 0)
        XCTAssertEqual(parse("--retries=100").retries, 100)
    }

    func testHeadersAreRepeatableInOrder() {
        let options = parse("-H", "X-A: 1", "--header", "X-B: 2", "--header=X-C: 3", "-HX-D:4", "-H", "X-E:")
        XCTAssertEqual(options.headers, ["X-A: 1", "X-B: 2", "X-C: 3", "X-D:4", "X-E:"])
    }

    func testHeaderNameMayUseAnyTokenCharacter() {
        XCTAssertEqual(parse("-H", "A1!#$%&'*+-.^_`|~: v").headers, ["A1!#$%&'*+-.^_`|~: v"])
        XCTAssertEqual(parse("-H", "X: a: b").headers, ["X: a: b"], "colons in the value are fine")
    }

    func testUserAgent() {
        XCTAssertEqual(parse("-A", "bot/1").userAgent, "bot/1")
        XCTAssertEqual(parse("-Abot/1").userAgent, "bot/1")
        XCTAssertEqual(parse("--user-agent", "bot 1").userAgent, "bot 1")
        XCTAssertEqual(parse("--user-agent=bot/2").userAgent, "bot/2")
    }

    func testCredentials() {
        XCTAssertEqual(parse("-u", "me:pw").credentials, "me:pw")
        XCTAssertEqual(parse("-ume:pw").credentials, "me:pw")
        XCTAssertEqual(parse("--user", "me:").credentials, "me:")
        XCTAssertEqual(parse("--user=me:p:w").credentials, "me:p:w")
    }

    func testCACertificateFile() {
        XCTAssertNil(parse().caCertificateFile)
        XCTAssertEqual(parse("--cacert", "ca.pem").caCertificateFile, "ca.pem")
        XCTAssertEqual(parse("--cacert=/etc/ca.pem").caCertificateFile, "/etc/ca.pem")
        XCTAssertEqual(failure("--cacert"), "option '--cacert' needs a value")
        XCTAssertEqual(failure("--cacert="), "invalid value '' for '--cacert': expected a non-empty path")
    }

    func testCookieJar() {
        XCTAssertEqual(parse("--cookie-jar", "c.txt").cookieJar, "c.txt")
        XCTAssertEqual(parse("--cookie-jar=c.txt").cookieJar, "c.txt")
    }

    func testGallery() {
        XCTAssertNil(parse().galleryFile)
        XCTAssertEqual(parse("--gallery", "run.html").galleryFile, "run.html")
        XCTAssertEqual(parse("--gallery=/tmp/g.html").galleryFile, "/tmp/g.html")
        XCTAssertEqual(failure("--gallery"), "option '--gallery' needs a value")
        XCTAssertEqual(failure("--gallery="), "invalid value '' for '--gallery': expected a non-empty path")
    }

    func testBooleanFlags() {
        let options = parse("--insecure", "--allow-downgrade", "-q")
        XCTAssertTrue(options.insecure)
        XCTAssertTrue(options.allowDowngrade)
        XCTAssertTrue(options.quiet)
        XCTAssertTrue(parse("--quiet").quiet)
    }

    func testName() {
        XCTAssertEqual(parse("--name", "hash").naming, .hash)
        XCTAssertEqual(parse("--name=url").naming, .url)
        XCTAssertEqual(parse("--name=hash", "--name", "url").naming, .url)
    }

    func testExistingFilesLastOneWins() {
        XCTAssertEqual(parse("--overwrite").existingFiles, .overwrite)
        XCTAssertEqual(parse("--skip-existing").existingFiles, .skip)
        XCTAssertEqual(parse("--overwrite", "--skip-existing").existingFiles, .skip)
        XCTAssertEqual(parse("--skip-existing", "--overwrite").existingFiles, .overwrite)
    }

    func testLaterValueReplacesEarlierOne() {
        XCTAssertEqual(parse("-j", "2", "--concurrency=3").concurrency, 3)
        XCTAssertEqual(parse("-o", "a", "-o", "b").outputDirectory, "b")
    }

    // MARK: - Help and version

    func testHelpAndVersion() {
        XCTAssertEqual(parse("-h").action, .help(.brief))
        XCTAssertEqual(parse("--help").action, .help(.brief))
        XCTAssertEqual(parse("--version").action, .version)
        XCTAssertEqual(parse("--help", "--version").action, .help(.brief))
        XCTAssertEqual(parse("--version", "--help").action, .help(.brief))
        XCTAssertEqual(parse("--version", "-qh").action, .help(.brief))
    }

    func testErrorsAreReportedEvenWithHelp() {
        XCTAssertEqual(failure("--help", "--frobnicate"), "unknown option '--frobnicate'")
    }

    // MARK: - Bundling

    func testBundledFlags() {
        let options = parse("-qh")
        XCTAssertTrue(options.quiet)
        XCTAssertEqual(options.action, .help(.brief))
    }

    func testBundleEndsWithValueOptionTakingRest() {
        let options = parse("-qj4")
        XCTAssertTrue(options.quiet)
        XCTAssertEqual(options.concurrency, 4)
        XCTAssertEqual(parse("-qoq").outputDirectory, "q", "the rest of the bundle is the value, not more flags")
    }

    func testBundleEndsWithValueOptionTakingNextArgument() {
        let options = parse("-qo", "dir", "list.txt")
        XCTAssertTrue(options.quiet)
        XCTAssertEqual(options.outputDirectory, "dir")
        XCTAssertEqual(options.lists, ["list.txt"])
    }

    func testShortOptionValueIsTakenVerbatim() {
        XCTAssertEqual(failure("-j=4"), "invalid value '=4' for '-j': expected an integer from 1 to 1024")
    }

    // MARK: - Error shapes

    func testUnknownOptions() {
        XCTAssertEqual(failure("--frobnicate"), "unknown option '--frobnicate'")
        XCTAssertEqual(failure("--frobnicate=3"), "unknown option '--frobnicate'")
        XCTAssertEqual(failure("-x"), "unknown option '-x'")
        XCTAssertEqual(failure("-qx"), "unknown option '-x'")
        XCTAssertEqual(failure("--=x"), "unknown option '--=x'")
        XCTAssertEqual(failure("---"), "unknown option '---'")
    }

    func testLongNamesMustMatchExactly() {
        XCTAssertEqual(failure("--conc", "4"), "unknown option '--conc'; did you mean '--concurrency'?")
        XCTAssertEqual(failure("--insec"), "unknown option '--insec'; did you mean '--insecure'?", "suggested, never taken")
        XCTAssertEqual(failure("--Quiet"), "unknown option '--Quiet'; did you mean '--quiet'?")
    }

    func testMissingValues() {
        XCTAssertEqual(failure("--concurrency"), "option '--concurrency' needs a value")
        XCTAssertEqual(failure("-j"), "option '-j' needs a value")
        XCTAssertEqual(failure("-qj"), "option '-j' needs a value")
        XCTAssertEqual(failure("a.txt", "-o"), "option '-o' needs a value")
        for option in ["--output-dir", "--per-host", "--timeout", "--connect-timeout", "--max-time", "--retries",
                       "--header", "--user-agent", "--user", "--cookie-jar", "--max-size", "--name"] {
            XCTAssertEqual(failure(option), "option '\(option)' needs a value")
        }
    }

    /// A dataset's samples have the size asked for: --resize enlarges there unless --no-upscale;
    /// files are not enlarged unless --upscale; --max-dimension never enlarges.
    func testADatasetEnlargesByDefault() {
        XCTAssertTrue(parse("--output-format", "webdataset", "--resize", "256", "--fit", "center-crop").upscale)
        XCTAssertFalse(parse("--output-format", "webdataset", "--resize", "256", "--no-upscale").upscale)
        XCTAssertFalse(parse("--output-format", "webdataset", "--max-dimension", "256").upscale)
        XCTAssertFalse(parse("--resize", "256", "--save-as", "png").upscale)
        XCTAssertTrue(parse("--resize", "256", "--save-as", "png", "--upscale").upscale)
        XCTAssertEqual(failure("--no-upscale"), "option '--no-upscale' needs --resize N")
    }

    func testHelpTakesATopic() {
        XCTAssertEqual(parse("--help", "all").action, .help(.all))
        XCTAssertEqual(parse("-h", "requests").action, .help(.group("requests")))
        XCTAssertEqual(parse("--help=Images").action, .help(.group("images")))
        // A word that is no topic is a list, as before: `imgfetch --help urls.txt` is help.
        let options = parse("--help", "urls.txt")
        XCTAssertEqual(options.action, .help(.brief))
        XCTAssertEqual(options.lists, ["urls.txt"])
        XCTAssertEqual(failure("--help", "reqests"),
                       "invalid value 'reqests' for '--help': topics are " + HelpTopic.names.joined(separator: ", ") + "; did you mean 'requests'?")
    }

    func testFlagsRejectValues() {
        XCTAssertEqual(failure("--insecure=1"), "option '--insecure' takes no value")
        XCTAssertEqual(failure("--quiet="), "option '--quiet' takes no value")
        for flag in ["--fifo", "--lifo", "--allow-downgrade", "--overwrite", "--skip-existing", "--version"] {
            XCTAssertEqual(failure("\(flag)=yes"), "option '\(flag)' takes no value")
        }
        XCTAssertEqual(failure("--help=yes"), "invalid value 'yes' for '--help': topics are " + HelpTopic.names.joined(separator: ", "))
    }

    func testIntegerErrors() {
        let expected = "expected an integer from 1 to 1024"
        XCTAssertEqual(failure("-j", "abc"), "invalid value 'abc' for '-j': \(expected)")
        XCTAssertEqual(failure("--concurrency=0"), "invalid value '0' for '--concurrency': \(expected)")
        XCTAssertEqual(failure("-j1025"), "invalid value '1025' for '-j': \(expected)")
        XCTAssertEqual(failure("-j", "-1"), "invalid value '-1' for '-j': \(expected)")
        XCTAssertEqual(failure("-j", "+4"), "invalid value '+4' for '-j': \(expected)")
        XCTAssertEqual(failure("-j", " 4"), "invalid value ' 4' for '-j': \(expected)")
        XCTAssertEqual(failure("-j", "99999999999999999999999"),
                       "invalid value '99999999999999999999999' for '-j': \(expected)")
        XCTAssertEqual(failure("--per-host", "0"), "invalid value '0' for '--per-host': \(expected)")
        XCTAssertEqual(failure("--retries", "101"),
                       "invalid value '101' for '--retries': expected an integer from 0 to 100")
        XCTAssertEqual(failure("--retries=-1"),
                       "invalid value '-1' for '--retries': expected an integer from 0 to 100")
    }

    func testSecondsErrors() {
        let expected = "expected a number of seconds (or with ms, s, m or h) from 0.001 to 1000000"
        for bad in ["0", "0.0", "-1", "abc", "", ".", "1e3", "inf", "nan", "1.2.3", "0x10", "+5", "0.0001", "1000001"] {
            XCTAssertEqual(failure("--timeout", bad), "invalid value '\(bad)' for '--timeout': \(expected)")
        }
        XCTAssertEqual(failure("-t", "x"), "invalid value 'x' for '-t': \(expected)")
        XCTAssertEqual(failure("--connect-timeout=0"), "invalid value '0' for '--connect-timeout': \(expected)")
        XCTAssertEqual(failure("--max-time=-2"), "invalid value '-2' for '--max-time': \(expected)")
    }

    func testHeaderErrors() {
        let expected = "invalid value for '-H': expected 'Name: value' with a token name"
        XCTAssertEqual(failure("-H", "NoColon"), expected)
        XCTAssertEqual(failure("--header", ": v"), "invalid value for '--header': expected 'Name: value' with a token name")
        XCTAssertEqual(failure("-H", "Bad Name: v"), expected)
        XCTAssertEqual(failure("-H", "Name : v"), expected)
        XCTAssertEqual(failure("-H", "Ünï: v"), expected)
        XCTAssertEqual(failure("-H", ""), expected)
    }

    func testHeaderLineBreaksAreRejectedNamingOnlyTheHeader() {
        XCTAssertEqual(failure("-H", "X: a\r\nEvil: 1"), "invalid value for '-H': header 'X' must not contain CR or LF")
        XCTAssertEqual(failure("-H", "X: a\nb"), "invalid value for '-H': header 'X' must not contain CR or LF")
        XCTAssertEqual(failure("--header", "X: a\rb"), "invalid value for '--header': header 'X' must not contain CR or LF")
        XCTAssertEqual(failure("-H", "X\n: a"), "invalid value for '-H': a header must not contain CR or LF")
    }

    func testHeaderErrorsNeverEchoTheValue() {
        for bad in ["X-Api-Key: k-secret-1\n", "X-Api-Key=k-secret-1", "Bad Name: k-secret-1", "k-secret-1"] {
            let message = failure("-H", bad)
            XCTAssertFalse(message.contains("k-secret-1"), message)
        }
    }

    func testUserAgentErrors() {
        let expected = "expected a non-empty string without CR or LF"
        XCTAssertEqual(failure("--user-agent="), "invalid value '' for '--user-agent': \(expected)")
        XCTAssertEqual(failure("-A", "a\nb"), "invalid value 'a\\nb' for '-A': \(expected)")
    }

    func testCredentialErrorsNeverEchoTheValue() {
        let expected = "expected USER:PASS, or USER to be asked for the password"
        let message = failure("-u", ":secret-token")
        XCTAssertEqual(message, "invalid value for '-u': \(expected)")
        XCTAssertFalse(message.contains("secret"))
        XCTAssertEqual(failure("--user="), "invalid value for '--user': \(expected)")
        XCTAssertEqual(failure("-u", "bob:line\nbreak"), "invalid value for '-u': \(expected)")
    }

    func testEmptyPathsAreRejected() {
        XCTAssertEqual(failure("--output-dir="), "invalid value '' for '--output-dir': expected a non-empty path")
        XCTAssertEqual(failure("-o", ""), "invalid value '' for '-o': expected a non-empty path")
        XCTAssertEqual(failure("--cookie-jar="), "invalid value '' for '--cookie-jar': expected a non-empty path")
    }

    func testNameErrors() {
        XCTAssertEqual(failure("--name", "sha"), "invalid value 'sha' for '--name': expected 'url' or 'hash'")
        XCTAssertEqual(failure("--name=URL"), "invalid value 'URL' for '--name': expected 'url' or 'hash'; did you mean 'url'?")
    }

    func testControlCharactersInOptionNamesAreEscaped() {
        XCTAssertEqual(failure("--a\u{1B}b"), "unknown option '--a\\u{1b}b'")
        XCTAssertEqual(failure("--a\tb"), "unknown option '--a\\tb'")
    }

    func testStructuredError() throws {
        do {
            _ = try OptionParser.parse(["--concurrency", "abc"])
            XCTFail("expected a usage error")
        } catch {
            XCTAssertEqual(error, UsageError(option: "--concurrency",
                                             problem: .invalidValue("abc", reason: "expected an integer from 1 to 1024")))
        }
    }

    // MARK: - --resize

    func testResizeOptionsMakeOneResize() {
        let resize = parse("--save-as", "jpeg", "--resize", "256", "--fit", "pad", "--upscale", "--background", "#FF8000")
            .downloaderConfiguration(outputDirectory: ".").resize
        XCTAssertEqual(resize, Resize(size: 256, fit: .pad, upscale: true, padColor: Resize.Color(red: 255, green: 128, blue: 0)))
        let configuration = parse("--save-as", "jpeg", "--background", "000000").downloaderConfiguration(outputDirectory: ".")
        XCTAssertEqual(configuration.background, .black, "one option for what transparency is flattened onto")
        XCTAssertEqual(parse("--save-as", "jpeg").downloaderConfiguration(outputDirectory: ".").background, .white, "white by default")
        XCTAssertEqual(parse("--save-as", "png", "--max-dimension", "64").downloaderConfiguration(outputDirectory: ".").resize,
                       Resize(size: 64, fit: .keepRatioLargest))
        XCTAssertEqual(parse("--save-as", "png", "--resize", "64").downloaderConfiguration(outputDirectory: ".").resize,
                       Resize(size: 64, fit: .keepRatioLargest), "keep-ratio-largest unless --fit says otherwise")
        XCTAssertNil(parse().downloaderConfiguration(outputDirectory: ".").resize)
    }

    func testResizeOptionsThatNeedOthers() {
        XCTAssertEqual(failure("--resize", "64"), "option '--resize' needs a pixel format to write: add --save-as jpeg "
                        + "(or png, ppm, pam, webp); original bytes are saved unchanged, never resized")
        XCTAssertEqual(failure("--save-as", "png", "--resize", "64", "--max-dimension", "64"),
                       "option '--max-dimension' cannot be used with --resize: it is --resize N --fit keep-ratio-largest; give one of them")
        XCTAssertEqual(failure("--save-as", "png", "--fit", "center-crop"), "option '--fit' needs --resize N")
        XCTAssertEqual(failure("--save-as", "png", "--max-dimension", "9", "--upscale"), "option '--upscale' needs --resize N")
        XCTAssertEqual(failure("--background", "000000"), "option '--background' needs a pixel format to flatten or pad: "
                        + "add --save-as jpeg (or png, ppm, pam, webp); original bytes are saved unchanged")
        XCTAssertEqual(failure("--save-as", "png", "--pad-color", "ffffff"), "unknown option '--pad-color'; did you mean '--background'?")
        for bad in ["fff", "gggggg", "+fffff", "-fffff", "#12345", "1234567", ""] {
            XCTAssertEqual(failure("--save-as", "png", "--resize", "9", "--fit", "pad", "--background", bad),
                           "invalid value '\(bad)' for '--background': expected a color as six hex digits, RRGGBB (000000 is black, ffffff white)")
        }
        XCTAssertEqual(failure("--save-as", "png", "--resize", "9", "--fit", "square"),
                       "invalid value 'square' for '--fit': expected keep-ratio, keep-ratio-largest, center-crop, pad")
    }

    // MARK: - Input format

    func testTheListsNamesChooseTheInputFormatUnlessItIsGiven() {
        XCTAssertEqual(parse("photos.csv").table.format, .csv)
        XCTAssertEqual(parse("photos.csv", "-", "https://a.example/b.tsv").table.format, .csv, "stdin and URLs say nothing")
        XCTAssertEqual(parse("rows.ndjson").table.format, .jsonl)
        XCTAssertEqual(parse("urls.txt").table.format, .txt)
        XCTAssertEqual(parse().table.format, .txt)
        XCTAssertEqual(parse("photos.csv", "--input-format", "tsv").table.format, .tsv)
        XCTAssertTrue(parse("--input-format", "txt").inputFormatGiven)
        XCTAssertFalse(parse("photos.csv").inputFormatGiven)
        // A key column needs a table: one named .csv is one.
        XCTAssertEqual(parse("photos.csv", "--output-format", "webdataset", "--key-column", "id").table.keyColumn, "id")
        XCTAssertEqual(failure("a.csv", "b.txt"), "option '--input-format' is needed for lists whose names say different formats "
            + "('a.csv' reads as csv, 'b.txt' as txt): give it when they are of one format after all, or read them in separate runs")
        XCTAssertEqual(parse("a.csv", "b.txt", "--input-format", "csv").table.format, .csv)
    }

    // MARK: - WebDataset shards

    func testShardOptions() {
        let options = parse("--output-format", "webdataset", "--shard-samples", "500", "--input-format", "jsonl", "--key-column", "id")
        XCTAssertEqual(options.outputFormat, .webdataset)
        XCTAssertEqual(options.shardSamples, 500)
        XCTAssertEqual(options.table.keyColumn, "id")
        XCTAssertEqual(options.downloaderConfiguration(outputDirectory: ".").outputs, .handedOver)
        XCTAssertEqual(parse().downloaderConfiguration(outputDirectory: ".").outputs, .placed)
    }

    func testShardOptionsThatNeedOthersOrDoNotFit() {
        XCTAssertEqual(failure("--shard-samples", "5"), "option '--shard-samples' needs --output-format webdataset")
        XCTAssertEqual(failure("--key-column", "id", "--input-format", "csv"), "option '--key-column' needs --output-format webdataset")
        XCTAssertEqual(failure("--output-format", "webdataset", "--key-column", "id"),
                       "option '--key-column' needs a table: --input-format csv, tsv, jsonl or parquet")
        XCTAssertEqual(failure("--output-format", "webdataset", "--gallery", "g.html"),
                       "option '--gallery' cannot be used with --output-format webdataset: shards have no image files to show")
        XCTAssertEqual(failure("--output-format", "webdataset", "--overwrite"),
                       "option '--overwrite' cannot be used with --output-format webdataset: a shard is always written whole")
        XCTAssertEqual(failure("--output-format", "webdataset", "--name", "hash"),
                       "option '--name' cannot be used with --output-format webdataset: samples are named by their key")
        XCTAssertEqual(failure("--output-format", "tar"), "invalid value 'tar' for '--output-format': expected files or webdataset")
        XCTAssertEqual(failure("--output-format", "webdataset", "--shard-samples", "0"),
                       "invalid value '0' for '--shard-samples': expected an integer from 1 to 1000000")
    }

    // MARK: - --max-size

    func testMaxSizeSuffixes() {
        XCTAssertEqual(parse("--max-size", "1").maxSize, 1)
        XCTAssertEqual(parse("--max-size=1000").maxSize, 1000)
        XCTAssertEqual(parse("--max-size=2k").maxSize, 2048)
        XCTAssertEqual(parse("--max-size=2K").maxSize, 2048)
        XCTAssertEqual(parse("--max-size=3m").maxSize, 3 << 20)
        XCTAssertEqual(parse("--max-size=3M").maxSize, 3 << 20)
        XCTAssertEqual(parse("--max-size=5g").maxSize, 5 << 30)
        XCTAssertEqual(parse("--max-size=5G").maxSize, 5 << 30)
        XCTAssertEqual(parse("--max-size=8589934591G").maxSize, 8_589_934_591 << 30)
        // With B or iB, as people write sizes: binary multiples all the same, as curl counts.
        for text in ["10M", "10MB", "10MiB", "10mb"] { XCTAssertEqual(parse("--max-size", text).maxSize, 10 << 20, text) }
        XCTAssertEqual(parse("--max-size=512KiB").maxSize, 512 << 10)
        XCTAssertEqual(parse("--max-size=100B").maxSize, 100)
        XCTAssertEqual(parse("--min-free=1GB").minimumFree, 1 << 30)
    }

    func testMaxSizeErrors() {
        let expected = "expected a positive byte count, optionally with a unit: k, M or G (10M, 10MB and 10MiB all mean 10 × 1024² bytes)"
        for bad in ["0", "0k", "", "k", "M", "-1", "+1", "1.5M", "1T", "1 M", "1MBB", "1kk", "abc", "B", "MiB",
                    "99999999999999999999"] {
            XCTAssertEqual(failure("--max-size", bad), "invalid value '\(bad)' for '--max-size': \(expected)")
        }
        XCTAssertEqual(failure("--max-size=8589934592G"),
                       "invalid value '8589934592G' for '--max-size': byte count too large")
    }

    // MARK: - Mapping onto the library configuration

    func testDownloaderConfigurationMapsEveryField() {
        let options = parse("-j8", "--per-host=3", "--lifo", "-t", "20", "--connect-timeout=4", "--max-time=90",
                            "--retries=5", "-H", "X-A: 1", "-A", "bot/9", "-u", "me:pw", "--cookie-jar", "jar",
                            "--insecure", "--cacert", "ca.pem", "--allow-downgrade", "--max-size=1M", "--overwrite",
                            "-o", "ignored")
        let configuration = options.downloaderConfiguration(outputDirectory: "/tmp/resolved")
        XCTAssertEqual(configuration.outputDirectory, "/tmp/resolved")
        XCTAssertEqual(configuration.concurrency, 8)
        XCTAssertEqual(configuration.perHost, 3)
        XCTAssertEqual(configuration.order, .lifo)
        XCTAssertEqual(configuration.timeout, 20)
        XCTAssertEqual(configuration.connectTimeout, 4)
        XCTAssertEqual(configuration.maxTime, 90)
        XCTAssertEqual(configuration.retries, 5)
        XCTAssertEqual(configuration.headers, ["X-A: 1"])
        XCTAssertEqual(configuration.userAgent, "bot/9")
        XCTAssertEqual(configuration.credentials, "me:pw")
        XCTAssertEqual(configuration.cookieJar, "jar")
        XCTAssertTrue(configuration.insecure)
        XCTAssertEqual(configuration.caCertificateFile, "ca.pem")
        XCTAssertTrue(configuration.allowDowngrade)
        XCTAssertEqual(configuration.maxSize, 1 << 20)
        XCTAssertEqual(configuration.existingFiles, .overwrite)
    }

    func testDownloaderConfigurationKeepsLibraryDefaultsForDefaults() {
        let configuration = CommandLineOptions().downloaderConfiguration(outputDirectory: "out")
        let library = DownloaderConfiguration(outputDirectory: "out")
        XCTAssertEqual(configuration.userAgent, library.userAgent)
        XCTAssertEqual(configuration.userAgent, "imgfetch/\(DownloaderConfiguration.version) (+https://imgfetch.invalid/)")
        XCTAssertEqual(configuration.concurrency, library.concurrency)
        XCTAssertEqual(configuration.perHost, library.perHost)
        XCTAssertEqual(configuration.timeout, library.timeout)
        XCTAssertEqual(configuration.connectTimeout, library.connectTimeout)
        XCTAssertNil(configuration.maxTime)
        XCTAssertEqual(configuration.retries, library.retries)
        XCTAssertEqual(configuration.maxSize, library.maxSize)
        XCTAssertEqual(configuration.existingFiles, library.existingFiles)
        XCTAssertNil(configuration.credentials)
        XCTAssertNil(configuration.cookieJar)
        XCTAssertNil(configuration.caCertificateFile)
    }

    // MARK: - Help text

    func testHelpTextLinesFitIn80Columns() {
        for line in HelpText.all.split(separator: "\n", omittingEmptySubsequences: false) {
            XCTAssertLessThan(line.count, 80, "too long: \(line)")
        }
        XCTAssertTrue(HelpText.all.hasPrefix("Usage: imgfetch [OPTIONS] [URL | LIST ...]\n"))
        XCTAssertTrue(HelpText.all.hasSuffix("\n"))
        // Every status and every exit code a script may see is explained.
        XCTAssertTrue(HelpText.all.contains("saved|skipped|failed|cancelled"))
        for code in ["0", "1", "2", "130", "141"] { XCTAssertTrue(HelpText.all.contains("  \(code)  "), "help lacks exit code \(code)") }
    }

    func testHelpTextMentionsEveryOption() {
        for spec in OptionTable.options {
            XCTAssertTrue(HelpText.all.contains("--\(spec.long)"), "help lacks --\(spec.long)")
            if let short = spec.short {
                XCTAssertTrue(HelpText.all.contains("-\(short), --\(spec.long)"), "help lacks -\(short)")
            }
        }
    }

    func testHelpTextDocumentsOutputAndExitCodes() {
        for needle in ["saved|skipped|failed", "out=NAME", "priority=high|normal|low", "130", "143", "summary"] {
            XCTAssertTrue(HelpText.all.contains(needle), "help lacks \(needle)")
        }
    }
}

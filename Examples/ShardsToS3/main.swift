// A Swift program that uses ImgFetchCore alone, as another project would: it reads a CSV of URLs
// and captions, fetches every image, writes the rows into WebDataset shards in list order, and
// uploads each complete shard to an S3-compatible store. The tests build it and run it against
// the test server and moto's S3 server (LibraryBoundaryTests), so the library's boundary holds.
//
//     imgfetch-example-shards LIST.csv WORK_DIR s3://BUCKET/PREFIX [SAMPLES_PER_SHARD]
//
// The store's credentials, region and endpoint come from the AWS_* environment. One line per
// item goes to stdout (its JSON result line); the exit status is 0 when every shard went up.
import Dispatch
import FoundationEssentials
import Glibc
import ImgFetchCore

/// Writes `text` to stderr.
func warn(_ text: String) {
    var text = text + "\n"
    _ = text.withUTF8 { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 5 else {
    warn("usage: imgfetch-example-shards LIST.csv WORK_DIR s3://BUCKET/PREFIX [SAMPLES_PER_SHARD]")
    exit(2)
}
let (listPath, workDirectory, destination) = (arguments[1], arguments[2], arguments[3])
let samplesPerShard = arguments.count == 5 ? Int(arguments[4]) ?? 4 : 4

func fail(_ message: String) -> Never {
    warn("imgfetch-example-shards: \(message)")
    exit(2)
}

// The source: a CSV table with a header row, its URLs in `url`, its captions in `caption`.
let lists: [ListSource]
do {
    lists = try ListSource.openAll([listPath], settings: TableSettings(format: .csv, captionColumn: "caption"))
} catch {
    fail(error.message)
}

// The store, from the s3:// URL and the environment.
let location: S3Location
switch S3Location.parse(destination) {
case .success(let parsed): location = parsed
case .failure(let error): fail("\(destination): \(error.reason)")
}
let access: S3Access
switch S3Access.fromEnvironment(ProcessInfo.processInfo.environment) {
case .success(let found): access = found
case .failure(let error): fail(error.reason)
}
mkdir(workDirectory, 0o755)
var configuration = DownloaderConfiguration(outputDirectory: workDirectory)
configuration.outputs = .handedOver  // shards take the verified outputs; no files are placed
let store = ObjectStoreOutput(location: location, access: access, workDirectory: workDirectory,
                              settings: S3Client.Settings(retry: RetryPolicy(maxRetries: 2), userAgent: configuration.userAgent))
if let problem = store.startProblem() { fail(problem.message) }

let downloader: ImageDownloader
do {
    downloader = try ImageDownloader(configuration: configuration)
} catch {
    fail(error.message)
}

// The sink: rows into shards in list order, each complete shard uploaded (on the downloader's engine).
let printed = DispatchGroup()
var settings = DatasetWriter<Void>.Settings(directory: workDirectory, samplesPerShard: samplesPerShard,
                                            pixelExtension: nil, fingerprint: "imgfetch-example-shards/1")
settings.upload = ShardUpload(store: store, downloader: downloader)
let shards = DatasetWriter<Void>(settings: settings, reporting: .init(
    count: { _, _ in },
    emit: { report in
        print(JSONLine.encode(report), terminator: "")
        printed.leave()
    },
    revise: { _, _ in }))

// The list, row by row: each row's place decides its shard and its key.
let input = ShardInput()
var sequence = 0
for list in lists {
    while let (line, entry) = list.next() {
        if case .skip = entry { continue }
        let (shard, row) = shards.position(of: sequence)
        let key = ShardNames(shard: shard).key(row: row)
        let position = ListPosition(listName: list.name, line: line)
        let rowSequence = sequence
        input.add(entry, key: key)
        printed.enter()
        switch entry {
        case .item(let item):
            downloader.download(item.url) { result in
                let report = ItemReport(position: position, displayURL: item.url.redacted, result: result, row: item.row,
                                        sampleKey: key)
                shards.finished(rowSequence, report, tag: ())
            }
        case .invalid(let text, let reason, let tableRow):
            let report = ItemReport(position: position, displayURL: text, result: .failed(DownloadError(.invalidInput, reason)),
                                    row: tableRow, sampleKey: key)
            shards.finished(rowSequence, report, tag: ())
        case .unreadable(let reason):
            fail("\(listPath): \(reason)")
        case .skip:
            break
        }
        sequence += 1
        if row == samplesPerShard - 1 { shards.inputComplete(shard: shard, digest: input.finish()) }
    }
}
if sequence % samplesPerShard != 0 { shards.inputComplete(shard: sequence / samplesPerShard, digest: input.finish()) }
shards.listEnded(rows: sequence)
printed.wait()
let problems = shards.finish()
downloader.close()
for problem in problems { warn("imgfetch-example-shards: \(problem)") }
exit(problems.isEmpty ? 0 : 1)

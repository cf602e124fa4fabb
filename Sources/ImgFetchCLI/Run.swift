import Dispatch
import Foundation
import ImgFetchCore

/// One run over the lists: each line becomes a request (or a failed item), results go to the reporter.
///
/// The list is streamed: each request is handed to the downloader as soon as its line is read.
struct Run {
    let options: CommandLineOptions
    let reporter: ResultReporter

    func execute(_ lists: [ListSource]) throws(SetupError) -> Int32 {
        let started = DispatchTime.now()
        let downloader: ImageDownloader
        do {
            downloader = try ImageDownloader(configuration: options.downloaderConfiguration(outputDirectory: options.outputDirectory))
        } catch {
            throw SetupError(message: error.message)
        }
        let summary = SummaryCounter()
        let outstanding = DispatchGroup()

        @Sendable func report(_ position: ListPosition, _ url: String, _ result: DownloadResult) {
            summary.add(result)
            reporter.report(ItemReport(position: position, displayURL: url, result: result))
        }

        for list in lists {
            var reader = list.lines()
            while let line = reader.next() {
                switch line {
                case .tooLong(let number):
                    let position = ListPosition(listName: list.name, line: number)
                    report(position, "", .failed(DownloadError(.invalidInput, "line longer than \(LineReader.maxLineBytes) bytes")))
                case .readError(let message, let number):
                    let position = ListPosition(listName: list.name, line: number)
                    report(position, "", .failed(DownloadError(.invalidInput, "cannot read the list: \(message)")))
                case .text(let text, let number):
                    let position = ListPosition(listName: list.name, line: number)
                    switch ListLineParser.parse(text) {
                    case .skip:
                        continue
                    case .invalid(let text, let reason):
                        report(position, SecretRedactor.redactURLText(text), .failed(DownloadError(.invalidInput, reason)))
                    case .item(let item):
                        outstanding.enter()
                        let options = DownloadOptions(fileName: item.outName, priority: item.priority)
                        downloader.download(item.url, options: options) { result in
                            report(position, item.url.redacted, result)
                            outstanding.leave()
                        }
                    }
                }
            }
        }
        outstanding.wait()
        downloader.close()
        var totals = summary.value
        totals.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        reporter.finish(totals)
        return totals.exitCode
    }
}

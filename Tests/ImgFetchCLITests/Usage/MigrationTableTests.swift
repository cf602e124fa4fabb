import Foundation
import XCTest
@testable import ImgFetchCLI

/// docs/DATASETS.md's "Coming from img2dataset" table names every option of img2dataset's
/// `download()`, each imgfetch option it names exists, and typing img2dataset's spelling gets
/// that option suggested, or the reason imgfetch needs none.
final class MigrationTableTests: XCTestCase {
    /// img2dataset 1.47's `download()` parameters, in its order.
    static let img2datasetOptions = [
        "url_list", "image_size", "output_folder", "processes_count", "resize_mode", "resize_only_if_bigger",
        "upscale_interpolation", "downscale_interpolation", "encode_quality", "encode_format", "skip_reencode",
        "output_format", "input_format", "url_col", "caption_col", "bbox_col", "thread_count", "number_sample_per_shard",
        "extract_exif", "save_additional_columns", "timeout", "enable_wandb", "wandb_project", "oom_shard_count",
        "compute_hash", "verify_hash", "distributor", "subjob_size", "retries", "disable_all_reencoding", "min_image_size",
        "max_image_area", "max_aspect_ratio", "incremental_mode", "max_shard_retry", "user_agent_token",
        "disallowed_header_directives",
    ]

    private func rows() throws -> [(String, String)] {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/DATASETS.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        let start = try XCTUnwrap(text.range(of: "\n## Coming from img2dataset\n"))
        let section = text[start.upperBound...]
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        return section[..<end].split(separator: "\n").filter { $0.hasPrefix("| `") }.map { line in
            let cells = line.split(separator: "|", maxSplits: 2).map { $0.trimmingCharacters(in: .whitespaces) }
            return (cells[0].replacingOccurrences(of: "`", with: ""), cells[1])
        }
    }

    func testEveryImg2datasetOptionHasARow() throws {
        XCTAssertEqual(try rows().map(\.0), Self.img2datasetOptions)
    }

    func testTheOptionsNamedExistAndImg2datasetsSpellingLeadsToThem() throws {
        for (theirs, ours) in try rows() {
            let named = ours.split(separator: "`").map(String.init).filter { $0.hasPrefix("--") }
                .map { String($0.prefix { $0 != " " && $0 != "=" }) }
            for option in named {
                XCTAssertNotNil(OptionTable.byLongName[String(option.dropFirst(2))], "\(theirs): \(option) is not an option")
            }
            if OptionTable.byLongName[theirs] != nil { continue }  // the same name: `timeout`, `retries`
            var error: UsageError?
            XCTAssertThrowsError(try OptionParser.parse(["--" + theirs, "1"]), theirs) { error = $0 as? UsageError }
            if case .foreignOption(let reason)? = error?.problem {
                // The command line says what the table says: not needed, or not supported.
                let expected = ours.hasPrefix("not supported") ? "img2dataset's; imgfetch does not support it: "
                    : "img2dataset's; imgfetch needs none: "
                XCTAssertTrue(reason.hasPrefix(expected), "--\(theirs): \(reason)")
            } else {
                XCTAssertFalse(ours.hasPrefix("not needed") || ours.hasPrefix("not supported"),
                               "--\(theirs): expected the reason imgfetch needs none, got \(String(describing: error))")
                XCTAssertTrue(named.contains(error?.suggestion ?? ""), "--\(theirs): suggests \(String(describing: error?.suggestion)), the table says \(named)")
            }
        }
    }
}

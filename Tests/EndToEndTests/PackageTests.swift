import Foundation
import XCTest

/// The release artifacts of `Scripts/package`, tried where a user meets them: the binary where the
/// Swift toolchain cannot be seen, the .deb and the tarball installed on a fresh Debian 12 root as
/// the README's install section says, and the container image run against the test server.
/// `Scripts/test` builds the artifacts (in the background, while the other suites run) and runs
/// these after them.
final class PackageTests: EndToEndTestCase {
    private var packaged: PackagedArtifacts!

    override func setUpWithError() throws {
        try super.setUpWithError()
        packaged = try PackagedArtifacts()
    }

    /// The version the README's examples name: the package's, without `+dirty`.
    private var releaseVersion: String { packaged.version.replacingOccurrences(of: "+dirty", with: "") }

    /// A README command with the artifacts' names as this build made them (`+dirty` from a tree
    /// with uncommitted changes), after checking that it names this release's version.
    private func asBuilt(_ command: String) -> String {
        XCTAssertTrue(command.contains(releaseVersion), "the README shows another version than \(releaseVersion): \(command)")
        return command.replacingOccurrences(of: "imgfetch_\(releaseVersion)_", with: "imgfetch_\(packaged.version)_")
            .replacingOccurrences(of: "imgfetch-\(releaseVersion)-", with: "imgfetch-\(packaged.version)-")
            .replacingOccurrences(of: "imgfetch:\(releaseVersion)", with: "imgfetch:" + packaged.version.replacingOccurrences(of: "+", with: "-"))
    }

    /// A directory for a clean root's `/work`: the artifacts as `Scripts/package` left them (the
    /// .deb, the tarball, SHA256SUMS) and `urls.txt`, a list of two sample images on the test
    /// server; returns it, with the images' names.
    private func stageArtifacts() throws -> (URL, [String]) {
        let work = scratch.file("root-work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        for file in [packaged.deb, packaged.tarball, packaged.dist.appendingPathComponent("SHA256SUMS")] {
            try FileManager.default.copyItem(at: file, to: work.appendingPathComponent(file.lastPathComponent))
        }
        return (work, try writeSampleList(in: work))
    }

    /// A list of two sample images on the test server, as `urls.txt` in `directory`.
    private func writeSampleList(in directory: URL) throws -> [String] {
        let names = try server.addSamples(count: 1, seed: 3)
        try names.map { server.url("/files/" + $0) }.joined(separator: "\n").appending("\n")
            .write(to: directory.appendingPathComponent("urls.txt"), atomically: true, encoding: .utf8)
        return names
    }

    // MARK: - The binary

    func testThePackagedBinaryLoadsNothingOfTheToolchain() throws {
        let toolchain = try PackagedArtifacts.toolchain
        XCTAssertFalse(toolchain.isEmpty)
        let dynamic = try ImgFetchRunner.runShell("readelf -d '\(packaged.binary.path)'")
        XCTAssertEqual(dynamic.exitCode, 0, dynamic.stderr)
        let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        XCTAssertTrue(needed.contains { $0.contains("[libcurl.so.4]") }, dynamic.stdout)
        XCTAssertFalse(needed.contains { $0.contains("libswift") || $0.contains("Foundation") || $0.contains("dispatch") }, dynamic.stdout)
        XCTAssertFalse(dynamic.stdout.contains("RUNPATH") || dynamic.stdout.contains("RPATH"), "no library search path of its own")
        let ldd = try ImgFetchRunner.runShell("ldd '\(packaged.binary.path)'")
        XCTAssertEqual(ldd.exitCode, 0, ldd.stderr)
        XCTAssertFalse(ldd.stdout.contains(toolchain), ldd.stdout)
        XCTAssertFalse(ldd.stdout.contains("not found"), ldd.stdout)

        // Where the toolchain cannot be seen, the packaged binary starts, and a `swift build` one cannot.
        let version = try PackagedArtifacts.withoutToolchain(packaged.binary, ["--version"])
        XCTAssertEqual(version.exitCode, 0, version.stderr)
        XCTAssertTrue(version.stdout.hasPrefix("imgfetch \(packaged.version) (libcurl/"), version.stdout)
        let debug = try PackagedArtifacts.withoutToolchain(ImgFetchRunner.binary, ["--version"])
        XCTAssertEqual(debug.exitCode, 127, "the toolchain was not hidden: \(debug.stdout)")
        XCTAssertTrue(debug.stderr.contains("libswift"), debug.stderr)
    }

    func testWithoutTheToolchainItVerifiesEveryFormatAndWritesAShard() throws {
        let samples = try EveryFormat(servedBy: server)
        let list = try scratch.write("urls.txt", samples.formats.keys.sorted().map { server.url("/files/" + $0) }.joined(separator: "\n") + "\n")
        let files = try PackagedArtifacts.withoutToolchain(packaged.binary, [list, "-o", outputDirectory, "--jsonl"])
        XCTAssertEqual(files.exitCode, 0, files.stderr)
        let items = try files.stdout.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(items.count, samples.formats.count)
        for item in items {
            let name = try XCTUnwrap((item["url"] as? String)?.split(separator: "/").last.map(String.init))
            XCTAssertEqual(item["status"] as? String, "saved", "\(name): \(item)")
            XCTAssertEqual(item["verified"] as? Bool, true, name)
            XCTAssertEqual(item["format"] as? String, samples.formats[name], name)
            XCTAssertEqual(item["width"] as? Int, samples.width, name)
        }

        let shards = scratch.file("shards")
        let dataset = try PackagedArtifacts.withoutToolchain(packaged.binary, [
            list, "-o", shards.path, "--output-format", "webdataset", "--save-as", "jpeg", "--resize", "64", "--fit", "center-crop",
        ])
        XCTAssertEqual(dataset.exitCode, 0, dataset.stderr)
        let members = try ImgFetchRunner.runShell("tar -tf '\(shards.appendingPathComponent("000000.tar").path)'")
        XCTAssertEqual(members.exitCode, 0, members.stderr)
        let names = members.stdout.split(separator: "\n")
        XCTAssertEqual(names.filter { $0.hasSuffix(".jpg") }.count, samples.formats.count, members.stdout)
        XCTAssertEqual(names.filter { $0.hasSuffix(".json") }.count, samples.formats.count, members.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: shards.appendingPathComponent("000000_stats.json").path))
    }

    // MARK: - The artifacts

    func testTheArtifactsHoldTheFilesInDebiansPathsAndTheirChecksums() throws {
        let sums = try ImgFetchRunner.runShell("cd '\(packaged.dist.path)' && sha256sum --check --strict SHA256SUMS")
        XCTAssertEqual(sums.exitCode, 0, sums.stdout + sums.stderr)
        XCTAssertEqual(sums.stdout.split(separator: "\n").count, 2, sums.stdout)

        let files = [
            "usr/bin/imgfetch", "usr/share/man/man1/imgfetch.1.gz", "usr/share/bash-completion/completions/imgfetch",
            "usr/share/zsh/vendor-completions/_imgfetch", "usr/share/fish/vendor_completions.d/imgfetch.fish",
            "usr/share/doc/imgfetch/copyright", "usr/share/doc/imgfetch/changelog.gz", "usr/share/lintian/overrides/imgfetch",
        ]
        let listing = try ImgFetchRunner.runShell("dpkg-deb --contents '\(packaged.deb.path)'")
        XCTAssertEqual(listing.exitCode, 0, listing.stderr)
        let inDeb = Set(listing.stdout.split(separator: "\n").compactMap { line in
            line.split(separator: " ").last.map { String($0.dropFirst(2)) }
        }.filter { !$0.isEmpty && !$0.hasSuffix("/") })
        XCTAssertEqual(inDeb, Set(files), listing.stdout)
        XCTAssertTrue(listing.stdout.split(separator: "\n").allSatisfy { $0.contains(" root/root ") }, listing.stdout)

        // The tarball: the same files under one directory, in a /usr/local layout.
        let tarListing = try ImgFetchRunner.runShell("tar -tzf '\(packaged.tarball.path)'")
        let top = "imgfetch-\(packaged.version)-linux-x86_64/"
        let inTar = Set(tarListing.stdout.split(separator: "\n").map(String.init).filter { !$0.hasSuffix("/") })
        let expected = Set(files.filter { !$0.hasPrefix("usr/share/lintian") }.map {
            top + $0.dropFirst(4).replacingOccurrences(of: "zsh/vendor-completions", with: "zsh/site-functions")
        })
        XCTAssertEqual(inTar, expected, tarListing.stdout)
        let binaries = try ImgFetchRunner.runShell("""
            cmp <(dpkg-deb --fsys-tarfile '\(packaged.deb.path)' | tar -xO ./usr/bin/imgfetch) \
                <(tar -xzOf '\(packaged.tarball.path)' \(top)bin/imgfetch) && \
            cmp '\(packaged.binary.path)' <(tar -xzOf '\(packaged.tarball.path)' \(top)bin/imgfetch)
            """)
        XCTAssertEqual(binaries.exitCode, 0, "the .deb, the tarball and the tested binary differ: " + binaries.stdout)

        // The man page and completions are the binary's own.
        let manPage = try ImgFetchRunner.runShell("diff <(tar -xzOf '\(packaged.tarball.path)' \(top)share/man/man1/imgfetch.1.gz | gunzip) <('\(packaged.binary.path)' --man)")
        XCTAssertEqual(manPage.exitCode, 0, manPage.stdout)

        // Depends: every library the binary names, by its package (dpkg-shlibdeps), with a version.
        let control = try ImgFetchRunner.runShell("dpkg-deb --field '\(packaged.deb.path)' Depends Version")
        for package in ["libcurl4 (>=", "libpng16-16 (>=", "libjpeg62-turbo (>=", "libwebp7 (>=", "libgif7 (>=",
                        "libavif15 (>=", "libtiff6 (>=", "libsqlite3-0 (>=", "libssl3 (>=", "libc6 (>="] {
            XCTAssertTrue(control.stdout.contains(package), control.stdout)
        }
        XCTAssertTrue(control.stdout.contains("Version: \(packaged.version)\n"), control.stdout)
        XCTAssertFalse(control.stdout.contains("swift"), control.stdout)

        // lintian, as Scripts/package ran it: clean but for the documented overrides.
        let lintian = try ImgFetchRunner.runShell("lintian --fail-on error,warning,info --display-info '\(packaged.deb.path)' 2>&1")
        XCTAssertEqual(lintian.exitCode, 0, lintian.stdout)
        XCTAssertFalse(lintian.stdout.contains(": "), lintian.stdout)
    }

    /// Another checkout of the same commit (with the same uncommitted changes, if any), in another
    /// directory, builds artifacts with the same checksums: `Scripts/package-support/build-elsewhere`,
    /// which `Scripts/test` runs in the background (`IMGFETCH_DIST_ELSEWHERE`); run alone, this test
    /// runs it itself (a release build from nothing, a minute or two).
    func testAnotherCheckoutOfTheCommitBuildsTheSameBytes() throws {
        let root = PackagedArtifacts.root
        guard try ImgFetchRunner.runShell("git -C '\(root.path)' rev-parse --git-dir").exitCode == 0 else {
            throw XCTSkip("\(root.path) is not a git checkout")
        }
        var elsewhere = ProcessInfo.processInfo.environment["IMGFETCH_DIST_ELSEWHERE"].map { URL(fileURLWithPath: $0) }
        if elsewhere == nil {
            let build = try ImgFetchRunner.run([scratch.file("dist").path],
                                               executable: root.appendingPathComponent("Scripts/package-support/build-elsewhere"))
            XCTAssertEqual(build.exitCode, 0, String(build.stderr.suffix(3000)))
            elsewhere = scratch.file("dist")
        }
        let mine = try String(contentsOf: packaged.dist.appendingPathComponent("SHA256SUMS"), encoding: .utf8)
        let theirs = try String(contentsOf: try XCTUnwrap(elsewhere).appendingPathComponent("SHA256SUMS"), encoding: .utf8)
        XCTAssertEqual(theirs, mine, "another checkout's build gave other bytes")
        XCTAssertTrue(mine.contains("imgfetch_\(packaged.version)_amd64.deb"), mine)
    }

    // MARK: - A machine without Swift

    func testTheDebianPackageInstallsOnACleanDebianRootAsTheReadmeSays() throws {
        let section = try PackagedArtifacts.readmeSection("## Install")
        let commands = PackagedArtifacts.commands(in: section)
        let check = try XCTUnwrap(commands.first { $0.hasPrefix("sha256sum ") }, section)
        let install = try XCTUnwrap(commands.first { $0.hasPrefix("apt install ./imgfetch_") }, section)
        let example = try XCTUnwrap(commands.first { $0.hasPrefix("imgfetch ") }, section)
        XCTAssertEqual(example, "imgfetch urls.txt -o pics", "the README's first example")

        let (work, names) = try stageArtifacts()
        let run = try PackagedArtifacts.inCleanRoot(work, """
            if command -v swift; then echo 'swift is here'; exit 3; fi
            if dpkg-query -W -f '${Package}\\n' | grep -- '-dev$'; then echo 'a -dev package is here'; exit 3; fi
            \(check)
            echo Y | \(asBuilt(install)) > apt.log 2>&1 || { cat apt.log; exit 4; }  # Y: the user's answer
            \(example)
            echo "exit $?"
            ls /usr/share/man/man1/imgfetch.1.gz /usr/share/bash-completion/completions/imgfetch
            # Without /proc (a bare chroot), the arguments still arrive.
            umount /proc && imgfetch --version
            """)
        XCTAssertEqual(run.exitCode, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("exit 0"), run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("\nimgfetch \(packaged.version) (libcurl/"), run.stdout)
        for name in names {
            XCTAssertEqual(try Data(contentsOf: work.appendingPathComponent("pics/" + name)), try server.fileData(name), name)
        }
    }

    func testTheTarballRunsOnACleanDebianRootAsTheReadmeSays() throws {
        let section = try PackagedArtifacts.readmeSection("## Install")
        let prose = section.replacingOccurrences(of: "\n", with: " ")
        let unpack = try XCTUnwrap(PackagedArtifacts.commands(in: section).first { $0.hasPrefix("tar -xzf imgfetch-") }, section)

        // The libraries the README names are the ones the binary loads.
        let needed = try ImgFetchRunner.runShell("readelf -d '\(packaged.binary.path)' | sed -n 's/.*(NEEDED).*\\[\\(.*\\)\\]/\\1/p'")
        let glibc: Set<String> = ["libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2"]
        let named = Set(prose.matches(of: /`(lib[A-Za-z0-9_+.-]+\.so\.[0-9]+)`/).map { String($0.1) })
        XCTAssertEqual(named, Set(needed.stdout.split(separator: "\n").map(String.init)).subtracting(glibc), section)
        let depends = try ImgFetchRunner.runShell("dpkg-deb --field '\(packaged.deb.path)' Depends")
        let libc = try XCTUnwrap(depends.stdout.firstMatch(of: /libc6 \(>= ([0-9.]+)\)/)?.1)
        XCTAssertTrue(prose.contains("glibc \(libc) or later"), "the README names glibc \(libc): \(prose)")

        // On a clean root with those libraries (installed by apt from the package's Depends, without it).
        let (work, names) = try stageArtifacts()
        let libraries = depends.stdout.split(separator: ",").map { $0.split(separator: " ").first.map(String.init) ?? "" }
        let run = try PackagedArtifacts.inCleanRoot(work, """
            apt-get install -y --no-install-recommends \(libraries.joined(separator: " ")) > apt.log 2>&1 || { cat apt.log; exit 4; }
            \(asBuilt(unpack))
            command -v imgfetch
            imgfetch urls.txt -o pics
            echo "exit $?"
            ls /usr/local/share/man/man1/imgfetch.1.gz /usr/local/share/zsh/site-functions/_imgfetch
            """)
        XCTAssertEqual(run.exitCode, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("/usr/local/bin/imgfetch\n"), run.stdout)
        XCTAssertTrue(run.stdout.contains("exit 0"), run.stdout + run.stderr)
        for name in names {
            XCTAssertEqual(try Data(contentsOf: work.appendingPathComponent("pics/" + name)), try server.fileData(name), name)
        }
    }

    // MARK: - The container image

    func testTheImageRunsTheReadmeExampleAgainstTheTestServer() throws {
        let image = try XCTUnwrap(packaged.image, "IMGFETCH_IMAGE is not set (Scripts/test builds the image and sets it)")
        let section = try PackagedArtifacts.readmeSection("## Install")
        let command = try XCTUnwrap(PackagedArtifacts.commands(in: section).first { $0.hasPrefix("podman run ") }, section)
        let config = try ImgFetchRunner.runShell("podman image inspect --format '{{.Config.User}} {{.Config.Entrypoint}}' '\(image)'")
        XCTAssertEqual(config.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "65532:65532 [/usr/bin/imgfetch]", config.stderr)

        let work = scratch.file("image-work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let names = try writeSampleList(in: work)
        let probe = try ImgFetchRunner.runShell("podman run --rm '\(image)' --version")
        if probe.exitCode == 0 {
            // The README's command, on the host's network (the test server listens on its loopback).
            let run = try ImgFetchRunner.runShell("cd '\(work.path)' && " + asBuilt(command).replacingOccurrences(of: "podman run ", with: "podman run --network host "))
            XCTAssertEqual(run.exitCode, 0, run.stdout + run.stderr)
            // Nothing but imgfetch is in it: no shell to start.
            let shell = try ImgFetchRunner.runShell("podman run --rm --entrypoint /bin/sh '\(image)' -c true")
            XCTAssertNotEqual(shell.exitCode, 0, "the image has a shell")
        } else {
            // podman cannot start containers here: the image's files, run as the clean root runs its command.
            print("PackageTests: podman cannot run containers here (\(probe.stderr.prefix(200))); running the image's root file system with chroot")
            let rootfs = scratch.file("rootfs")
            try FileManager.default.createDirectory(at: rootfs, withIntermediateDirectories: true)
            let run = try ImgFetchRunner.runShell("""
                set -e
                container=$(podman create '\(image)')
                podman export "$container" | tar -x -C '\(rootfs.path)'
                podman rm "$container" > /dev/null
                test ! -e '\(rootfs.path)/bin/sh'
                mkdir -p '\(rootfs.path)/work'
                chown 65532:65532 '\(work.path)'
                unshare --mount --propagation private sh -c "mount --bind '\(work.path)' '\(rootfs.path)/work' && \
                    exec chroot --userspec=65532:65532 '\(rootfs.path)' /usr/bin/imgfetch /work/urls.txt -o /work/pics"
                """)
            XCTAssertEqual(run.exitCode, 0, run.stdout + run.stderr)
        }
        for name in names {
            XCTAssertEqual(try Data(contentsOf: work.appendingPathComponent("pics/" + name)), try server.fileData(name), name)
        }
    }
}

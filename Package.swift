// swift-tools-version:6.0
import PackageDescription

// The C targets' release builds check buffer sizes where the compiler knows them (glibc's
// _FORTIFY_SOURCE, as Debian builds its own C code; lintian asks for it).
let hardenedC: [CSetting] = [.define("_FORTIFY_SOURCE", to: "2", .when(configuration: .release))]

let package = Package(
    name: "imgfetch",
    products: [
        .executable(name: "imgfetch", targets: ["imgfetch"]),
        .library(name: "ImgFetchCore", targets: ["ImgFetchCore"]),
    ],
    targets: [
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng",
                       providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg",
                       providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux",
                       providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CGIF", pkgConfig: "libgif",
                       providers: [.apt(["libgif-dev"])]),
        // No pkgConfig: libavif.pc adds -DAVIF_DLL, which SwiftPM refuses with a warning; the header
        // and library are in the default paths.
        .systemLibrary(name: "CAVIF",
                       providers: [.apt(["libavif-dev"])]),
        .systemLibrary(name: "CTIFF", pkgConfig: "libtiff-4",
                       providers: [.apt(["libtiff-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        // A C target gets its system libraries' pkg-config flags but not their module maps' `link`
        // lines, and one pkg-config name covers one library: the rest are linked here.
        .target(name: "CImageCodec", dependencies: ["CPNG", "CJPEG", "CWebP", "CGIF", "CAVIF", "CTIFF"],
                cSettings: hardenedC,
                linkerSettings: [.linkedLibrary("webpdemux"), .linkedLibrary("webpmux"), .linkedLibrary("avif")]),
        .target(name: "ImgFetchCore", dependencies: ["CCurl", "CCrypto", "CSQLite", "CImageCodec", "CThreadName", "CSocketEvents",
                                                     "CFileSystem", "CDecompress"]),
        .target(name: "ImgFetchCLI", dependencies: ["ImgFetchCore", "CTerminalPrompt"]),
        .executableTarget(name: "imgfetch", dependencies: ["ImgFetchCLI", "CMallocTuning", "CProcessArguments"]),
        // The tests' image encoders (every image a test decodes is made by them, then damaged):
        // built for the tests and the fuzzer's seeds, never into the shipped codec. They fail
        // through the codec's own setjmp machinery, so they see its internal header.
        .target(name: "CImageCodecFixtures", dependencies: ["CImageCodec", "CPNG", "CJPEG", "CWebP", "CGIF", "CAVIF", "CTIFF"],
                path: "Tests/CImageCodecFixtures", cSettings: [.headerSearchPath("../../Sources/CImageCodec")]),
        .testTarget(name: "ImgFetchCoreTests", dependencies: ["ImgFetchCore", "CImageCodec", "CImageCodecFixtures"]),
        .testTarget(name: "ImgFetchCLITests", dependencies: ["ImgFetchCLI", "ImgFetchCore"]),
        // A program that uses the library alone, as another project would (LibraryBoundaryTests runs it).
        .executableTarget(name: "imgfetch-example-shards", dependencies: ["ImgFetchCore"], path: "Examples/ShardsToS3"),
        .testTarget(name: "EndToEndTests", dependencies: ["imgfetch", "imgfetch-example-shards"]),
        .target(name: "CMallocTuning", cSettings: hardenedC),
        .target(name: "CProcessArguments", cSettings: hardenedC),
        .target(name: "CTerminalPrompt", cSettings: hardenedC),
        .target(name: "CThreadName", cSettings: hardenedC),
        .target(name: "CSocketEvents", cSettings: hardenedC),
        .target(name: "CFileSystem", cSettings: hardenedC),
        // Parquet pages' codecs: Snappy, Zstandard and gzip, from Debian's libraries.
        .target(name: "CDecompress", cSettings: hardenedC,
                linkerSettings: [.linkedLibrary("snappy"), .linkedLibrary("zstd"), .linkedLibrary("z")]),
    ],
    swiftLanguageModes: [.v6]
)

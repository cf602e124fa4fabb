@testable import ImgFetchCore

extension FileNamer {
    /// A namer for tests, whose claims go to the system's temp directory.
    init(scheme: Scheme) {
        try! self.init(scheme: scheme, claimsDirectory: "/tmp")
    }
}

/// One connection's prepared statements and the reads and writes built on them. Used under its
/// owner's lock only.
final class CacheStatements {
    let database: SQLiteDatabase
    private let selectEntry: SQLiteStatement
    private let selectFiles: SQLiteStatement
    private let upsertEntry: SQLiteStatement
    private let deleteFilesOfURL: SQLiteStatement
    private let upsertFile: SQLiteStatement
    private let updateFreshness: SQLiteStatement
    private let deleteEntry: SQLiteStatement
    private let deleteFile: SQLiteStatement
    private let selectRobots: SQLiteStatement
    private let upsertRobots: SQLiteStatement

    private static let columns = """
        kind, format, width, height, channels, bit_depth, orientation, verified, etag, last_modified, date, age, \
        cache_control, expires, pragma, max_age, no_cache, must_revalidate, freshness_lifetime, initial_age, \
        response_time, body_size, sha256, final_url, output_width, output_height
        """

    init(_ database: SQLiteDatabase) throws(SQLiteError) {
        self.database = database
        selectEntry = try database.prepare("SELECT \(Self.columns) FROM entries WHERE url = ?")
        selectFiles = try database.prepare("SELECT name, size, inode, modified FROM files WHERE url = ? ORDER BY name")
        upsertEntry = try database.prepare("INSERT OR REPLACE INTO entries (url, \(Self.columns)) VALUES ("
            + Array(repeating: "?", count: 27).joined(separator: ", ") + ")")
        deleteFilesOfURL = try database.prepare("DELETE FROM files WHERE url = ?")
        upsertFile = try database.prepare("INSERT OR REPLACE INTO files (name, url, size, inode, modified) VALUES (?, ?, ?, ?, ?)")
        updateFreshness = try database.prepare("""
            UPDATE entries SET etag = ?, last_modified = ?, date = ?, age = ?, cache_control = ?, expires = ?, pragma = ?,
                max_age = ?, no_cache = ?, must_revalidate = ?, freshness_lifetime = ?, initial_age = ?, response_time = ?
            WHERE url = ?
            """)
        deleteEntry = try database.prepare("DELETE FROM entries WHERE url = ?")
        deleteFile = try database.prepare("DELETE FROM files WHERE name = ?")
        selectRobots = try database.prepare("SELECT status, body, expires FROM robots WHERE origin = ?")
        upsertRobots = try database.prepare("INSERT OR REPLACE INTO robots (origin, status, body, expires) VALUES (?, ?, ?, ?)")
    }

    func robots(for origin: String) throws(SQLiteError) -> StoredRobots? {
        selectRobots.bind([.text(origin)])
        defer { selectRobots.reset() }
        guard try selectRobots.step() else { return nil }
        return StoredRobots(status: Int(selectRobots.integer(0) ?? 0), body: selectRobots.blob(1), expires: selectRobots.real(2))
    }

    func storeRobots(_ robots: StoredRobots, for origin: String) throws(SQLiteError) {
        try upsertRobots.bind([.text(origin), .integer(Int64(robots.status)), .blob(robots.body), .real(robots.expires)]).run()
    }

    func entry(for url: String) throws(SQLiteError) -> CacheEntry? {
        selectEntry.bind([.text(url)])
        defer {
            selectEntry.reset()
            selectFiles.reset()
        }
        guard try selectEntry.step() else { return nil }
        let row = selectEntry
        guard let kind = row.text(0), let format = row.text(1).flatMap(ImageFormat.init(rawValue:)) else { return nil }
        var image: ImageInfo?
        if let width = row.integer(2), let height = row.integer(3), let channels = row.integer(4),
           let bitDepth = row.integer(5) {
            image = ImageInfo(width: Int(width), height: Int(height), channels: Int(channels), bitDepth: Int(bitDepth),
                              orientation: Int(row.integer(6) ?? 1), verified: row.integer(7) == 1)
            image?.outputWidth = row.integer(24).map(Int.init)
            image?.outputHeight = row.integer(25).map(Int.init)
        }
        let headers = ResponseCacheHeaders(etag: row.text(8), lastModified: row.text(9), date: row.text(10), age: row.text(11),
                                           cacheControl: row.text(12), expires: row.text(13), pragma: row.text(14))
        let freshness = CacheFreshness(lifetime: row.real(18), initialAge: row.real(19), responseTime: row.real(20))
        let bodySize = row.integer(21) ?? 0
        let hash = row.text(22) ?? ""
        let finalURL = row.text(23) ?? url
        selectFiles.bind([.text(url)])
        var files: [CacheEntry.File] = []
        while try selectFiles.step() {
            guard let name = selectFiles.text(0) else { continue }
            files.append(CacheEntry.File(name: name, size: selectFiles.integer(1) ?? -1,
                                         inode: selectFiles.integer(2).map { UInt64(bitPattern: $0) },
                                         modified: selectFiles.integer(3)))
        }
        return CacheEntry(url: url, finalURL: finalURL, kind: kind, format: format, image: image, headers: headers, freshness: freshness,
                          bodySize: bodySize, contentHash: hash, files: files)
    }

    func store(_ entry: CacheEntry) throws(SQLiteError) {
        let image = entry.image
        let values: [SQLiteValue] = [
            .text(entry.url), .text(entry.kind), .text(entry.format.rawValue),
            .optional(image?.width), .optional(image?.height), .optional(image?.channels), .optional(image?.bitDepth),
            .optional(image?.orientation), .integer(image?.verified == true ? 1 : 0),
        ] + Self.headerValues(entry.headers, entry.freshness)
            + [.integer(entry.bodySize), .text(entry.contentHash), .text(entry.finalURL),
               .optional(image?.outputWidth), .optional(image?.outputHeight)]
        try upsertEntry.bind(values).run()
        try deleteFilesOfURL.bind([.text(entry.url)]).run()
        for file in entry.files { try addFile(file, url: entry.url) }
    }

    func addFile(_ file: CacheEntry.File, url: String) throws(SQLiteError) {
        try upsertFile.bind([.text(file.name), .text(url), .integer(file.size),
                             file.inode.map { .integer(Int64(bitPattern: $0)) } ?? .null,
                             file.modified.map { .integer($0) } ?? .null]).run()
    }

    func refresh(url: String, headers: ResponseCacheHeaders, freshness: CacheFreshness) throws(SQLiteError) {
        try updateFreshness.bind(Self.headerValues(headers, freshness) + [.text(url)]).run()
    }

    func remove(url: String, names: [String]) throws(SQLiteError) {
        try deleteEntry.bind([.text(url)]).run()
        try deleteFilesOfURL.bind([.text(url)]).run()
        for name in names { try deleteFile.bind([.text(name)]).run() }
    }

    /// The header and freshness columns, in the order of `columns` (etag … response_time).
    private static func headerValues(_ headers: ResponseCacheHeaders, _ freshness: CacheFreshness) -> [SQLiteValue] {
        let directives = headers.directives
        return [
            .optional(headers.etag), .optional(headers.lastModified), .optional(headers.date), .optional(headers.age),
            .optional(headers.cacheControl), .optional(headers.expires), .optional(headers.pragma),
            .optional(directives.maxAge), .integer(directives.noCache ? 1 : 0), .integer(directives.mustRevalidate ? 1 : 0),
            .real(freshness.lifetime), .real(freshness.initialAge), .real(freshness.responseTime),
        ]
    }
}

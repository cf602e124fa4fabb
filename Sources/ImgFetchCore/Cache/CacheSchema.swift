/// The tables of the cache index. A file is named once (primary key): it belongs to one URL.
enum CacheSchema {
    static let tables = """
        CREATE TABLE IF NOT EXISTS entries (
            url TEXT PRIMARY KEY,
            final_url TEXT NOT NULL,
            kind TEXT NOT NULL,
            format TEXT NOT NULL,
            width INTEGER, height INTEGER, channels INTEGER, bit_depth INTEGER, orientation INTEGER,
            verified INTEGER NOT NULL,
            etag TEXT, last_modified TEXT, date TEXT, age TEXT, cache_control TEXT, expires TEXT, pragma TEXT,
            max_age INTEGER, no_cache INTEGER NOT NULL, must_revalidate INTEGER NOT NULL,
            freshness_lifetime REAL NOT NULL, initial_age REAL NOT NULL, response_time REAL NOT NULL,
            body_size INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            output_width INTEGER, output_height INTEGER
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS files (
            name TEXT PRIMARY KEY,
            url TEXT NOT NULL,
            size INTEGER NOT NULL,
            inode INTEGER,
            modified INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS files_by_url ON files(url);
        CREATE TABLE IF NOT EXISTS robots (
            origin TEXT PRIMARY KEY,
            status INTEGER NOT NULL,
            body BLOB NOT NULL,
            expires REAL NOT NULL
        ) WITHOUT ROWID;
        """

    /// Creates the tables; an index written by another schema version is emptied and started anew (it
    /// is a cache), except version 3, which lacks only the output size and gains its columns, and
    /// version 4, which lacks only the robots table.
    static func prepare(_ database: SQLiteDatabase) throws(SQLiteError) {
        // The statement must be finished before DROP TABLE, which an active read would block.
        let current = try { () throws(SQLiteError) -> Int64 in
            let version = try database.prepare("PRAGMA user_version")
            return try version.step() ? version.integer(0) ?? 0 : 0
        }()
        if current == 3 {
            try database.execute("ALTER TABLE entries ADD COLUMN output_width INTEGER; ALTER TABLE entries ADD COLUMN output_height INTEGER")
        } else if current != 0 && current != 4 && current != Int64(CacheIndex.schemaVersion) {
            try database.execute("DROP TABLE IF EXISTS entries; DROP TABLE IF EXISTS files")
        }
        try database.execute(tables)
        try database.execute("PRAGMA user_version = \(CacheIndex.schemaVersion)")
    }
}

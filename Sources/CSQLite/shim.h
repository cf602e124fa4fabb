#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
// The cache index (Sources/ImgFetchCore/Cache) keeps its entries in SQLite.
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import:
// it tells sqlite3_bind_text to copy the bytes before the call returns.
static inline sqlite3_destructor_type CSQLite_transient(void) { return SQLITE_TRANSIENT; }

// sqlite3_db_config is variadic, which Swift cannot call: closing the connection then leaves the
// WAL for the next run to read instead of copying it into the database and fsyncing both, which
// cost a short run tens of milliseconds at its very end.
static inline int CSQLite_skipCheckpointOnClose(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}
#endif

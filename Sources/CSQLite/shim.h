#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
// The cache index (Sources/ImgFetchCore/Cache) keeps its entries in SQLite.
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import:
// it tells sqlite3_bind_text to copy the bytes before the call returns.
static inline sqlite3_destructor_type CSQLite_transient(void) { return SQLITE_TRANSIENT; }
#endif

// include/ncclpm/store/schema.h
//
// The incident database's schema, versioned with PRAGMA user_version.
// docs/schema.md documents every table and column; keep them in step.
#pragma once

#include <filesystem>

#include "ncclpm/store/sqlite.h"

namespace ncclpm::store {

inline constexpr int kSchemaVersion = 8;
/// Version 7 differs only in its line blocks, row-wise (format version 2),
/// which are still read; an ingest into it writes columnar ones and marks it
/// version 8, so that an older ncclpm refuses it instead of failing on them.
inline constexpr int kOldestReadableSchema = 7;

/// The CREATE statements of every table and view (no indexes).
const char* schema_sql();
/// Indexes, created after a bulk load (cheaper than maintaining them during it).
const char* index_sql();

/// Checks that `db` is an ncclpm database this build can read: not another
/// application's SQLite file, not from a newer schema. An empty database is
/// given the schema when `create` is true.
Status check_or_create_schema(Connection& db, bool create);
/// "the database is damaged (...): truncated or overwritten", with what to do.
Error damaged_database(const Connection& db);

/// Opens an existing incident database read-only, with a clear error when it
/// is missing or is not one.
Result<Connection> open_for_reading(const std::filesystem::path& path);
/// Opens an existing incident database for writing findings and replays.
Result<Connection> open_for_update(const std::filesystem::path& path);

}  // namespace ncclpm::store

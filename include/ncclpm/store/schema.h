// include/ncclpm/store/schema.h
//
// The incident database's schema, versioned with PRAGMA user_version.
// docs/schema.md documents every table and column; keep them in step.
#pragma once

#include <filesystem>

#include "ncclpm/store/sqlite.h"

namespace ncclpm::store {

inline constexpr int kSchemaVersion = 6;

/// The CREATE statements of every table and view (no indexes).
const char* schema_sql();
/// Lines per (job_id, rank, host), counted from the stored lines: what
/// ingest keeps in rank_lines, for a database written before it did.
inline constexpr const char* kCountRankLinesSql =
    "SELECT job_id, rank, host, count(*) AS lines FROM (SELECT job_id, rank, host FROM events WHERE rank IS NOT NULL"
    " UNION ALL SELECT job_id, rank, host FROM unparsed_lines WHERE rank IS NOT NULL) GROUP BY job_id, rank, host";
/// progress_streams counted from the stored training-progress lines: what
/// ingest tallies while writing, for a database written before it did.
inline constexpr const char* kCountProgressStreamsSql =
    "SELECT e.job_id, e.file_id, e.rank, p.source, coalesce(p.label, '') AS label,"
    " sum(coalesce(p.seconds_per_step, 0) > 0 AND coalesce(p.unit, 'it') = 'it') AS timed_lines,"
    " max(CASE WHEN p.source = 'tqdm' AND coalesce(p.unit, 'it') = 'it' AND p.step IS NOT NULL AND p.total > 0"
    " THEN e.event_id END) AS last_bar_event_id, max(e.event_id) AS sample_event_id"
    " FROM training_progress p JOIN events e USING (event_id)"
    " GROUP BY e.job_id, e.file_id, e.rank, p.source, coalesce(p.label, '')";
/// What to read a summary ingest keeps from: `table` where the database has
/// it, else `count_sql` as a subquery (a database written before ingest kept
/// it, opened read-only, so not brought up to date).
Result<std::string> summary_source(Connection& db, const std::string& table, const char* count_sql);
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

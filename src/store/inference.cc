// src/store/inference.cc
//
// After the bulk load, in SQL: what single lines do not say but the job as a
// whole does. Year-less timestamps get the job's year; lines without a rank get
// the rank their process, file or torchrun worker directory is known to have.
#include <sqlite3.h>

#include "ncclpm/store/ingest_writer.h"
#include "ncclpm/store/schema.h"
#include "ncclpm/util/text.h"

namespace ncclpm::store {

Status IngestWriter::post_process() {
  if (first_new_file_id_ == 0) return Ok{};
  // Lines without a year (c10's E709, glog's E0709) take the job's year: the
  // earliest year any dated line of the job printed.
  std::vector<Statement> fix_years;
  for (const char* table : {"events", "unparsed_lines"}) {
    auto fix = db_.prepare(std::string("UPDATE ") + table +
        " SET ts_has_year = 2, ts_us = coalesce(1000000 * CAST(strftime('%s',"
        " printf('%04d', ?1) || strftime('-%m-%d %H:%M:%S', ts_us / 1000000, 'unixepoch')) AS INTEGER)"
        " + ts_us % 1000000, ts_us)"
        " WHERE job_id = ?2 AND file_id >= ?3 AND ts_has_year = 0 AND ts_us IS NOT NULL");
    if (!fix) return fix.take_error();
    fix_years.push_back(std::move(fix).value());
  }
  auto year_of_job = db_.scalar_int(
      "SELECT coalesce(CAST(strftime('%Y', min(ts_us) / 1000000, 'unixepoch') AS INTEGER), 0)"
      " FROM (SELECT ts_us FROM events WHERE job_id = ?1 AND ts_has_year = 1"
      " UNION ALL SELECT ts_us FROM unparsed_lines WHERE job_id = ?1 AND ts_has_year = 1)", {job_id_});
  if (!year_of_job) return year_of_job.take_error();
  if (*year_of_job > 0) {
    for (Statement& fix : fix_years)
      if (Status s = fix.run({*year_of_job, job_id_, first_new_file_id_}); !s) return s;
    auto ref = db_.prepare("UPDATE jobs SET ref_year = ? WHERE job_id = ?");
    if (!ref) return ref.take_error();
    if (Status s = ref->run({*year_of_job, job_id_}); !s) return s;
  }
  // A process's NCCL lines name host and pid but not the global rank: take the
  // rank it has in the largest communicator it joined (the world's).
  const char* infer_rank = R"SQL(
    WITH world AS (
      SELECT e.host, e.pid, c.comm_rank AS rank, max(c.nranks) AS n
      FROM communicators c JOIN events e USING (event_id)
      WHERE e.job_id = ?1 AND e.host IS NOT NULL AND e.pid IS NOT NULL AND c.comm_rank IS NOT NULL
      GROUP BY e.host, e.pid)
    UPDATE %TABLE% SET rank = (SELECT rank FROM world w WHERE w.host = %TABLE%.host AND w.pid = %TABLE%.pid)
    WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL AND host IS NOT NULL AND pid IS NOT NULL)SQL";
  for (const char* table : {"events", "unparsed_lines"}) {
    std::string sql = infer_rank;
    for (size_t at; (at = sql.find("%TABLE%")) != std::string::npos;) sql.replace(at, 7, table);
    auto stmt = db_.prepare(sql);
    if (!stmt) return stmt.take_error();
    if (Status s = stmt->run({job_id_, first_new_file_id_}); !s) return s;
  }
  if (Status s = infer_file_ranks(); !s) return s;
  return db_.exec(index_sql());
}

// In the default process group (PG 0, or a message with no group named) the
// rank in the group is the global rank. A process (host, pid) whose
// attributed lines all name one rank gives it to its other lines (a Ray
// actor's print()s, say).
// Per-process files (torchrun --log-dir, rank3.log) hold one rank's lines, but
// only some of them say so ([rank3]: on c10 lines, not on print()s). A file
// whose attributed lines all name one rank gives that rank to the rest, and
// stdout.log/stderr.log of one torchrun worker directory share it.
Status IngestWriter::infer_file_ranks() {
  const char* sql = R"SQL(
    UPDATE events SET rank = pg_rank
      WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL AND pg_rank IS NOT NULL
        AND coalesce(pg_id, '0') = '0' AND coalesce(pg_desc, 'default_pg') = 'default_pg';
    CREATE TEMP TABLE process_ranks AS
      SELECT host, pid, min(rank) AS rank FROM (
        SELECT host, pid, rank FROM events WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NOT NULL AND pid IS NOT NULL
        UNION ALL SELECT host, pid, rank FROM unparsed_lines WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NOT NULL AND pid IS NOT NULL)
      GROUP BY host, pid HAVING count(DISTINCT rank) = 1;
    UPDATE events SET rank = (SELECT rank FROM process_ranks p WHERE p.host IS events.host AND p.pid = events.pid)
      WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL AND pid IS NOT NULL;
    UPDATE unparsed_lines SET rank = (SELECT rank FROM process_ranks p WHERE p.host IS unparsed_lines.host AND p.pid = unparsed_lines.pid)
      WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL AND pid IS NOT NULL;
    DROP TABLE process_ranks;
    UPDATE files SET hint_rank = (
      SELECT min(rank) FROM (SELECT rank FROM events WHERE file_id = files.file_id AND rank IS NOT NULL
                             UNION ALL SELECT rank FROM unparsed_lines WHERE file_id = files.file_id AND rank IS NOT NULL)
      HAVING count(DISTINCT rank) = 1)
    WHERE job_id = ?1 AND file_id >= ?2 AND hint_rank IS NULL AND hint_local_rank IS NOT NULL;
    UPDATE files SET hint_rank = (
      SELECT min(o.hint_rank) FROM files o WHERE o.job_id = files.job_id AND o.hint_rank IS NOT NULL
        AND o.hint_local_rank = files.hint_local_rank AND o.attempt IS files.attempt
        AND rtrim(o.rel_path, replace(o.rel_path, '/', '')) = rtrim(files.rel_path, replace(files.rel_path, '/', ''))
      HAVING count(DISTINCT o.hint_rank) = 1)
    WHERE job_id = ?1 AND file_id >= ?2 AND hint_rank IS NULL AND hint_local_rank IS NOT NULL;
    UPDATE events SET rank = (SELECT hint_rank FROM files f WHERE f.file_id = events.file_id)
      WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL;
    UPDATE unparsed_lines SET rank = (SELECT hint_rank FROM files f WHERE f.file_id = unparsed_lines.file_id)
      WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL;)SQL";
  // sqlite3_prepare handles one statement at a time: run them in turn.
  std::string_view rest = sql;
  while (!util::trim(rest).empty()) {
    size_t end = rest.find(";\n");
    std::string_view one = rest.substr(0, end == std::string_view::npos ? rest.size() : end + 1);
    rest.remove_prefix(one.size());
    auto stmt = db_.prepare(one);
    if (!stmt) return stmt.take_error();
    bool takes_ids = sqlite3_bind_parameter_count(stmt->raw()) > 0;
    if (Status s = stmt->run(takes_ids ? std::vector<Value>{job_id_, first_new_file_id_} : std::vector<Value>{}); !s)
      return s;
  }
  return Ok{};
}

}  // namespace ncclpm::store

// src/diagnose/duplicate_gpu.cc
#include "duplicate_gpu.h"

namespace ncclpm::diagnose {
namespace {

// Every Init START that names its communicator's id, bus id and host, and
// whose process never printed Init COMPLETE for that communicator (the same
// comm pointer from the same host and pid). NCCL 2.19+ names the commId; a
// host name is needed because NCCL's check is per host.
constexpr const char* kUnfinishedStarts =
    "WITH starts AS ("
    "  SELECT c.event_id, c.comm, c.comm_id, c.bus_id, c.comm_rank, e.host, e.pid"
    "  FROM communicators c CROSS JOIN events e USING (event_id)"
    "  WHERE c.job_id = ?1 AND c.event = 'init_start' AND coalesce(c.comm_id, '') <> ''"
    "    AND coalesce(c.bus_id, '') <> '' AND coalesce(e.host, '') <> '' AND c.comm_rank IS NOT NULL),"
    " unfinished AS ("
    "  SELECT * FROM starts s WHERE NOT EXISTS ("
    "    SELECT 1 FROM communicators k CROSS JOIN events ke USING (event_id)"
    "    WHERE k.job_id = ?1 AND k.event = 'init_complete' AND k.comm = s.comm"
    "      AND ke.host = s.host AND ke.pid IS s.pid))";

}  // namespace

Result<std::optional<DuplicateGpu>> find_duplicate_gpu(store::Connection& db, int64_t job_id) {
  // The first pair: the two ranks with the lowest ranks in the communicator.
  auto stmt = db.prepare(std::string(kUnfinishedStarts) +
                         " SELECT a.event_id, b.event_id, a.host, a.bus_id, a.comm_rank, b.comm_rank"
                         " FROM unfinished a JOIN unfinished b ON b.comm_id = a.comm_id AND b.host = a.host"
                         "   AND b.bus_id = a.bus_id AND b.comm_rank > a.comm_rank"
                         " ORDER BY a.comm_rank, b.comm_rank, a.event_id LIMIT 1");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s.take_error();
  std::optional<Error> err;
  if (!stmt->step(&err)) {
    if (err) return *err;
    return std::optional<DuplicateGpu>();
  }
  DuplicateGpu d;
  d.host = stmt->column_text(2);
  d.bus_id = stmt->column_text(3);
  d.comm_ranks = {static_cast<int>(stmt->column_int(4)), static_cast<int>(stmt->column_int(5))};
  int64_t events[2] = {stmt->column_int(0), stmt->column_int(1)};

  auto line = db.prepare(std::string("SELECT ") + kLocatedColumns +
                         " FROM events e JOIN files f USING (file_id) WHERE e.event_id = ?1");
  if (!line) return line.take_error();
  for (int64_t event : events) {
    line->reset();
    if (Status s = line->bind_all({event}); !s) return s.take_error();
    if (!line->step(&err)) {
      if (err) return *err;
      continue;
    }
    Located l = read_located(*line);
    if (l.rank >= 0) d.ranks.push_back(l.rank);
    d.lines.push_back(std::move(l));
  }
  return std::optional<DuplicateGpu>(std::move(d));
}

}  // namespace ncclpm::diagnose

// src/store/inference.cc
//
// After the bulk load, in SQL: what single lines do not say but the job as a
// whole does. Year-less timestamps get the job's year; lines without a rank get
// the rank their process, console stream, file or torchrun worker directory is
// known to have.
#include <sqlite3.h>

#include "host_names.h"
#include "ncclpm/store/ingest_writer.h"
#include "ncclpm/store/schema.h"
#include "ncclpm/util/text.h"

namespace ncclpm::store {

Status IngestWriter::post_process() {
  if (first_new_file_id_ == 0) return Ok{};
  // Lines without a year (c10's E709, glog's E0709) take the job's year: the
  // earliest year any dated line of the job printed.
  auto fix_events = db_.prepare(
      "UPDATE events SET ts_has_year = 2, ts_us = coalesce(1000000 * CAST(strftime('%s',"
      " printf('%04d', ?1) || strftime('-%m-%d %H:%M:%S', ts_us / 1000000, 'unixepoch')) AS INTEGER)"
      " + ts_us % 1000000, ts_us)"
      " WHERE job_id = ?2 AND file_id >= ?3 AND ts_has_year = 0 AND ts_us IS NOT NULL");
  if (!fix_events) return fix_events.take_error();
  // The stored lines' groups are told the year; their lines take it when read.
  auto fix_groups = db_.prepare(
      "UPDATE line_groups SET ts_has_year = 2, ts_year = ?1 WHERE job_id = ?2 AND file_id >= ?3 AND ts_has_year = 0");
  if (!fix_groups) return fix_groups.take_error();
  auto year_of_job = db_.scalar_int(
      "SELECT coalesce(CAST(strftime('%Y', min(ts_us) / 1000000, 'unixepoch') AS INTEGER), 0)"
      " FROM (SELECT ts_us FROM events WHERE job_id = ?1 AND ts_has_year = 1"
      " UNION ALL SELECT min_ts_us + ts_shift_us FROM line_groups WHERE job_id = ?1 AND ts_has_year = 1)", {job_id_});
  if (!year_of_job) return year_of_job.take_error();
  if (*year_of_job > 0) {
    for (Statement* fix : {&*fix_events, &*fix_groups})
      if (Status s = fix->run({*year_of_job, job_id_, first_new_file_id_}); !s) return s;
    auto ref = db_.prepare("UPDATE jobs SET ref_year = ? WHERE job_id = ?");
    if (!ref) return ref.take_error();
    if (Status s = ref->run({*year_of_job, job_id_}); !s) return s;
  }
  if (Status s = infer_file_ranks(); !s) return s;
  if (Status s = correct_clocks(); !s) return s;
  return db_.exec(index_sql());
}

// Every statement scans a table once or looks rows up by key: with thousands
// of ranks, a correlated subquery over an unindexed table would be quadratic.
static const char* kInferRanks = R"SQL(
-- In the default process group (PG 0, or a message naming no group) the rank
-- in the group is the global rank.
UPDATE events SET rank = pg_rank
  WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL AND pg_rank IS NOT NULL
    AND coalesce(pg_id, '0') = '0' AND coalesce(pg_desc, 'default_pg') = 'default_pg';
-- A process (host, pid) whose attributed lines all name one rank gives it to
-- its other lines (a Ray actor's print()s); failing that, its rank in the
-- largest communicator it initialised (NCCL's world communicator).
CREATE TEMP TABLE process_ranks AS
  SELECT host, pid, min(rank) AS rank FROM (
    SELECT host, pid, rank FROM events WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NOT NULL AND pid IS NOT NULL
    UNION ALL SELECT host, pid, rank FROM line_groups WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NOT NULL AND pid IS NOT NULL)
  GROUP BY host, pid HAVING count(DISTINCT rank) = 1;
-- Indexed before the INSERT below looks it up once per process.
CREATE INDEX temp.process_ranks_key ON process_ranks (pid, host);
INSERT INTO process_ranks
  SELECT host, pid, rank FROM (
    SELECT e.host, e.pid, c.comm_rank AS rank, max(c.nranks) FROM communicators c JOIN events e USING (event_id)
    WHERE e.job_id = ?1 AND e.file_id >= ?2 AND e.pid IS NOT NULL AND c.comm_rank IS NOT NULL GROUP BY e.host, e.pid) w
  WHERE NOT EXISTS (SELECT 1 FROM process_ranks p WHERE p.pid = w.pid AND p.host IS w.host);
UPDATE events SET rank = (SELECT rank FROM process_ranks p WHERE p.pid = events.pid AND p.host IS events.host)
  WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL AND pid IS NOT NULL;
UPDATE line_groups SET rank = (SELECT rank FROM process_ranks p WHERE p.pid = line_groups.pid AND p.host IS line_groups.host)
  WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL AND pid IS NOT NULL;
DROP TABLE process_ranks;
-- A merged console tags lines with the launcher's local rank ("hgx-001:
-- [default0]:"); the global rank is what that stream's attributed lines
-- (NCCL's, c10's "[rank0]:") all name, within the same file. A torchrun
-- worker's own file (its local rank known from its path) is one stream: the
-- file step below gives it the same answer, without this step's sort of
-- every line of thousands of worker files.
CREATE TEMP TABLE console_files (file_id INTEGER PRIMARY KEY);
INSERT INTO console_files SELECT file_id FROM files WHERE job_id = ?1 AND file_id >= ?2 AND hint_local_rank IS NULL;
CREATE TEMP TABLE local_ranks AS
  SELECT file_id, host, local_rank, min(rank) AS rank FROM (
    SELECT file_id, host, local_rank, rank FROM events WHERE job_id = ?1 AND file_id IN console_files AND rank IS NOT NULL AND local_rank IS NOT NULL
    UNION ALL SELECT file_id, host, local_rank, rank FROM line_groups WHERE job_id = ?1 AND file_id IN console_files AND rank IS NOT NULL AND local_rank IS NOT NULL)
  GROUP BY file_id, host, local_rank HAVING count(DISTINCT rank) = 1;
CREATE INDEX temp.local_ranks_key ON local_ranks (file_id, local_rank, host);
UPDATE events SET rank = (SELECT rank FROM local_ranks l WHERE l.file_id = events.file_id AND l.local_rank = events.local_rank AND l.host IS events.host)
  WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL AND local_rank IS NOT NULL;
UPDATE line_groups SET rank = (SELECT rank FROM local_ranks l WHERE l.file_id = line_groups.file_id AND l.local_rank = line_groups.local_rank AND l.host IS line_groups.host)
  WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL AND local_rank IS NOT NULL;
DROP TABLE local_ranks;
DROP TABLE console_files;
-- Per-process files (torchrun --log-dir, rank3.log) hold one rank's lines but
-- only some say so ([rank3]: on c10 lines, not on print()s): a file whose
-- attributed lines all name one rank gives it to the rest ...
CREATE TEMP TABLE file_ranks (file_id INTEGER PRIMARY KEY, rank INTEGER);
INSERT INTO file_ranks
  SELECT file_id, min(rank) FROM (
    SELECT file_id, rank FROM events WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NOT NULL
    UNION ALL SELECT file_id, rank FROM line_groups WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NOT NULL)
  GROUP BY file_id HAVING count(DISTINCT rank) = 1;
UPDATE files SET hint_rank = (SELECT rank FROM file_ranks r WHERE r.file_id = files.file_id)
  WHERE job_id = ?1 AND file_id >= ?2 AND hint_rank IS NULL AND hint_local_rank IS NOT NULL;
DROP TABLE file_ranks;
-- ... and stdout.log and stderr.log of one torchrun worker directory share it.
CREATE TEMP TABLE worker_dirs AS
  SELECT rtrim(rel_path, replace(rel_path, '/', '')) AS dir, attempt, hint_local_rank, min(hint_rank) AS rank
  FROM files WHERE job_id = ?1 AND hint_local_rank IS NOT NULL AND hint_rank IS NOT NULL
  GROUP BY 1, 2, 3 HAVING count(DISTINCT hint_rank) = 1;
CREATE INDEX temp.worker_dirs_key ON worker_dirs (dir);
UPDATE files SET hint_rank = (SELECT w.rank FROM worker_dirs w WHERE w.dir = rtrim(files.rel_path, replace(files.rel_path, '/', ''))
                              AND w.attempt IS files.attempt AND w.hint_local_rank = files.hint_local_rank)
  WHERE job_id = ?1 AND file_id >= ?2 AND hint_rank IS NULL AND hint_local_rank IS NOT NULL;
DROP TABLE worker_dirs;
UPDATE events SET rank = (SELECT hint_rank FROM files f WHERE f.file_id = events.file_id)
  WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL;
UPDATE line_groups SET rank = (SELECT hint_rank FROM files f WHERE f.file_id = line_groups.file_id)
  WHERE job_id = ?1 AND file_id >= ?2 AND rank IS NULL;
)SQL";

// A line with a rank but no host ("[rank3]:[E...]" in a node's console) ran
// where its rank's other lines say, when they name one machine only (an
// elastic restart may move a rank): the host's clock is the line's clock. The
// name filled in is the one the rank's lines use most (SQLite takes a bare
// column from the max(n) row).
static std::string rank_hosts_sql() {
  return R"SQL(
-- The job's lines counted once per rank and host (this ingest's apart):
-- the vote below, and, kept as rank_lines, diagnose's.
CREATE TEMP TABLE ranked_lines AS
  SELECT rank, host, file_id >= ?2 AS new, sum(lines) AS n FROM (
    SELECT rank, host, file_id, 1 AS lines FROM events WHERE job_id = ?1 AND rank IS NOT NULL
    UNION ALL SELECT rank, host, file_id, rows FROM line_groups WHERE job_id = ?1 AND rank IS NOT NULL)
  GROUP BY rank, host, new;
CREATE TEMP TABLE rank_hosts (rank INTEGER PRIMARY KEY, host TEXT);
INSERT INTO rank_hosts
  SELECT rank, host FROM (
    SELECT rank, host, max(n), count(DISTINCT short) AS shorts FROM (
      SELECT rank, host, sum(n) AS n, )SQL" + short_host_sql("host") + R"SQL( AS short FROM ranked_lines
      WHERE host IS NOT NULL GROUP BY rank, host)
    GROUP BY rank)
  WHERE shorts = 1;
UPDATE events SET host = (SELECT host FROM rank_hosts h WHERE h.rank = events.rank)
  WHERE job_id = ?1 AND file_id >= ?2 AND host IS NULL AND rank IN (SELECT rank FROM rank_hosts);
UPDATE line_groups SET host = (SELECT host FROM rank_hosts h WHERE h.rank = line_groups.rank)
  WHERE job_id = ?1 AND file_id >= ?2 AND host IS NULL AND rank IN (SELECT rank FROM rank_hosts);
-- The same two updates, on the counts: ranks and hosts change no more after
-- this, so rank_lines is what counting the stored lines would give.
UPDATE ranked_lines SET host = (SELECT host FROM rank_hosts h WHERE h.rank = ranked_lines.rank)
  WHERE new AND host IS NULL AND rank IN (SELECT rank FROM rank_hosts);
DELETE FROM rank_lines WHERE job_id = ?1;
INSERT INTO rank_lines SELECT ?1, rank, host, sum(n) FROM ranked_lines GROUP BY rank, host;
DROP TABLE ranked_lines;
DROP TABLE rank_hosts;
-- A job whose lines name one machine only (under any spelling: node1 and
-- node1.cluster), and whose communicators span one node where NCCL says, ran
-- there: its lines with neither host nor rank get it ("Hostname: cn-251" atop
-- a console, nvidia-smi's output pasted beside it). A line with a rank is
-- left alone: in a multi-node job whose other nodes' lines name no host, it
-- may be another node's. A few distinct names tell one machine from several,
-- so the scan stops early on a big job.
CREATE TEMP TABLE multi_node AS
  SELECT 1 AS yes FROM communicators WHERE job_id = ?1 AND (nnodes > 1 OR local_ranks < nranks) LIMIT 1;
CREATE TEMP TABLE job_hosts AS
  SELECT host, )SQL" + short_host_sql("host") + R"SQL( AS short FROM (
    SELECT DISTINCT host FROM (
      SELECT host FROM events WHERE job_id = ?1 AND host IS NOT NULL
      UNION ALL SELECT host FROM line_groups WHERE job_id = ?1 AND host IS NOT NULL)
    WHERE NOT EXISTS (SELECT 1 FROM multi_node) LIMIT 8);
CREATE TEMP TABLE job_host AS SELECT max(host) AS host FROM job_hosts HAVING count(DISTINCT short) = 1;
UPDATE events SET host = (SELECT host FROM job_host)
  WHERE job_id = ?1 AND file_id >= ?2 AND host IS NULL AND rank IS NULL AND EXISTS (SELECT 1 FROM job_host);
UPDATE line_groups SET host = (SELECT host FROM job_host)
  WHERE job_id = ?1 AND file_id >= ?2 AND host IS NULL AND rank IS NULL AND EXISTS (SELECT 1 FROM job_host);
DROP TABLE job_host;
DROP TABLE job_hosts;
DROP TABLE multi_node;
)SQL";
}

// A launcher's report of a failed worker names its local rank ("failed
// (exitcode: -9) local_rank: 0", DeepSpeed's "--local_rank=7 ... exits",
// torch.multiprocessing.spawn's "-- Process 3 terminated with the following
// error:" / "process 3 terminated with signal SIGKILL" ending the parent's
// traceback, whose process index is the worker's local rank). On
// one node the local rank is the global rank. The logs say a job ran on one
// node when they show its launch (torchrun --standalone or --nnodes=1,
// deepspeed --num_nodes=1, accelerate --num_machines=1), torch elastic's
// launch config ("max_nodes : 1") or its rendezvous result
// ("group_world_size=1"); or when they show one launcher and nothing of
// another node: no second host, no communicator spanning nodes, no launch
// option or rendezvous of more nodes or of a later node, and no rank beyond
// the workers that launcher stopped or lost. Lines are globbed only when such
// a report lacks a rank.
// Two names of one host (hgx-001 and hgx-001.cluster.internal) are one node.
static std::string single_node_ranks_sql() {
  return R"SQL(
CREATE TEMP TABLE unranked_exits AS
  SELECT e.event_id, x.local_rank FROM events e JOIN process_exits x USING (event_id)
  WHERE e.job_id = ?1 AND e.file_id >= ?2 AND e.kind = 'process_exit' AND e.rank IS NULL
    AND x.rank IS NULL AND x.local_rank IS NOT NULL
  UNION ALL SELECT event_id, local_rank FROM events
  WHERE job_id = ?1 AND file_id >= ?2 AND kind = 'traceback' AND rank IS NULL AND local_rank IS NOT NULL
    AND (text GLOB '*-- Process [0-9]* terminated with *' OR text GLOB '*process [0-9]* terminated with *');
CREATE TEMP TABLE seen_other_node AS
  SELECT 1 AS yes FROM communicators WHERE job_id = ?1 AND (nnodes > 1 OR local_ranks < nranks)
    AND EXISTS (SELECT 1 FROM unranked_exits)
  UNION ALL SELECT 1 WHERE EXISTS (SELECT 1 FROM unranked_exits) AND
    (SELECT count(DISTINCT )SQL" + short_host_sql("host") + R"SQL() FROM
       (SELECT host FROM events WHERE job_id = ?1 AND host IS NOT NULL
        UNION SELECT host FROM line_groups WHERE job_id = ?1 AND host IS NOT NULL)) > 1
  UNION ALL SELECT 1 WHERE EXISTS (SELECT 1 FROM unranked_exits) AND
    (SELECT max(rank) FROM (SELECT rank FROM events WHERE job_id = ?1
                            UNION ALL SELECT rank FROM line_groups WHERE job_id = ?1))
    >= (SELECT count(*) FROM unranked_exits)
       + (SELECT count(DISTINCT text) FROM events WHERE job_id = ?1 AND kind = 'signal_sent');
-- The launch options and rendezvous the lines print, read in one pass (only
-- when nothing cheaper told): said_one = an explicit one-node launch,
-- said_more = more nodes, or a node after the first.
CREATE TEMP TABLE launch_said AS
  SELECT max(text GLOB '*--standalone*' OR text GLOB '*--nnodes[= ]1' OR text GLOB '*--nnodes[= ]1[^0-9:]*'
             OR text GLOB '*--num_nodes[= ]1' OR text GLOB '*--num_nodes[= ]1[^0-9]*'
             OR text GLOB '*--num_machines[= ]1' OR text GLOB '*--num_machines[= ]1[^0-9]*'
             OR text GLOB '*max_nodes*: 1' OR text GLOB '*group_world_size=1') AS said_one,
         max(text GLOB '*--nnodes[= ][2-9]*' OR text GLOB '*--nnodes[= ]1[0-9:]*'
             OR text GLOB '*--num_nodes[= ][2-9]*' OR text GLOB '*--num_nodes[= ]1[0-9]*'
             OR text GLOB '*--num_machines[= ][2-9]*' OR text GLOB '*--num_machines[= ]1[0-9]*'
             OR text GLOB '*--node_rank[= ][1-9]*' OR text GLOB '*NODE_RANK=[1-9]*' OR text GLOB '*nnodes=[2-9]*'
             OR text GLOB '*max_nodes*: [2-9]*' OR text GLOB '*group_world_size=[2-9]*') AS said_more
  FROM (SELECT text FROM unparsed_lines WHERE job_id = ?1 UNION ALL SELECT text FROM events WHERE job_id = ?1)
  WHERE EXISTS (SELECT 1 FROM unranked_exits) AND NOT EXISTS (SELECT 1 FROM seen_other_node)
  HAVING count(*) > 0;
CREATE TEMP TABLE one_node AS
  SELECT 1 AS yes FROM launch_said WHERE said_one OR NOT coalesce(said_more, 0);
UPDATE events SET rank = (SELECT local_rank FROM unranked_exits u WHERE u.event_id = events.event_id)
  WHERE event_id IN (SELECT event_id FROM unranked_exits) AND EXISTS (SELECT 1 FROM one_node);
UPDATE process_exits SET rank = local_rank
  WHERE event_id IN (SELECT event_id FROM unranked_exits) AND EXISTS (SELECT 1 FROM one_node);
DROP TABLE one_node;
DROP TABLE launch_said;
DROP TABLE seen_other_node;
DROP TABLE unranked_exits;
)SQL";
}

// The lines of a progress stream share everything a rank is inferred from:
// the stream's rank is its sample line's group's.
static const char* kProgressStreamRanks = R"SQL(
UPDATE progress_streams SET rank = (SELECT rank FROM line_groups r WHERE r.group_id = progress_streams.sample_group_id)
  WHERE job_id = ?1 AND file_id >= ?2;
)SQL";

Status IngestWriter::infer_file_ranks() {
  if (Status s = run_script(single_node_ranks_sql()); !s) return s;
  if (Status s = run_script(kInferRanks); !s) return s;
  if (Status s = run_script(rank_hosts_sql()); !s) return s;
  return run_script(kProgressStreamRanks);
}

Status IngestWriter::run_script(std::string_view script) {
  // sqlite3_prepare takes one statement at a time: run them in turn.
  std::string_view rest = script;
  while (true) {
    while (!rest.empty() && (rest.front() == '\n' || rest.front() == ' ' || rest.starts_with("--"))) {
      if (rest.starts_with("--")) rest.remove_prefix(std::min(rest.size(), rest.find('\n')));
      else rest.remove_prefix(1);
    }
    if (rest.empty()) break;
    size_t end = rest.find(";\n");
    std::string_view one = rest.substr(0, end == std::string_view::npos ? rest.size() : end + 1);
    rest.remove_prefix(one.size());
    auto stmt = db_.prepare(one);
    if (!stmt) return stmt.take_error();
    // ?1 is the job, ?2 the first file of this ingest; a statement may use fewer.
    std::vector<Value> ids = {job_id_, first_new_file_id_};
    ids.resize(static_cast<size_t>(sqlite3_bind_parameter_count(stmt->raw())));
    if (Status s = stmt->run(ids); !s) return s;
  }
  return Ok{};
}

}  // namespace ncclpm::store

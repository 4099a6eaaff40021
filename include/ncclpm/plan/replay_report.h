// include/ncclpm/plan/replay_report.h
//
// What `ncclpm replay` prints and stores. Text follows nccl-tests: `#`
// metadata lines (finding, plan, GPUs with name and bus id, NCCL version,
// environment applied), one table row in the columns NCCL users read
//   size count type redop root time algbw busbw #wrong
// (size in bytes as nccl-tests counts it, count per rank, time in us per
// iteration, bandwidths in GB/s), then the verdict line. JSON carries the same
// facts; its plan, environment, devices and results objects are also the
// JSON columns of the `replays` row. Pure: tests feed fake results.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ncclpm/plan/finding_ref.h"
#include "ncclpm/plan/launch_env.h"
#include "ncclpm/plan/replay_result.h"
#include "ncclpm/plan/replay_settings.h"
#include "ncclpm/plan/verdict.h"
#include "ncclpm/util/json_writer.h"

namespace ncclpm::plan {

/// Everything a report describes besides the result.
struct ReplayContext {
  const ReplaySettings* settings = nullptr;
  const FindingRef* finding = nullptr;  ///< null for an explicit --op replay
  LaunchInfo launch;
  int gpus_per_process = 0;                          ///< 0: not known yet (dry run, one process)
  std::map<std::string, std::string> inherited_env;  ///< NCCL_* this process inherited
  bool dry_run = false;  ///< no GPU was looked at: GPU counts are what a run would use
};

std::string render_dry_run_text(const ReplayContext& c);
std::string render_dry_run_json(const ReplayContext& c);
std::string render_result_text(const ReplayContext& c, const ReplayResult& r, const Verdict& v);
/// `replay_id` <= 0 writes null (not stored).
std::string render_result_json(const ReplayContext& c, const ReplayResult& r, const Verdict& v,
                               int64_t replay_id);

/// nccl-tests' two header lines and one row for `r` (null: the plan alone).
std::string table_header();
std::string table_row(const CollectivePlan& p, const ReplayResult* r, bool checked);

// The JSON parts, each one value (object or array), shared by the reports and the replays row.
void write_plan(util::JsonWriter& w, const ReplayContext& c);
void write_environment(util::JsonWriter& w, const ReplayContext& c);
void write_devices(util::JsonWriter& w, const ReplayResult& r);
void write_results(util::JsonWriter& w, const ReplayContext& c, const ReplayResult& r);

}  // namespace ncclpm::plan

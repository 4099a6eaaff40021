// bench/gen/nccl_lines.h
//
// Lines NCCL itself writes (shared/log-formats.md section A): the INFO prefix,
// the INIT block of one process, per-collective COLL lines, an IB completion
// WARN with its error trace, and teardown. Two releases are modelled:
// 2.21.5 (the one PyTorch 2.4/2.5 wheels bundle: bare version banner on comm
// rank 0 only, `Bootstrap : Using`) and 2.26.2 (the banner is an INFO line on
// every process, `Bootstrap: Using`, `Init timings`, timestamps on WARN).
#pragma once

#include <string>

#include "gen/job.h"
#include "gen/text.h"

namespace ncclpm::bench::nccl {

/// "host:pid:tid [dev] NCCL INFO "
void info_prefix(std::string& s, const Job& job, const RankInfo& r, int tid);

/// Whether NCCL_DEBUG_SUBSYS lets ENV lines (`X set by environment to Y`)
/// through: the default mask does; `--coll` sets INIT,COLL on 2.21 and
/// INIT,BOOTSTRAP,ENV,COLL on 2.26.
bool env_lines_enabled(const Job& job);

/// The INFO lines one process prints while creating the job's communicator.
/// `log` receives the NCCL output (stdout or the NCCL_DEBUG_FILE); `stdout_text`
/// receives the <= 2.21 bare `NCCL version` banner, which is a printf to stdout
/// even when NCCL_DEBUG_FILE is set. `first_in_process`: the process's first
/// communicator; NCCL prints some lines once per process, not per
/// communicator (the version banner through pthread_once, the driver version
/// in its CUDA initialisation, the bootstrap interface, the network plugin,
/// the settings its environment gave and the IB devices, each set up once).
void init_block(std::string& log, std::string& stdout_text, const Job& job, const RankInfo& r,
                Rng& rng, bool debug_file, bool first_in_process = true);

/// "host:pid:pid [dev] NCCL INFO AllGather: opCount 1a sendbuff 0x7f.. ... stream 0x55.."
void coll_line(std::string& s, const Job& job, const RankInfo& r, const CollSpec& c, int step,
               uint64_t op_count);

/// The WARN text of a failed IB work completion (no prefix): what PyTorch
/// repeats after "Last error:".
std::string ib_completion_text(const Job& job, const RankInfo& r, const RankInfo& peer, int status,
                               Rng& rng);

/// The empty line, the WARN line and the `file:line -> 6` error trace.
void ib_completion_error(std::string& s, const Job& job, const RankInfo& r,
                         const std::string& warn_text, Time t);

/// "comm 0x.. rank R nranks N cudaDev D busId B - Destroy COMPLETE"
void destroy_line(std::string& s, const Job& job, const RankInfo& r);

}  // namespace ncclpm::bench::nccl

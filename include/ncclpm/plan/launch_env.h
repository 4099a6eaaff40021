// include/ncclpm/plan/launch_env.h
//
// Who am I in a multi-process replay? The cluster's launcher says so in the
// environment: torchrun (RANK, WORLD_SIZE, LOCAL_RANK), srun (SLURM_PROCID,
// SLURM_NTASKS, SLURM_LOCALID) or mpirun (OMPI_COMM_WORLD_RANK, _SIZE,
// _LOCAL_RANK). The ranks meet through NCCL's own bootstrap: with
// NCCL_COMM_ID=host:port set in every process, every ncclGetUniqueId returns
// the same id and rank 0 listens on that address, so no MPI is needed.
//
// Everything here reads the environment through an EnvLookup, so tests give
// it a map instead of the process environment.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ncclpm/util/result.h"

namespace ncclpm::plan {

enum class Launcher { kNone, kTorchrun, kSlurm, kOpenMpi, kEnv };
/// "torchrun", "srun", "mpirun", "RANK/WORLD_SIZE", "none".
const char* launcher_name(Launcher l);

/// The bootstrap port used when nothing names one (Slurm without MASTER_PORT).
inline constexpr int kDefaultBootstrapPort = 29510;

struct LaunchInfo {
  Launcher launcher = Launcher::kNone;
  int rank = 0;                ///< this process's rank among the processes
  int world_size = 1;          ///< number of processes
  int local_rank = 0;          ///< rank on this host; -1 when the launcher does not say
  std::string comm_id;         ///< host:port for NCCL_COMM_ID; empty with one process
  std::string comm_id_source;  ///< where comm_id came from, for the report
  bool multi_process() const { return world_size > 1; }
};

/// The value of an environment variable, or nullopt when it is unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
/// Reads the process environment.
EnvLookup process_env();
/// Reads a fixed map (tests).
EnvLookup map_env(std::map<std::string, std::string> vars);

/// Works out rank, world size, local rank and the bootstrap address.
/// `bootstrap` is --bootstrap host:port (empty: derive it). Precedence:
/// RANK/WORLD_SIZE (torchrun sets them even under srun), then Open MPI, then
/// Slurm (only inside an srun step, not in the batch script itself). The
/// bootstrap address: --bootstrap, else NCCL_COMM_ID, else MASTER_ADDR and
/// MASTER_PORT (plus one under torchrun, whose agent already listens on
/// MASTER_PORT), else the first host of the Slurm step's node list.
Result<LaunchInfo> detect_launch(const EnvLookup& env, std::string_view bootstrap = {});

/// "host:port", "1.2.3.4:29500" or "[fe80::1]:29500" -> host and port.
Result<std::pair<std::string, int>> parse_host_port(std::string_view s);

/// The first host of a Slurm node list: "gpu-node[07-08,10],login" -> "gpu-node07".
std::string first_host_of_nodelist(std::string_view nodelist);

/// The CUDA devices this process drives: `per_process` of them, chosen by its
/// local rank. When the launcher already hid the other GPUs (exactly
/// `per_process` visible), those are used whatever the local rank says.
Result<std::vector<int>> pick_devices(const LaunchInfo& launch, int per_process, int visible);

/// The NCCL_* variables of the environment this process inherited: NCCL reads
/// them too, so the report shows them beside the ones replay sets.
std::map<std::string, std::string> inherited_nccl_env(const char* const* environ_vars);

}  // namespace ncclpm::plan

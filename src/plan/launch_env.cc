// src/plan/launch_env.cc
#include "ncclpm/plan/launch_env.h"

#include <cstdlib>

#include "ncclpm/util/text.h"

namespace ncclpm::plan {
namespace {

// Ranks, world sizes and local ranks are read whole, never wrapped into an
// int: a value past this is a broken environment, not a job.
constexpr int64_t kMaxRanks = int64_t{1} << 20;

// An integer variable: nullopt when unset, an error when set but not a number.
Result<std::optional<int64_t>> int_var(const EnvLookup& env, const std::string& name) {
  auto v = env(name);
  if (!v) return std::optional<int64_t>();
  auto n = util::parse_int(util::trim(*v));
  if (!n || *n < 0)
    return Error::plain("environment variable " + name + "=" + util::quoted(*v) +
                        " is not a rank number");
  if (*n > kMaxRanks)
    return Error::plain("environment variable " + name + "=" + util::quoted(*v) + " is more than " +
                        std::to_string(kMaxRanks) + " ranks, more than any job replays");
  return std::optional<int64_t>(*n);
}

struct Triple {
  const char* rank;
  const char* size;
  const char* local;
};

// Reads one launcher's three variables; nullopt when its rank or size is unset.
Result<std::optional<LaunchInfo>> read_triple(const EnvLookup& env, const Triple& t, Launcher l) {
  auto rank = int_var(env, t.rank);
  if (!rank) return rank.take_error();
  auto size = int_var(env, t.size);
  if (!size) return size.take_error();
  if (!*rank || !*size) return std::optional<LaunchInfo>();
  auto local = int_var(env, t.local);
  if (!local) return local.take_error();
  LaunchInfo info;
  info.launcher = l;
  info.rank = static_cast<int>(**rank);
  info.world_size = static_cast<int>(**size);
  info.local_rank = *local ? static_cast<int>(**local) : -1;
  if (info.world_size < 1 || info.rank >= info.world_size) {
    return Error::plain(std::string(t.rank) + "=" + std::to_string(info.rank) + " is outside " +
                        t.size + "=" + std::to_string(info.world_size));
  }
  return std::optional<LaunchInfo>(info);
}

Result<std::optional<LaunchInfo>> detect_ranks(const EnvLookup& env) {
  auto t = read_triple(env, {"RANK", "WORLD_SIZE", "LOCAL_RANK"}, Launcher::kEnv);
  if (!t || *t) {
    if (t && *t && env("TORCHELASTIC_RUN_ID")) (*t)->launcher = Launcher::kTorchrun;
    return t;
  }
  auto o = read_triple(
      env, {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
      Launcher::kOpenMpi);
  if (!o || *o) return o;
  // sbatch gives its batch script SLURM_PROCID=0 and SLURM_NTASKS too; only an
  // srun step is a launch of many processes, and only srun sets the step variables.
  if (!env("SLURM_STEP_ID") && !env("SLURM_STEPID") && !env("SLURM_STEP_NUM_TASKS"))
    return std::optional<LaunchInfo>();
  const char* size = env("SLURM_NTASKS") ? "SLURM_NTASKS" : "SLURM_STEP_NUM_TASKS";
  return read_triple(env, {"SLURM_PROCID", size, "SLURM_LOCALID"}, Launcher::kSlurm);
}

Result<std::string> bootstrap_address(const EnvLookup& env, const LaunchInfo& info,
                                      std::string_view flag, std::string* source) {
  auto checked = [](std::string_view s) -> Result<std::string> {
    auto hp = parse_host_port(s);
    if (!hp) return hp.take_error();
    return std::string(s);
  };
  if (!flag.empty()) {
    *source = "--bootstrap";
    return checked(flag);
  }
  if (auto id = env("NCCL_COMM_ID"); id && !id->empty()) {
    *source = "NCCL_COMM_ID";
    return checked(*id);
  }
  auto addr = env("MASTER_ADDR");
  auto port_text = env("MASTER_PORT");
  std::optional<int64_t> port;
  if (port_text) {
    port = util::parse_int(util::trim(*port_text));
    if (!port || *port <= 0 || *port > 65535)
      return Error::plain("MASTER_PORT=" + util::quoted(*port_text) + " is not a port number");
  }
  if (addr && !addr->empty()) {
    int64_t p = port.value_or(kDefaultBootstrapPort);
    if (info.launcher == Launcher::kTorchrun && port) {
      // torchrun's agent runs its rendezvous store on MASTER_PORT already.
      *source = "MASTER_ADDR:MASTER_PORT+1";
      p = *port == 65535 ? *port - 1 : *port + 1;
    } else {
      *source = port ? "MASTER_ADDR:MASTER_PORT" : "MASTER_ADDR";
    }
    bool v6 = addr->find(':') != std::string::npos;
    return (v6 ? "[" + *addr + "]" : *addr) + ":" + std::to_string(p);
  }
  if (info.launcher == Launcher::kSlurm) {
    for (const char* var : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
      if (auto list = env(var)) {
        std::string host = first_host_of_nodelist(*list);
        if (host.empty()) continue;
        *source = std::string("first host of ") + var;
        return host + ":" + std::to_string(port.value_or(kDefaultBootstrapPort));
      }
    }
  }
  return Error::plain(
      std::string(launcher_name(info.launcher)) + " started " + std::to_string(info.world_size) +
          " processes but nothing names the bootstrap address",
      "pass --bootstrap HOST:PORT with the host of rank 0, or set MASTER_ADDR and MASTER_PORT "
      "in every process (mpirun -x MASTER_ADDR -x MASTER_PORT)");
}

}  // namespace

const char* launcher_name(Launcher l) {
  switch (l) {
    case Launcher::kNone:
      return "none";
    case Launcher::kTorchrun:
      return "torchrun";
    case Launcher::kSlurm:
      return "srun";
    case Launcher::kOpenMpi:
      return "mpirun";
    case Launcher::kEnv:
      return "RANK/WORLD_SIZE";
  }
  return "none";
}

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

EnvLookup map_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

Result<LaunchInfo> detect_launch(const EnvLookup& env, std::string_view bootstrap) {
  auto found = detect_ranks(env);
  if (!found) return found.take_error();
  LaunchInfo info = found->value_or(LaunchInfo{});
  if (!info.multi_process()) {
    // One process drives every GPU itself; NCCL makes its own unique id.
    if (!bootstrap.empty()) {
      auto hp = parse_host_port(bootstrap);
      if (!hp) return hp.take_error();
    }
    return info;
  }
  auto addr = bootstrap_address(env, info, bootstrap, &info.comm_id_source);
  if (!addr) return addr.take_error();
  info.comm_id = std::move(addr).value();
  return info;
}

Result<std::pair<std::string, int>> parse_host_port(std::string_view s) {
  std::string_view host, port;
  if (s.starts_with("[")) {
    size_t close = s.find("]:");
    if (close == std::string_view::npos)
      return Error::plain("bootstrap address " + util::quoted(s) + " is not [IPV6]:PORT");
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
  } else {
    size_t colon = s.rfind(':');
    if (colon == std::string_view::npos || s.find(':') != colon)
      return Error::plain("bootstrap address " + util::quoted(s) + " is not HOST:PORT");
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
  }
  auto p = util::parse_int(port);
  if (host.empty() || !p || *p <= 0 || *p > 65535)
    return Error::plain("bootstrap address " + util::quoted(s) +
                        " is not HOST:PORT with a port from 1 to 65535");
  return std::pair<std::string, int>(std::string(host), static_cast<int>(*p));
}

std::string first_host_of_nodelist(std::string_view list) {
  // The first entry ends at a comma outside brackets.
  size_t depth = 0, end = 0;
  for (; end < list.size(); ++end) {
    if (list[end] == '[')
      ++depth;
    else if (list[end] == ']' && depth > 0)
      --depth;
    else if (list[end] == ',' && depth == 0)
      break;
  }
  std::string_view first = util::trim(list.substr(0, end));
  size_t open = first.find('[');
  if (open == std::string_view::npos) return std::string(first);
  // "node[07-08,10]": the prefix and the first number or range start, keeping
  // its zeros; a name with more bracket groups ("rack[1-2]-gpu[01-04]") takes
  // the first of each.
  size_t close = first.find(']', open);
  if (close == std::string_view::npos) return std::string(first);
  std::string_view inside = first.substr(open + 1, close - open - 1);
  std::string_view suffix = first.substr(close + 1);
  return std::string(first.substr(0, open)) +
         std::string(inside.substr(0, inside.find_first_of("-,"))) +
         (suffix.empty() ? std::string() : first_host_of_nodelist(suffix));
}

Result<std::vector<int>> pick_devices(const LaunchInfo& launch, int per_process, int visible) {
  if (per_process < 1) return Error::plain("a process needs at least one GPU");
  if (visible < per_process) {
    return Error::plain("--gpus " + std::to_string(per_process) + " but only " +
                        std::to_string(visible) + " GPU(s) visible");
  }
  std::vector<int> devices;
  int first = 0;
  if (visible > per_process) {
    int slots = visible / per_process;
    int local = launch.local_rank >= 0 ? launch.local_rank : launch.rank % slots;
    if (local >= slots) {
      return Error::plain(
          "local rank " + std::to_string(local) + " needs GPUs " +
              std::to_string(local * per_process) + ".." +
              std::to_string(local * per_process + per_process - 1) + " but " +
              std::to_string(visible) + " are visible",
          "start at most " + std::to_string(slots) + " process(es) per host, or lower --gpus");
    }
    first = local * per_process;
  }
  for (int i = 0; i < per_process; ++i) devices.push_back(first + i);
  return devices;
}

std::map<std::string, std::string> inherited_nccl_env(const char* const* vars) {
  std::map<std::string, std::string> out;
  for (; vars != nullptr && *vars != nullptr; ++vars) {
    std::string_view kv = *vars;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos || !kv.starts_with("NCCL_")) continue;
    out[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  return out;
}

}  // namespace ncclpm::plan

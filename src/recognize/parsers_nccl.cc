// src/recognize/parsers_nccl.cc
//
// NCCL's own lines (log-formats A). COLL lines are the high-volume case and
// are parsed by hand; the rarer lines use RE2 behind a literal check.
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "match.h"

#include "ncclpm/vocab/nccl_enums.h"
#include "ncclpm/recognize/parsers.h"
#include "ncclpm/util/literal.h"
#include "ncclpm/util/text.h"

namespace ncclpm::recognize {
namespace {

// Reads the token after `key ` up to the next space.
std::string_view field_after(std::string_view s, std::string_view key) {
  size_t at = s.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view rest = s.substr(at + key.size());
  return rest.substr(0, rest.find(' '));
}

int int_after(std::string_view s, std::string_view key) {
  auto v = util::parse_int(field_after(s, key));
  return v ? static_cast<int>(*v) : -1;
}

}  // namespace

std::optional<NcclVersion> parse_nccl_version(std::string_view body) {
  // Skip PyTorch's "..., NCCL version 2.18.6" inside error texts: the banner
  // starts the message.
  std::string_view b = util::trim(body);
  if (!b.starts_with("NCCL version ")) return std::nullopt;
  static const RE2 re(R"(^NCCL version (\d+\.\d+\.\d+)[^+\s]*\+cuda(\d+\.\d+))");
  std::string ver, cuda;
  if (!RE2::PartialMatch(sp(b), re, &ver, &cuda)) {
    static const RE2 bare(R"(^NCCL version (\d+\.\d+\.\d+))");
    if (!RE2::PartialMatch(sp(b), bare, &ver)) return std::nullopt;
  }
  return NcclVersion{ver, cuda};
}

std::optional<NcclVersion> parse_embedded_nccl_version(std::string_view text) {
  // PyTorch ends its NCCL errors with the version it loaded:
  // "NCCL error in: .../ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8".
  static const RE2 re(R"(NCCL version (\d+\.\d+\.\d+))");
  std::string ver;
  if (!RE2::PartialMatch(sp(text), re, &ver)) return std::nullopt;
  return NcclVersion{ver, ""};
}

std::optional<NcclVersion> parse_framework_nccl_version(std::string_view text) {
  // pynccl.py: logger.info("vLLM is using nccl==%s", ...), the same in SGLang's
  // copy ("sglang is using nccl==%s"), printed just before ncclCommInitRank.
  if (!contains(text, " is using nccl==")) return std::nullopt;
  static const RE2 re(R"((?i:vllm|sglang) is using nccl==(\d+\.\d+\.\d+))");
  std::string ver;
  if (!RE2::PartialMatch(sp(text), re, &ver)) return std::nullopt;
  return NcclVersion{ver, ""};
}

std::optional<EnvSetting> parse_nccl_env(std::string_view body) {
  constexpr std::string_view kMid = " set by environment to ";
  size_t at = body.find(kMid);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view name = util::trim(body.substr(0, at));
  if (name.empty() || name.find(' ') != std::string_view::npos) return std::nullopt;
  std::string_view value = util::trim(body.substr(at + kMid.size()));
  if (value.ends_with('.')) value.remove_suffix(1);
  return EnvSetting{std::string(name), std::string(value)};
}

std::optional<CommInfo> parse_nccl_comm(std::string_view body) {
  if (!contains(body, "comm ")) return std::nullopt;
  CommInfo c;
  if (contains(body, " nNodes ") && contains(body, " localRanks ")) {
    c.event = "summary";  // comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d
    c.nnodes = int_after(body, "nNodes ");
    c.local_ranks = int_after(body, "localRanks ");
    c.local_rank = int_after(body, "localRank ");
  } else if (contains(body, "- Init START")) {
    c.event = "init_start";
  } else if (contains(body, "- Init COMPLETE")) {
    c.event = "init_complete";
  } else if (contains(body, "- Destroy COMPLETE")) {
    c.event = "destroy";
  } else if (contains(body, "- Abort COMPLETE")) {
    c.event = "abort";
  } else if (contains(body, "- Revoke COMPLETE")) {
    c.event = "revoke";
  } else {
    return std::nullopt;
  }
  std::string_view comm = field_after(body, "comm ");
  if (comm.empty()) return std::nullopt;
  c.comm = std::string(comm);
  // The API name precedes "comm" from 2.21 on; "[Rank N] " precedes it in 2.29+.
  std::string_view head = body.substr(0, body.find("comm "));
  head = util::trim(head);
  if (head.starts_with("[Rank ")) head = util::trim(head.substr(head.find(']') + 1));
  if (head.starts_with("nccl")) c.api = std::string(head.substr(0, head.find(' ')));
  c.rank = int_after(body, " rank ");
  c.nranks = int_after(body, " nranks ");
  if (c.nranks < 0) c.nranks = int_after(body, " nRanks ");
  c.cuda_dev = int_after(body, " cudaDev ");
  c.nvml_dev = int_after(body, " nvmlDev ");
  c.bus_id = std::string(field_after(body, " busId "));
  c.comm_id = std::string(field_after(body, " commId "));
  c.parent = std::string(field_after(body, " parent "));
  return c;
}

// "AllGather: opCount 1a sendbuff 0x7f.. recvbuff 0x7f.. count 131072 datatype 7 op 0 root 0
//  comm 0x55d5a8b3c2d0 [nranks=8] stream 0x55d5a8b3e4f0"
bool parse_nccl_coll(std::string_view body, CollectiveLine& c) {
  size_t colon = body.find(": opCount ");
  if (colon == std::string_view::npos || colon == 0 || colon > 40) return false;
  std::string_view rest = body.substr(colon + 10);
  // Tokens are short: a word-at-a-time search beats a memchr call per token.
  auto next_token = [&rest]() {
    size_t i = util::find_near(rest, ' ');
    std::string_view tok = rest.substr(0, i);
    rest.remove_prefix(std::min(i + 1, rest.size()));
    return tok;
  };
  // Keys are literals: a compare of known length the compiler inlines.
  auto expect = [&]<size_t N>(const char (&key)[N]) {
    constexpr size_t n = N - 1;
    if (rest.size() < n || std::memcmp(rest.data(), key, n) != 0 || (rest.size() > n && rest[n] != ' '))
      return false;
    rest.remove_prefix(std::min(n + 1, rest.size()));
    return true;
  };
  auto op_count = util::parse_hex(next_token());
  if (!op_count) return false;
  if (!expect("sendbuff")) return false;
  next_token();
  if (!expect("recvbuff")) return false;
  next_token();
  if (!expect("count")) return false;
  auto count = util::parse_short_int(next_token());
  if (!expect("datatype")) return false;
  auto dtype = util::parse_short_int(next_token());
  if (!expect("op")) return false;
  auto op = util::parse_short_int(next_token());
  if (!expect("root")) return false;
  auto root = util::parse_short_int(next_token());
  if (!count || !dtype || !op || !root) return false;
  c.op = body.substr(0, colon);
  c.op_count = *op_count;
  c.count = *count;
  c.datatype = static_cast<int>(*dtype);
  c.redop = static_cast<int>(*op);
  c.root = static_cast<int>(*root);
  // comm and [nranks=N] may be cut off by NCCL's 1023-byte truncation.
  c.comm = {};
  c.nranks = -1;
  if (expect("comm")) {
    c.comm = next_token();
    std::string_view nr = next_token();
    if (nr.starts_with("[nranks=") && nr.ends_with("]")) {
      auto n = util::parse_short_int(nr.substr(8, nr.size() - 9));
      if (n) c.nranks = static_cast<int>(*n);
    }
  }
  return true;
}

std::optional<CollectiveCall> parse_nccl_coll(std::string_view body) {
  CollectiveLine c;
  if (!parse_nccl_coll(body, c)) return std::nullopt;
  return c.as<std::string>();
}

std::optional<NcclWarning> parse_nccl_warn(std::string_view body) {
  NcclWarning w;
  if (contains(body, "Got completion")) {
    // Every era of the IB work-completion error (A.8), numeric or named status.
    static const RE2 re(
        R"(NET/IB(?:/GIN)? ?: Got completion (?:from peer (\S+) )?with (?:error (\d+)|status=(?:(IBV_WC_\w+|UNKNOWN_STATUS)\()?(\d+)\)?))");
    std::string peer, st1, stname, st2;
    if (!RE2::PartialMatch(sp(body), re, &peer, &st1, &stname, &st2)) return std::nullopt;
    w.category = "ib_completion";
    w.peer = peer;
    auto st = util::parse_int(st1.empty() ? st2 : st1);
    w.ib_status = st ? *st : -1;
    w.ib_status_name = stname.empty() && st ? vocab::ib_status_name(*st) : stname;
    std::string_view hca = field_after(body, " hca ");
    w.hca = std::string(hca);
    return w;
  }
  if (contains(body, "async fatal event") || contains(body, "Got async event") ||
      contains(body, "Got non-fatal async event") || contains(body, "GID table changed")) {
    w.category = "ib_async";
    static const RE2 dev(R"(NET/IB ?: ?(\w+):\d+)");
    std::string hca;
    if (RE2::PartialMatch(sp(body), dev, &hca)) w.hca = hca;
    w.detail = std::string(util::trim(body.substr(body.rfind(':') + 1)));
    return w;
  }
  if (contains(body, "Connection closed by remote peer") || contains(body, "Call to recv") ||
      contains(body, "Call to send") || contains(body, "Connect to ") ||
      contains(body, "exceeded retries") || contains(body, "exceeded timeouts") ||
      contains(body, "message truncated") || contains(body, "exceeded error retry count") ||
      contains(body, "no socket interface found") || contains(body, "No usable listening interface") ||
      contains(body, "NET/Socket : no interface found")) {
    w.category = "socket";
    static const RE2 peer_re(R"((?:peer|from|to) (\S+<\d+>))");
    std::string peer;
    if (RE2::PartialMatch(sp(body), peer_re, &peer)) w.peer = peer;
    size_t colon = body.rfind(" : ");
    if (colon != std::string_view::npos) w.detail = std::string(util::trim(body.substr(colon + 3)));
    return w;
  }
  if (contains(body, "Cuda failure")) {
    w.category = "cuda";
    size_t q = body.find('\'');
    size_t q2 = q == std::string_view::npos ? q : body.find('\'', q + 1);
    if (q2 != std::string_view::npos) w.detail = std::string(body.substr(q + 1, q2 - q - 1));
    return w;
  }
  if (contains(body, "Duplicate GPU detected") || contains(body, "Multiple Ranks are using the same GPU")) {
    w.category = "duplicate_gpu";
    w.detail = std::string(util::trim(body));
    return w;
  }
  if (contains(body, "Mismatched NCCL version")) {
    w.category = "version_mismatch";
    w.detail = std::string(util::trim(body));
    return w;
  }
  if (contains(body, "[Service thread]") || contains(body, "[Proxy Service") ||
      contains(body, "Proxy Call to rank") || contains(body, "[Proxy Progress]")) {
    w.category = "proxy";
  } else if (contains(body, "does not loop back") || contains(body, "Failed to determine local ranks")) {
    w.category = "topology";
  } else if (contains(body, "NVLS") || contains(body, "NVLink SHARP")) {
    w.category = "nvls";
  } else {
    w.category = "other";
  }
  w.detail = std::string(util::trim(body));
  return w;
}

// "transport/net_socket.cc:474 -> 6", "init.cc:1234 (initTransportsRank) -> 3",
// "... -> 2 (Connection refused)", "... -> 6 [Progress Thread]"
std::optional<ErrorTrace> parse_nccl_error_trace(std::string_view body) {
  size_t arrow = body.find(" -> ");
  if (arrow == std::string_view::npos || arrow > 300) return std::nullopt;
  static const RE2 re(R"(^(\S+):(\d+)(?: \([^)]*\))? -> (\d+))");
  std::string file;
  int line = 0, rc = 0;
  if (!RE2::PartialMatch(sp(body), re, &file, &line, &rc)) return std::nullopt;
  return ErrorTrace{file, line, rc};
}

bool reports_failure(std::string_view body) {
  thread_local std::string buffer;
  std::string_view lowered = util::ascii_lower(body, buffer);
  return std::any_of(std::begin(kNcclInfoFailureWords), std::end(kNcclInfoFailureWords),
                     [&](std::string_view word) { return lowered.find(word) != std::string_view::npos; });
}

bool is_nccl_network_line(std::string_view body) {
  bool transport = body.starts_with("Using network ") || body.starts_with("NET/IB") ||
                   body.starts_with("NET/Socket") || body.starts_with("NET/Plugin") ||
                   body.starts_with("Bootstrap") || body.starts_with("NET/OFI") ||
                   body.starts_with("Using internal network plugin");
  return transport && !reports_failure(body);
}

bool is_nccl_channel_line(std::string_view body) {
  if (body.starts_with("Channel ") || body.starts_with("Trees") || body.starts_with("Ring ") ||
      body.starts_with("Tree ") || body.starts_with("Connected all ") ||
      body.starts_with("Connected NVLS") || body.starts_with("Connected binomial"))
    return true;
  return false;
}

}  // namespace ncclpm::recognize

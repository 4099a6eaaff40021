// src/rules/nccl_settings.cc
#include "ncclpm/rules/nccl_settings.h"

#include <cstdlib>
#include <fstream>

#include "ncclpm/rules/rule.h"
#include "ncclpm/util/text.h"

namespace ncclpm::rules {
namespace {

// "v2.10.3-1" -> "2.10.3"
std::string release_version(std::string_view tag) {
  if (tag.starts_with("v")) tag.remove_prefix(1);
  return std::string(tag.substr(0, tag.find('-')));
}

// Names NCCL still reads but builds at run time from a transport name, which
// the table (literal names only) shows as ending at 2.5.7.
bool built_at_run_time(const std::string& name) {
  return name == "NCCL_P2P_LEVEL" || name == "NCCL_P2P_DISABLE" || name == "NCCL_NET_GDR_LEVEL" ||
         name == "NCCL_SHM_DISABLE" || name == "NCCL_NET_GDR_READ";
}

}  // namespace

std::filesystem::path NcclSettings::default_path() {
  const char* env = std::getenv("NCCLPM_DATA");
  std::filesystem::path dir = env != nullptr && *env != '\0' ? env : NCCLPM_DATA_DIR;
  return dir / "nccl-env-params.tsv";
}

Result<NcclSettings> NcclSettings::load(const std::filesystem::path& tsv) {
  std::ifstream in(tsv);
  if (!in) return Error::at(tsv.string(), "cannot read the table of NCCL settings");
  NcclSettings s;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#' || line.starts_with("name\t")) continue;
    auto cols = util::split(line, '\t');
    if (cols.size() != 3 || !cols[0].starts_with("NCCL_"))
      return Error::at_line(tsv.string(), line_no, "expected 'NAME<TAB>first<TAB>last'");
    s.spans_[std::string(cols[0])] = Span{release_version(cols[1]),
                                          cols[2] == "current" ? "current" : release_version(cols[2])};
  }
  return s;
}

std::optional<NcclSettings::Span> NcclSettings::span(const std::string& name) const {
  auto it = spans_.find(name);
  if (it == spans_.end()) {
    if (built_at_run_time(name)) return Span{"2.3.5", "current"};
    return std::nullopt;
  }
  Span sp = it->second;
  if (built_at_run_time(name)) sp.last = "current";
  return sp;
}

bool NcclSettings::read_by_current(const std::string& name) const {
  auto sp = span(name);
  return sp && sp->last == "current";
}

bool NcclSettings::read_by(const std::string& name, const std::string& version) const {
  auto sp = span(name);
  if (!sp) return false;
  if (compare_versions(version, sp->first) < 0) return false;
  return sp->last == "current" || compare_versions(version, sp->last) <= 0;
}

std::optional<std::string> NcclSettings::likely_meant(const std::string& name) const {
  static const std::map<std::string, std::string> kKnown = {
      {"NCCL_MAX_RINGS", "NCCL_MAX_NRINGS"},   {"NCCL_MIN_RINGS", "NCCL_MIN_NRINGS"},
      {"NCCL_SOCKET_IF_NAME", "NCCL_SOCKET_IFNAME"}, {"NCCL_IB_GID", "NCCL_IB_GID_INDEX"},
      {"NCCL_DEBUG_LEVEL", "NCCL_DEBUG"},      {"NCCL_IFNAME", "NCCL_SOCKET_IFNAME"}};
  auto it = kKnown.find(name);
  if (it != kKnown.end()) return it->second;
  return std::nullopt;
}

}  // namespace ncclpm::rules

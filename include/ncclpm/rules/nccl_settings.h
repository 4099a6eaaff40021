// include/ncclpm/rules/nccl_settings.h
//
// Which NCCL_* environment variables NCCL's own source reads, and in which
// releases (data/nccl-env-params.tsv, taken from NVIDIA/nccl by tag). Advice
// must only name real settings, and a job's settings that its NCCL version
// ignores (or that no NCCL ever read: NCCL_TIMEOUT, NCCL_IB_MTU) are worth
// telling the user about.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "ncclpm/util/result.h"

namespace ncclpm::rules {

class NcclSettings {
 public:
  /// Loads the table; $NCCLPM_DATA overrides the data directory compiled in.
  static Result<NcclSettings> load(const std::filesystem::path& tsv = default_path());
  static std::filesystem::path default_path();

  struct Span {
    std::string first, last;  ///< "2.3.5", "current"
  };
  /// The releases that read `name`, or nullopt when no release does.
  std::optional<Span> span(const std::string& name) const;
  bool read_by_current(const std::string& name) const;
  /// Whether NCCL `version` ("2.21.5") reads `name`.
  bool read_by(const std::string& name, const std::string& version) const;
  /// A real setting a misspelt name was probably meant to be ("NCCL_MAX_RINGS" -> "NCCL_MAX_NRINGS").
  std::optional<std::string> likely_meant(const std::string& name) const;
  size_t size() const { return spans_.size(); }

 private:
  std::map<std::string, Span> spans_;
};

}  // namespace ncclpm::rules

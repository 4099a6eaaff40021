// src/store/host_names.h
//
// One machine under several names: NCCL's prefix says "hgx-001", torchrun's
// failure summary "hgx-001.cluster.internal". Store-internal SQL that compares
// hosts (a rank's host, a host's clock) compares their short names.
#pragma once

#include <string>

namespace ncclpm::store {

/// SQL for the short name of the host in `column`: up to the first dot of a
/// name with letters in it; an IP address stays whole.
inline std::string short_host_sql(const std::string& column) {
  return "(CASE WHEN instr(" + column + ", '.') > 0 AND " + column + " GLOB '*[A-Za-z]*' THEN substr(" + column +
         ", 1, instr(" + column + ", '.') - 1) ELSE " + column + " END)";
}

}  // namespace ncclpm::store

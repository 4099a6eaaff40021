// src/frame/collectors.h
//
// Prefixes that log collectors and container runtimes put in front of what a
// job printed, before any launcher or producer prefix: kubectl's
// `[pod/NAME/CONTAINER] `, the CRI log format `2024-05-01T10:11:12.123Z stdout F `,
// journald/syslog `Nov 23 10:11:12 host python[1234]: `, docker compose
// `trainer-1  | `, a host tag with its stream `node-3 [stderr] `, a bare
// host or pod name or date in front of a producer's own prefix, Intel MPI's
// rank label `[155] `, and UCX's `[host:pid:thread:tid] `.
#pragma once

#include <string_view>

#include "ncclpm/frame/framer.h"

namespace ncclpm::frame {

/// Peels one collector prefix off `rest`; the host it names goes to f.host
/// (when none is known yet), its time to f.ts. False when there is none.
/// `name_tags`: also a leading name (docker compose's `trainer-1  | `, a host
/// with its stream, a bare pod name before a producer prefix). Such a name
/// could be the start of a message too, so the framer peels it only when most
/// of the file's first lines carry one (Framer::learn_launcher).
bool peel_collector(std::string_view& rest, Frame& f, bool name_tags);

/// Whether `line` starts with such a name tag.
bool starts_with_name_tag(std::string_view line);

}  // namespace ncclpm::frame

// include/ncclpm/store/clock_offsets.h
//
// One time axis across hosts. Each host's lines carry its own wall clock, and
// clocks drift (no NTP on a node, a container in another time zone). Some
// events happen at the same moment on every rank: a communicator's init
// completes together (a bootstrap allgather ends it), and the ranks that wait
// in one hung collective entered it together, so the watchdog's fire time
// minus its "ran for" is the same moment everywhere. Comparing those moments
// host by host gives each host's offset from a reference host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ncclpm::store {

/// One host's reading of a moment that every participant shares.
struct ClockSample {
  std::string host;
  std::string moment;  ///< what happened together: "watchdog pg 0 seq 59709", "init 0x5f1e..."
  int64_t at_us = 0;   ///< on that host's clock
};

struct ClockOffset {
  std::string host;
  std::string reference;     ///< the host whose clock the job's times are put on
  int64_t offset_us = 0;     ///< host clock minus reference clock
  int moments = 0;           ///< shared moments the estimate rests on
  std::string basis;         ///< "watchdog timeouts", "communicator inits" or both
  bool corrected = false;    ///< big enough to be a skew, not rounding: times were shifted
};

/// Offsets smaller than this are the noise of second-resolution timestamps
/// and of ranks entering a collective a little apart; they are stored but
/// no time is shifted for them.
inline constexpr int64_t kSkewThresholdUs = 2'000'000;

/// Every host that shares a moment with the reference, directly or through
/// other hosts, gets an offset (the reference itself is not listed). The
/// reference is `preferred` when it has samples (rank 0's host), else the host
/// with the most samples. Per moment a host's reading is the median of its
/// ranks'; per pair of hosts the offset is the median over their shared moments.
std::vector<ClockOffset> estimate_clock_offsets(const std::vector<ClockSample>& samples,
                                                const std::string& preferred);

}  // namespace ncclpm::store

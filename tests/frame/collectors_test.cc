// tests/frame/collectors_test.cc
//
// Prefixes log collectors and container runtimes put in front of a job's
// lines (src/frame/collectors.cc), peeled before launchers' and producers'
// own: each stack of real forms, and messages that only look like one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ncclpm/frame/framer.h"

namespace ncclpm::frame {
namespace {

Framer learned(const std::vector<std::string_view>& sample) {
  Framer framer;
  framer.learn_launcher(sample);
  return framer;
}

// --- Log collectors and container runtimes in front of everything ----------

struct CollectorCase {
  const char* line;
  const char* host;
  int rank;
  Producer producer;
  const char* body_start;
};

TEST(Collectors, PeelsAnyStackOfPrefixesBeforeAKnownLine) {
  const CollectorCase cases[] = {
      {"dinov2-nodes.cn-d004 [stderr] [rank12]:[E909 09:55:29.123456 ProcessGroupNCCL.cpp:632] [Rank 12] Watchdog caught x",
       "dinov2-nodes.cn-d004", 12, Producer::kC10, "Watchdog caught"},
      {"[pod/trainer-worker-1/pytorch] [rank9]:[E909 09:55:29.123456 ProcessGroupNCCL.cpp:632] Watchdog caught x",
       "trainer-worker-1", 9, Producer::kC10, "Watchdog caught"},
      {"Nov 23 10:11:12 gpu-node3 python[1234]: [rank3]:[E909 09:55:29.123456 ProcessGroupNCCL.cpp:632] boom",
       "gpu-node3", 3, Producer::kC10, "boom"},
      {"trainer-1  | gpu-node4:2222:2230 [1] transport/net_ib.cc:100 NCCL WARN NET/IB : Got async event : port error",
       "gpu-node4", -1, Producer::kNccl, "NET/IB : Got async event"},
      {"2024-05-01T10:11:12.123456789Z stdout F [rank5]:[E909 09:55:29.123456 ProcessGroupNCCL.cpp:632] boom", "", 5,
       Producer::kC10, "boom"},
      {"trainer-worker-0 2024-05-01 10:11:12 gpu-node6:2222:2230 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
       "gpu-node6", -1, Producer::kNccl, "Bootstrap"},
      {"[155] crow-19:5330:7970 [3] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Invalid argument",
       "crow-19", 155, Producer::kNccl, "Call to ibv_modify_qp"},
      // The rank glued on, as posted from a Horovod job.
      {"[15]worker-23:83:2526 [0] misc/socket.cc:503 NCCL WARN Net : Call to recv from 100.96.188.199<41468> failed",
       "worker-23", 15, Producer::kNccl, "Net : Call to recv"},
      {"[ib-vm-61:343042:0:345015] Caught signal 11 (Segmentation fault: invalid permissions for mapped object)",
       "ib-vm-61", -1, Producer::kUnknown, "Caught signal 11"},
      {"2025-11-24T03:20:21.001125857Z [2025-11-24 11:20:21] gpu-server320 [5] misc/socket.cc:46 NCCL WARN "
       "socketProgressOpt: Call to send to 10.44.137.149<52905> failed : Connection reset by peer",
       "gpu-server320", -1, Producer::kNccl, "socketProgressOpt"},
      {"2025-11-24T03:20:21.001128133Z gpu-server320 [5] NCCL INFO misc/socket.cc:64 -> 6", "gpu-server320", -1,
       Producer::kNccl, "misc/socket.cc:64 -> 6"},
      // A collector's local time with its zone after a space, then the container's own UTC stamp.
      {"2025-11-09 15:39:31.043 +08:00 [2025-11-09 07:39:30] h100-28:238:1313 [0] transport/net_ib.cc:139 NCCL WARN "
       "communicator encountered a fatal error (detected in ncclIbTest)",
       "h100-28", -1, Producer::kNccl, "communicator encountered"},
      {"2024-03-05 10:11:12 -0500 gpu-node2:77:88 [3] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>", "gpu-node2", -1,
       Producer::kNccl, "Bootstrap"},
      // UCX pads the pid to five columns.
      {"[qgpuvb813-cvision:1    :0:381] Caught signal 7 (Bus error: nonexistent physical address)",
       "qgpuvb813-cvision", -1, Producer::kUnknown, "Caught signal 7"},
      // A log viewer's table copied as text (CloudWatch, SageMaker).
      {"  | 2024-08-23T22:22:51.873Z | [rank4]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 4] Timeout at NCCL work: 70426",
       "", 4, Producer::kC10, "Timeout at NCCL work"},
      // Open MPI's own: host and pid only.
      {"[rtptest1621:405884] *** Process received signal ***", "rtptest1621", -1, Producer::kUnknown,
       "*** Process received signal"},
  };
  for (const CollectorCase& c : cases) {
    Framer framer = learned({c.line});  // a file whose lines all carry the prefix
    Frame f = framer.frame(c.line);
    EXPECT_EQ(f.host, c.host) << c.line;
    EXPECT_EQ(f.rank, c.rank) << c.line;
    EXPECT_EQ(f.producer, c.producer) << c.line;
    EXPECT_TRUE(std::string_view(f.body).starts_with(c.body_start)) << c.line << " -> " << f.body;
  }
}

TEST(Collectors, LeavesMessagesThatOnlyLookLikeTags) {
  for (const char* line : {"RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:784, unhandled cuda error",
                           "step-3 loss 1.25 lr 0.0001", "2024-05-01 10:11:12,345 - INFO - Saving checkpoint",
                           "[2]step 3: loss 1.2 (no NCCL prefix after a glued tag)", "[12:34] epoch 3 done", "[12:34:56] epoch 3 done"}) {
    Framer framer = learned({line});
    Frame f = framer.frame(line);
    EXPECT_TRUE(f.host.empty()) << line;
    EXPECT_NE(std::string_view(f.body).find(line[0] == '2' ? "Saving" : line), std::string_view::npos) << line;
  }
}

TEST(Collectors, ANameTagIsPeeledOnlyInFilesWhereMostLinesCarryOne) {
  const char* line = "eval-1 | acc 0.91";
  Framer alone = learned({line, "step 1 loss 2.0", "step 2 loss 1.9"});
  EXPECT_TRUE(alone.frame(line).host.empty()) << "one line of output is no compose log";
  Framer compose = learned({line, "eval-1 | step 1", "eval-1 | step 2"});
  EXPECT_EQ(compose.frame(line).host, "eval-1");
  EXPECT_EQ(compose.frame(line).body, "acc 0.91");
}

TEST(Collectors, SyslogNeedsADayOfDigits) {
  Framer framer;
  Frame f = framer.frame("Mar ab 10:11:12 gpu-node3 python[1234]: boom");
  EXPECT_TRUE(f.host.empty());
  f = framer.frame("Mar  3 10:11:12 gpu-node3 python[1234]: boom");
  EXPECT_EQ(f.host, "gpu-node3");
  EXPECT_EQ(f.body, "boom");
  EXPECT_EQ(f.ts.day, 3);
}

}  // namespace
}  // namespace ncclpm::frame

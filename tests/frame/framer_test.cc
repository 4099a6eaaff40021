// tests/frame/framer_test.cc
//
// The framer against real-format lines of every producer and launcher
// (shared/log-formats.md sections A-D, F, H): each prefix peeled with its
// fields, and near-misses that must be left alone.
#include "ncclpm/frame/framer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ncclpm::frame {
namespace {

Framer learned(const std::vector<std::string_view>& sample) {
  Framer framer;
  framer.learn_launcher(sample);
  return framer;
}

// --- NCCL (A.1, F "NCCL line") ----------------------------------------------

TEST(Framer, PeelsNcclInfoPrefixOfEveryEra) {
  Framer framer;
  Frame f = framer.frame("node1:4242:4242 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>");
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.host, "node1");
  EXPECT_EQ(f.pid, 4242);
  EXPECT_EQ(f.tid, 4242);
  EXPECT_EQ(f.device, 0);
  EXPECT_EQ(f.nccl_level, "INFO");
  EXPECT_EQ(f.severity, 'I');
  EXPECT_EQ(f.body, "Bootstrap : Using eth0:10.0.0.1<0>");
  EXPECT_FALSE(f.ts.valid());
  EXPECT_TRUE(f.had_prefix);
}

TEST(Framer, PeelsNcclWarnPrefixUpTo225WithSourceFileAndLine) {
  Framer framer;
  Frame f = framer.frame(
      "gpu-a17:59709:59840 [3] transport/net_ib.cc:1034 NCCL WARN NET/IB : Got completion "
      "from peer 10.0.0.2<45074> with error 12, opcode 0, len 0, vendor err 129");
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.host, "gpu-a17");
  EXPECT_EQ(f.pid, 59709);
  EXPECT_EQ(f.tid, 59840);
  EXPECT_EQ(f.device, 3);
  EXPECT_EQ(f.nccl_level, "WARN");
  EXPECT_EQ(f.severity, 'W');
  EXPECT_EQ(f.src_file, "transport/net_ib.cc");
  EXPECT_EQ(f.src_line, 1034);
  EXPECT_EQ(f.body,
            "NET/IB : Got completion from peer 10.0.0.2<45074> with error 12, opcode 0, len 0, "
            "vendor err 129");
}

TEST(Framer, PeelsNccl226TimestampBeforeHost) {
  Framer framer;
  Frame f = framer.frame(
      "[2025-04-08 08:39:46] gpu-node-17:59709:59840 [7] misc/socket.cc:50 NCCL WARN "
      "socketProgress: Connection closed by remote peer gpu-node-3.int<45074>");
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.host, "gpu-node-17");
  EXPECT_EQ(f.device, 7);
  EXPECT_EQ(f.src_file, "misc/socket.cc");
  EXPECT_EQ(f.src_line, 50);
  ASSERT_TRUE(f.ts.valid());
  EXPECT_EQ(f.ts.year, 2025);
  EXPECT_EQ(f.ts.month, 4);
  EXPECT_EQ(f.ts.day, 8);
  EXPECT_EQ(f.ts.hour, 8);
  EXPECT_EQ(f.ts.minute, 39);
  EXPECT_EQ(f.ts.second, 46);
  EXPECT_EQ(f.body, "socketProgress: Connection closed by remote peer gpu-node-3.int<45074>");
}

TEST(Framer, PeelsNccl2307WarnWithFunctionName) {
  Framer framer;
  Frame f = framer.frame(
      "[2026-01-10 11:22:33] node1:4242:4250 [0] transport/net_ib/p2p.cc:412 "
      "(ncclIbLogCompletionWithError) NCCL WARN NET/IB: Got completion from peer "
      "10.0.0.2<45074> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) "
      "vendor_err=129  localGid ::ffff:10.1.1.1 remoteGids::ffff:10.1.1.2 hca mlx5_2");
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.nccl_level, "WARN");
  EXPECT_EQ(f.src_file, "transport/net_ib/p2p.cc");
  EXPECT_EQ(f.src_line, 412);
  EXPECT_EQ(f.ts.year, 2026);
  EXPECT_TRUE(f.body.starts_with("NET/IB: Got completion from peer 10.0.0.2<45074>"));
  EXPECT_TRUE(f.body.ends_with("hca mlx5_2"));
}

TEST(Framer, PeelsNcclLinesPastedWithoutTheirHostPidTid) {
  Framer framer;
  Frame f = framer.frame("[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer 10.10.1.3<36138>");
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.nccl_level, "WARN");
  EXPECT_EQ(f.device, 0);
  EXPECT_TRUE(f.host.empty());
  EXPECT_EQ(f.body, "socketProgress: Connection closed by remote peer 10.10.1.3<36138>");
  f = framer.frame("[3] NCCL INFO misc/socket.cc:80 -> 6");
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.body, "misc/socket.cc:80 -> 6");
  f = framer.frame("[0] not an NCCL line at all");
  EXPECT_NE(f.producer, Producer::kNccl);
}

TEST(Framer, PeelsWhatPastesLeaveOfNcclsPrefix) {
  struct Case {
    const char* line;
    const char* host;
    const char* level;
    const char* body;
  };
  const Case cases[] = {
      {"host-01.example.com:XXXXXX [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110",
       "host-01.example.com", "WARN", "Call to ibv_modify_qp failed with 110"},
      {"<cluster_name>:920:1145 [1] NCCL INFO Channel 04/0 : 9[1] -> 10[2] via P2P/IPC/read", "<cluster_name>", "INFO",
       "Channel 04/0 : 9[1] -> 10[2] via P2P/IPC/read"},
      {"graph/xml.h:77 NCCL WARN Attribute arch of node cpu not found", "", "WARN",
       "Attribute arch of node cpu not found"},
      {"graph/xml.h: NCCL WARN Error : too many XML nodes (max 256)", "", "WARN", "Error : too many XML nodes (max 256)"},
      {"NCCL INFO graph/topo.cc:380 -> 3", "", "INFO", "graph/topo.cc:380 -> 3"},
  };
  for (const Case& c : cases) {
    Framer framer;
    Frame f = framer.frame(c.line);
    EXPECT_EQ(f.producer, Producer::kNccl) << c.line;
    EXPECT_EQ(f.host, c.host) << c.line;
    EXPECT_EQ(f.nccl_level, c.level) << c.line;
    EXPECT_EQ(f.body, c.body) << c.line;
  }
  Framer framer;
  EXPECT_NE(framer.frame("see xml.h and the NCCL WARN lines below").producer, Producer::kNccl);
}

TEST(Framer, PeelsNcclLineWithEmptyHostField) {
  Framer framer;
  for (std::string_view line : {"::16674:16674 [0] NCCL INFO Using network IB",
                                ":16674:16674 [0] NCCL INFO Using network IB"}) {
    Frame f = framer.frame(line);
    EXPECT_EQ(f.producer, Producer::kNccl) << line;
    EXPECT_EQ(f.host, "") << line;
    EXPECT_EQ(f.pid, 16674) << line;
    EXPECT_EQ(f.tid, 16674) << line;
    EXPECT_EQ(f.device, 0) << line;
    EXPECT_EQ(f.body, "Using network IB") << line;
  }
}

TEST(Framer, PeelsNcclTraceWithFunctionAsSource) {
  Framer framer;
  Frame f =
      framer.frame("node1:4242:4251 [1] 1234.567890 ncclProxyProgress:456 NCCL TRACE progress op");
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.nccl_level, "TRACE");
  EXPECT_EQ(f.device, 1);
  EXPECT_EQ(f.src_file, "ncclProxyProgress");
  EXPECT_EQ(f.src_line, 456);
  EXPECT_EQ(f.body, "progress op");
}

TEST(Framer, PeelsNcclCallLineWhichHasNoDevice) {
  Framer framer;
  Frame f = framer.frame(
      "node1:4242:4242 NCCL CALL ncclAllReduce(0x7f3c2e000000,0x7f3c30000000,1024,7,0,0,"
      "0x55d5a8b3c2d0,0x55d5a8b3e4f0)");
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.nccl_level, "CALL");
  EXPECT_EQ(f.device, -1);
  EXPECT_TRUE(f.body.starts_with("ncclAllReduce("));
}

TEST(Framer, PeelsTimestampOfA226VersionBanner) {
  Framer framer;
  Frame f = framer.frame("[2025-04-08 08:39:40] NCCL version 2.26.2+cuda12.8");
  EXPECT_EQ(f.body, "NCCL version 2.26.2+cuda12.8");
  ASSERT_TRUE(f.ts.valid());
  EXPECT_EQ(f.ts.year, 2025);
  EXPECT_EQ(f.ts.second, 40);
}

TEST(Framer, LeavesLinesThatOnlyResembleNcclAlone) {
  Framer framer;
  // Missing tid.
  Frame a = framer.frame("node1:4242 [0] NCCL INFO Using network IB");
  EXPECT_NE(a.producer, Producer::kNccl);
  EXPECT_EQ(a.body, "node1:4242 [0] NCCL INFO Using network IB");
  // Unknown level word.
  Frame b = framer.frame("node1:4242:4242 [0] NCCL DEBUG something");
  EXPECT_NE(b.producer, Producer::kNccl);
  // PyTorch's error text mentions NCCL but is no NCCL line.
  Frame c = framer.frame("RuntimeError: NCCL error: unhandled system error, NCCL version 2.14.3");
  EXPECT_EQ(c.producer, Producer::kUnknown);
  EXPECT_EQ(c.body, "RuntimeError: NCCL error: unhandled system error, NCCL version 2.14.3");
}

// --- c10 logger (B.1, F "c10 logger prefix") ---------------------------------

TEST(Framer, PeelsC10PrefixWithoutTimeUpTo23) {
  Framer framer;
  Frame f = framer.frame(
      "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: "
      "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800567 milliseconds before "
      "timing out.");
  EXPECT_EQ(f.producer, Producer::kC10);
  EXPECT_EQ(f.severity, 'E');
  EXPECT_EQ(f.src_file, "ProcessGroupNCCL.cpp");
  EXPECT_EQ(f.src_line, 475);
  EXPECT_FALSE(f.ts.valid());
  EXPECT_EQ(f.rank, -1);
  EXPECT_EQ(f.pg_rank, 1);
  EXPECT_TRUE(f.body.starts_with("Watchdog caught collective operation timeout: WorkNCCL("));
}

TEST(Framer, PeelsC10PrefixAfterGlobalRankTag) {
  Framer framer;
  Frame f = framer.frame(
      "[rank5]:[E ProcessGroupNCCL.cpp:563] [PG 0 Rank 5] Timeout at NCCL work: 4523, "
      "last enqueued NCCL work: 4523, last completed NCCL work: 4522.");
  EXPECT_EQ(f.producer, Producer::kC10);
  EXPECT_EQ(f.rank, 5);
  EXPECT_EQ(f.src_line, 563);
  EXPECT_EQ(f.pg_id, "0");
  EXPECT_EQ(f.pg_rank, 5);
  EXPECT_EQ(
      f.body,
      "Timeout at NCCL work: 4523, last enqueued NCCL work: 4523, last completed NCCL work: 4522.");
}

TEST(Framer, ReadsUnpaddedC10MonthDayAndDropsMonotonicNanoseconds) {
  Framer framer;
  Frame jul = framer.frame(
      "[rank7]:[E709 17:05:38.162814866 ProcessGroupNCCL.cpp:632] [Rank 7] Watchdog caught "
      "collective operation timeout");
  EXPECT_EQ(jul.producer, Producer::kC10);
  EXPECT_EQ(jul.rank, 7);
  EXPECT_EQ(jul.ts.month, 7);
  EXPECT_EQ(jul.ts.day, 9);
  EXPECT_EQ(jul.ts.hour, 17);
  EXPECT_EQ(jul.ts.minute, 5);
  EXPECT_EQ(jul.ts.second, 38);
  EXPECT_EQ(jul.ts.micros, 0);  // CLOCK_MONOTONIC digits are not wall-clock time
  EXPECT_FALSE(jul.ts.has_year());

  Frame oct = framer.frame(
      "[rank1]:[E1003 18:37:01.832146912 ProcessGroupNCCL.cpp:607] [PG ID 0 PG GUID "
      "0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at "
      "work: 1, last enqueued NCCL work: 1, last completed NCCL work: -1.");
  EXPECT_EQ(oct.ts.month, 10);
  EXPECT_EQ(oct.ts.day, 3);
  EXPECT_EQ(oct.src_line, 607);
  EXPECT_EQ(oct.pg_rank, 1);
}

TEST(Framer, KeepsTorchWarnTextAfterC10Prefix) {
  Framer framer;
  Frame f = framer.frame(
      "[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 "
      "(errno: 99 - Cannot assign requested address).");
  EXPECT_EQ(f.producer, Producer::kC10);
  EXPECT_EQ(f.severity, 'W');
  EXPECT_EQ(f.src_file, "socket.cpp");
  EXPECT_EQ(f.body.substr(0, 7), "[c10d] ");
}

TEST(Framer, DoesNotTakeBracketedPythonTextForC10) {
  Framer framer;
  Frame errno_line = framer.frame("[Errno 111] Connection refused");
  EXPECT_EQ(errno_line.producer, Producer::kUnknown);
  EXPECT_EQ(errno_line.body, "[Errno 111] Connection refused");
  // Month 13 is no date.
  Frame bad_month = framer.frame("[E1345 18:37:01.832146912 ProcessGroupNCCL.cpp:607] text");
  EXPECT_NE(bad_month.producer, Producer::kC10);
  // No line number.
  Frame no_line = framer.frame("[E709 17:05:38.162814866 ProcessGroupNCCL.cpp] text");
  EXPECT_NE(no_line.producer, Producer::kC10);
}

// --- glog and torch 2.4+ Python logging (B.1, C.1, F) ------------------------

TEST(Framer, PeelsGlogPrefix) {
  Framer framer;
  Frame f = framer.frame(
      "E0709 17:05:38.162555 12345 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught "
      "collective operation timeout");
  EXPECT_EQ(f.producer, Producer::kGlog);
  EXPECT_EQ(f.severity, 'E');
  EXPECT_EQ(f.ts.month, 7);
  EXPECT_EQ(f.ts.day, 9);
  EXPECT_EQ(f.ts.micros, 162555);
  EXPECT_EQ(f.tid, 12345);
  EXPECT_EQ(f.src_file, "ProcessGroupNCCL.cpp");
  EXPECT_EQ(f.src_line, 632);
  EXPECT_EQ(f.pg_rank, 0);
  EXPECT_EQ(f.body, "Watchdog caught collective operation timeout");
}

TEST(Framer, PeelsLauncherTagBeforeRawGlog) {
  Framer framer;
  Frame f = framer.frame(
      "[3]:E0423 02:10:44.182842  8355 ProcessGroupNCCL.cpp:1329] [Rank 3] NCCL watchdog "
      "thread terminated with exception: CUDA error: an illegal memory access was encountered");
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.producer, Producer::kGlog);
  EXPECT_EQ(f.tid, 8355);
  EXPECT_EQ(f.src_line, 1329);
  EXPECT_EQ(f.ts.month, 4);
  EXPECT_EQ(f.ts.day, 23);
  EXPECT_EQ(f.pg_rank, 3);
  EXPECT_TRUE(f.body.starts_with("NCCL watchdog thread terminated with exception: CUDA error"));
}

TEST(Framer, PeelsTorch24PythonLogFormat) {
  Framer framer;
  Frame f24 = framer.frame(
      "W0616 20:34:34.710000 140609446490112 torch/distributed/elastic/multiprocessing/"
      "api.py:851] Sending process 76627 closing signal SIGTERM");
  EXPECT_EQ(f24.producer, Producer::kGlog);
  EXPECT_EQ(f24.severity, 'W');
  EXPECT_EQ(f24.src_file, "torch/distributed/elastic/multiprocessing/api.py");
  EXPECT_EQ(f24.src_line, 851);
  EXPECT_EQ(f24.tid, 140609446490112);
  EXPECT_EQ(f24.ts.micros, 710000);
  EXPECT_EQ(f24.body, "Sending process 76627 closing signal SIGTERM");

  Frame f25 = framer.frame(
      "E0322 10:04:33.268000 13602 site-packages/torch/distributed/elastic/multiprocessing/"
      "api.py:869] failed (exitcode: 1) local_rank: 1 (pid: 13670) of binary: "
      "/data/envs/x/bin/python");
  EXPECT_EQ(f25.severity, 'E');
  EXPECT_EQ(f25.ts.month, 3);
  EXPECT_EQ(f25.ts.day, 22);
  EXPECT_EQ(f25.src_line, 869);
  EXPECT_EQ(f25.body,
            "failed (exitcode: 1) local_rank: 1 (pid: 13670) of binary: /data/envs/x/bin/python");
}

TEST(Framer, SkipsTraceIdAndArtifactGroupsOfTorchLogs) {
  Framer framer;
  Frame f = framer.frame(
      "[rank0]:W1005 12:00:00.123000 4242 torch/_dynamo/convert_frame.py:844] [0/8] "
      "[__recompiles] torch._dynamo hit config.cache_size_limit (8)");
  EXPECT_EQ(f.rank, 0);
  EXPECT_EQ(f.producer, Producer::kGlog);
  EXPECT_EQ(f.body, "torch._dynamo hit config.cache_size_limit (8)");
}

TEST(Framer, MapsTorchCriticalSeverityToFatal) {
  Framer framer;
  Frame f = framer.frame("C0616 20:34:34.710000 77 torch/x.py:1] boom");
  EXPECT_EQ(f.producer, Producer::kGlog);
  EXPECT_EQ(f.severity, 'F');
}

TEST(Framer, KeepsPgPrefixOfGlogBuildsApartFromTorchTraceIds) {
  Framer framer;
  Frame f = framer.frame("E0709 17:05:38.162555 12345 ProcessGroupNCCL.cpp:632] [PG 0 Rank 2] x");
  EXPECT_EQ(f.pg_rank, 2);
  EXPECT_EQ(f.pg_id, "0");
  EXPECT_EQ(f.body, "x");
}

TEST(Framer, RejectsGlogWithoutThreadId) {
  Framer framer;
  Frame f = framer.frame("E0709 17:05:38.162555 ProcessGroupNCCL.cpp:632] text");
  EXPECT_EQ(f.producer, Producer::kUnknown);
  EXPECT_EQ(f.body, "E0709 17:05:38.162555 ProcessGroupNCCL.cpp:632] text");
}

// --- torch 2.2-2.3 and <=2.1 Python logging (C.1, F) -------------------------

TEST(Framer, PeelsTorch22PythonLogFormat) {
  Framer framer;
  Frame f = framer.frame(
      "[2024-02-01 09:14:29,497] torch.distributed.elastic.multiprocessing.api: [WARNING] "
      "Sending process 1245 closing signal SIGTERM");
  EXPECT_EQ(f.producer, Producer::kPyLogging);
  EXPECT_EQ(f.severity, 'W');
  EXPECT_EQ(f.src_file, "torch.distributed.elastic.multiprocessing.api");
  EXPECT_EQ(f.ts.year, 2024);
  EXPECT_EQ(f.ts.month, 2);
  EXPECT_EQ(f.ts.day, 1);
  EXPECT_EQ(f.ts.second, 29);
  EXPECT_EQ(f.ts.micros, 497000);
  EXPECT_EQ(f.body, "Sending process 1245 closing signal SIGTERM");

  Frame ranked = framer.frame(
      "[rank3]:[2024-02-01 09:14:30,001] torch.distributed.distributed_c10d: [INFO] "
      "Added key: store_based_barrier_key:1 to store for rank: 3");
  EXPECT_EQ(ranked.rank, 3);
  EXPECT_EQ(ranked.severity, 'I');
  EXPECT_EQ(ranked.body, "Added key: store_based_barrier_key:1 to store for rank: 3");
}

TEST(Framer, PeelsBasicPythonLogFormatUpTo21) {
  Framer framer;
  Frame f = framer.frame(
      "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 2334 closing "
      "signal SIGTERM");
  EXPECT_EQ(f.producer, Producer::kPyLogging);
  EXPECT_EQ(f.severity, 'W');
  EXPECT_EQ(f.src_file, "torch.distributed.elastic.multiprocessing.api");
  EXPECT_EQ(f.body, "Sending process 2334 closing signal SIGTERM");
}

TEST(Framer, PeelsTorchelasticsOwnLogFormat) {
  Framer framer;
  Frame f = framer.frame("[ERROR] 2021-09-13 22:18:26,678 error_handler: {");
  EXPECT_EQ(f.producer, Producer::kPyLogging);
  EXPECT_EQ(f.severity, 'E');
  EXPECT_EQ(f.src_file, "error_handler");
  EXPECT_EQ(f.ts.year, 2021);
  EXPECT_EQ(f.ts.micros, 678000);
  EXPECT_EQ(f.body, "{");
  Frame info = framer.frame("[INFO] 2020-11-16 05:37:30,257 api: [default] All workers successfully finished.");
  EXPECT_EQ(info.severity, 'I');
  EXPECT_EQ(info.body, "[default] All workers successfully finished.");
  // A bracketed level followed by no time is some other format.
  Frame other = framer.frame("[INFO] loading the model: done");
  EXPECT_NE(other.body, "done");
}

TEST(Framer, RejectsDeepSpeedPrefixWithoutSourceLocation) {
  Framer framer;
  Frame f = framer.frame("[2024-05-01 10:00:00,123] [INFO] no location here");
  EXPECT_EQ(f.producer, Producer::kUnknown);
  EXPECT_EQ(f.body, "[2024-05-01 10:00:00,123] [INFO] no location here");
}

TEST(Framer, DoesNotTakeExceptionLinesForPythonLogging) {
  Framer framer;
  for (std::string_view line : {"RuntimeError: CUDA error: out of memory", "ERROR: could not start",
                                "[2024-02-01 09:14:29,497] [WARNING] no logger name"}) {
    Frame f = framer.frame(line);
    EXPECT_EQ(f.producer, Producer::kUnknown) << line;
    EXPECT_EQ(f.body, line);
  }
}

TEST(Framer, PeelsNemoLoggerPrefixWithItsOneLetterLevel) {
  Framer framer;
  Frame f = framer.frame(
      "[NeMo E 2023-01-18 07:39:42 exp_manager:423] You are running multi-node training without SLURM "
      "handling the processes.");
  EXPECT_EQ(f.producer, Producer::kPyLogging);
  EXPECT_EQ(f.severity, 'E');
  EXPECT_EQ(f.src_file, "exp_manager");
  EXPECT_EQ(f.src_line, 423);
  EXPECT_EQ(f.ts.hour, 7);
  EXPECT_EQ(f.body, "You are running multi-node training without SLURM handling the processes.");
  // The relative-path variant names the function too.
  Frame g = framer.frame("[NeMo W 2025-03-01 10:00:00 nemo/collections/llm/api.py:88][train()] Using default trainer");
  EXPECT_EQ(g.severity, 'W');
  EXPECT_EQ(g.src_file, "nemo/collections/llm/api.py");
  EXPECT_EQ(g.body, "Using default trainer");
  // Not NeMo's: no level letter, no time.
  Frame h = framer.frame("[NeMo] starting");
  EXPECT_EQ(h.producer, Producer::kUnknown);
}

TEST(Framer, PeelsVllmLoggerPrefixOfBothEras) {
  Framer framer;
  Frame f = framer.frame(
      "(RayWorkerWrapper pid=5290, ip=10.0.0.2) ERROR 02-05 09:11:53 worker_base.py:464] Error executing method "
      "determine_num_available_blocks.");
  EXPECT_EQ(f.host, "10.0.0.2");
  EXPECT_EQ(f.producer, Producer::kPyLogging);
  EXPECT_EQ(f.severity, 'E');
  EXPECT_EQ(f.src_file, "worker_base.py");
  EXPECT_EQ(f.src_line, 464);
  EXPECT_EQ(f.ts.month, 2);
  EXPECT_EQ(f.body, "Error executing method determine_num_available_blocks.");
  Frame g = framer.frame("INFO 03-31 10:00:00 [engine.py:160] Added request 0.");
  EXPECT_EQ(g.severity, 'I');
  EXPECT_EQ(g.src_file, "engine.py");
  EXPECT_EQ(g.body, "Added request 0.");
  for (std::string_view line : {"ERROR 12 times in a row", "INFO 13-01 10:00:00 x.py:1] no such month"}) {
    Frame h = framer.frame(line);
    EXPECT_EQ(h.producer, Producer::kUnknown) << line;
  }
}

// --- DeepSpeed (D, F "deepspeed") ------------------------------------------

TEST(Framer, PeelsDeepSpeedLoggerPrefix) {
  Framer framer;
  Frame f = framer.frame(
      "[2024-05-01 10:00:00,123] [INFO] [launch.py:256:main] process 1234 spawned with "
      "command: ['/usr/bin/python', '-u', 'train.py', '--local_rank=0']");
  EXPECT_EQ(f.producer, Producer::kDeepSpeed);
  EXPECT_EQ(f.severity, 'I');
  EXPECT_EQ(f.src_file, "launch.py");
  EXPECT_EQ(f.src_line, 256);
  EXPECT_EQ(f.ts.year, 2024);
  EXPECT_EQ(f.ts.micros, 123000);
  EXPECT_EQ(
      f.body,
      "process 1234 spawned with command: ['/usr/bin/python', '-u', 'train.py', '--local_rank=0']");

  Frame err = framer.frame(
      "[2024-05-01 10:05:00,456] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', "
      "'-u', 'train.py', '--local_rank=7'] exits with return code = -6");
  EXPECT_EQ(err.producer, Producer::kDeepSpeed);
  EXPECT_EQ(err.severity, 'E');
  EXPECT_EQ(err.src_line, 321);
  EXPECT_TRUE(err.body.ends_with("exits with return code = -6"));
}

// --- process-group prefix (B.2, F "PG prefix") ------------------------------

TEST(Framer, PeelsEveryProcessGroupPrefixForm) {
  Framer framer;
  struct Case {
    std::string_view line, pg_id, pg_name, pg_desc;
    int pg_rank;
  };
  const Case cases[] = {
      {"[E ProcessGroupNCCL.cpp:1] [Rank 3] x", "", "", "", 3},
      {"[E ProcessGroupNCCL.cpp:1] [PG 0 Rank 2] x", "0", "0", "", 2},
      {"[E ProcessGroupNCCL.cpp:1] [PG 0 (default_pg) Rank 1] x", "0", "0", "default_pg", 1},
      {"[E ProcessGroupNCCL.cpp:1] [PG ID 2 PG GUID 3 Rank 3] x", "2", "3", "", 3},
      {"[E ProcessGroupNCCL.cpp:1] [PG ID 0 PG GUID 0(default_pg) Rank 1] x", "0", "0",
       "default_pg", 1},
  };
  for (const Case& c : cases) {
    Frame f = framer.frame(c.line);
    EXPECT_EQ(f.pg_rank, c.pg_rank) << c.line;
    EXPECT_EQ(f.pg_id, c.pg_id) << c.line;
    EXPECT_EQ(f.pg_name, c.pg_name) << c.line;
    EXPECT_EQ(f.pg_desc, c.pg_desc) << c.line;
    EXPECT_EQ(f.body, "x") << c.line;
  }
}

TEST(Framer, PeelsTheDoubledPgPrefixOfFatalLines) {
  Framer framer;
  Frame f = framer.frame(
      "[rank6]:[F429 14:03:49.385461578 ProcessGroupNCCL.cpp:1554] [PG ID 0 PG GUID "
      "0(default_pg) Rank 6] [PG ID 0 PG GUID 0(default_pg) Rank 6] Terminating the process "
      "after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.");
  EXPECT_EQ(f.severity, 'F');
  EXPECT_EQ(f.rank, 6);
  EXPECT_EQ(f.pg_rank, 6);
  EXPECT_EQ(f.pg_desc, "default_pg");
  EXPECT_EQ(f.body,
            "Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL "
            "watchdog hang.");
}

TEST(Framer, TrimsTheDoubleSpaceAfterPgPrefix) {
  Framer framer;
  Frame f = framer.frame(
      "[rank3]:[E1003 18:37:01.832146912 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID "
      "0(default_pg) Rank 3]  failure detected by watchdog at work sequence id: 241 PG status: "
      "last enqueued work: 241, last completed work: 240");
  EXPECT_EQ(f.pg_rank, 3);
  EXPECT_TRUE(f.body.starts_with("failure detected by watchdog"));
}

TEST(Framer, KeepsGlobalRankAndGroupRankApartOnOneLine) {
  Framer framer;
  Frame f = framer.frame(
      "[rank15]:[E1003 18:37:02.100000000 ProcessGroupNCCL.cpp:1595] [PG ID 4 PG GUID "
      "20(mesh_tp) Rank 1] Process group watchdog thread terminated with exception: [Rank 1] "
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=241, OpType=ALLREDUCE, "
      "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600002 milliseconds before timing out.");
  EXPECT_EQ(f.rank, 15);
  EXPECT_EQ(f.pg_rank, 1);
  EXPECT_EQ(f.pg_id, "4");
  EXPECT_EQ(f.pg_name, "20");
  EXPECT_EQ(f.pg_desc, "mesh_tp");
  EXPECT_TRUE(f.body.starts_with(
      "Process group watchdog thread terminated with exception: [Rank 1] Watchdog"));
}

TEST(Framer, LeavesBracketTextThatIsNoPgPrefix) {
  Framer framer;
  Frame f = framer.frame("[E ProcessGroupNCCL.cpp:1] [PG status] nothing");
  EXPECT_EQ(f.pg_rank, -1);
  EXPECT_EQ(f.body, "[PG status] nothing");
  Frame g = framer.frame("[E ProcessGroupNCCL.cpp:1] [Rank x] nothing");
  EXPECT_EQ(g.pg_rank, -1);
  EXPECT_EQ(g.body, "[Rank x] nothing");
}

// --- launchers (D, F "slurm", "pdsh", "torchrun", "ray") -------------------

TEST(Framer, PeelsSlurmLabelOnlyWhenTheFileUsesIt) {
  Framer slurm = learned(
      {" 0: starting", " 1: starting", "12: [rank12]:[E ProcessGroupNCCL.cpp:1] x", " 3: ", ""});
  EXPECT_EQ(slurm.launcher(), LauncherFormat::kSlurmLabel);
  Frame f = slurm.frame(" 3: epoch 1 loss 0.5");
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.body, "epoch 1 loss 0.5");
  Frame g = slurm.frame("12: [rank12]:[E ProcessGroupNCCL.cpp:1] x");
  EXPECT_EQ(g.rank, 12);
  EXPECT_EQ(g.producer, Producer::kC10);
  Frame het = slurm.frame("P1 3: hello");
  EXPECT_EQ(het.rank, 3);
  EXPECT_EQ(het.body, "hello");

  Framer plain = learned({"epoch 1", "3: not a label", "loss 0.5", "done"});
  EXPECT_EQ(plain.launcher(), LauncherFormat::kNone);
  Frame p = plain.frame("3: not a label");
  EXPECT_EQ(p.rank, -1);
  EXPECT_EQ(p.body, "3: not a label");
}

TEST(Framer, PeelsPdshHostOnlyWhenTheFileUsesIt) {
  Framer pdsh = learned({"worker-1: starting", "worker-2: starting",
                         "worker-1: worker-1:2914:4490 [0] NCCL INFO Using network IB"});
  EXPECT_EQ(pdsh.launcher(), LauncherFormat::kPdsh);
  Frame f = pdsh.frame("worker-1: worker-1:2914:4490 [0] NCCL INFO Using network IB");
  EXPECT_EQ(f.host, "worker-1");
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.pid, 2914);
  EXPECT_EQ(f.tid, 4490);
  EXPECT_EQ(f.body, "Using network IB");

  Framer plain;
  Frame g = plain.frame("worker-1: starting");
  EXPECT_EQ(g.host, "");
  EXPECT_EQ(g.body, "worker-1: starting");
}

// A collector's prefix in front of the launcher's (a Kubernetes log of
// DeepSpeed's pdsh lines, kubectl --prefix over srun --label): the launcher
// is learnt behind it.
TEST(Framer, LearnsTheLauncherBehindACollectorsPrefix) {
  Framer cri = learned({"2024-05-01T10:00:00.000000Z stdout F gpu-q-13: ret = input.softmax(dim, dtype=dtype)",
                        "2024-05-01T10:00:01.000000Z stdout F gpu-q-13: torch.cuda.OutOfMemoryError: CUDA out of memory."});
  EXPECT_EQ(cri.launcher(), LauncherFormat::kPdsh);
  Frame f = cri.frame("2024-05-01T10:00:01.000000Z stdout F gpu-q-13: torch.cuda.OutOfMemoryError: CUDA out of memory.");
  EXPECT_EQ(f.host, "gpu-q-13");
  EXPECT_EQ(f.body, "torch.cuda.OutOfMemoryError: CUDA out of memory.");

  Framer kubectl = learned({"[pod/trainer-0/main] 3: step 10", "[pod/trainer-0/main] 3: RuntimeError: boom"});
  EXPECT_EQ(kubectl.launcher(), LauncherFormat::kSlurmLabel);
  EXPECT_EQ(kubectl.frame("[pod/trainer-0/main] 3: RuntimeError: boom").rank, 3);

  // A name tag (a host and its stream, docker compose's service) over pdsh's host.
  Framer tagged = learned({"node-3 [stderr] 192.168.13.81: [rank19]:[E808 10:31:07.406255799 "
                           "ProcessGroupNCCL.cpp:1895] [PG ID 1 PG GUID 1 Rank 19] x",
                           "node-3 [stderr] 192.168.13.81: step 10"});
  EXPECT_EQ(tagged.launcher(), LauncherFormat::kPdsh);
  Frame t = tagged.frame("node-3 [stderr] 192.168.13.81: [rank19]:[E808 10:31:07.406255799 ProcessGroupNCCL.cpp:1895] "
                         "[PG ID 1 PG GUID 1 Rank 19] x");
  EXPECT_EQ(t.rank, 19);
  EXPECT_EQ(t.body, "x");
}

// A log pasted as a Markdown quote (H): "> " before every line, ">" on a
// blank one. The quote goes; what it wraps is framed as if unquoted. A file
// with one quoted line among plain ones keeps it as written.
TEST(Framer, PeelsTheMarkdownQuoteOfAPastedLog) {
  Framer quoted = learned({"> node01: VM-0-14-centos:108:593 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE",
                           ">", "> node01: VM-0-14-centos:108:593 [0] transport/net_ib.cc:816 NCCL WARN NET/IB : "
                                "Got completion with error 12, opcode 0, len 0, vendor err 129"});
  EXPECT_EQ(quoted.launcher(), LauncherFormat::kPdsh) << "the launcher is learnt from the unquoted lines";
  Frame f = quoted.frame("> node01: VM-0-14-centos:108:593 [0] transport/net_ib.cc:816 NCCL WARN NET/IB : Got "
                         "completion with error 12, opcode 0, len 0, vendor err 129");
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.host, "VM-0-14-centos");
  EXPECT_EQ(f.nccl_level, "WARN");
  EXPECT_EQ(quoted.frame(">").body, "");

  Framer plain = learned({"step 1", "step 2", "> a quoted remark"});
  EXPECT_EQ(plain.frame("> a quoted remark").body, "> a quoted remark");

  // A reply that quoted the quoted log: one "> " per level.
  Framer twice = learned({"> > node01: VM-0-14-centos:106:196 [0] transport/net_ib.cc:73 NCCL WARN NET/IB : Got "
                          "async event : GID table change",
                          "> > node01:", "> > node01: VM-0-14-centos:107:194 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE"});
  EXPECT_EQ(twice.launcher(), LauncherFormat::kPdsh);
  Frame g = twice.frame("> > node01: VM-0-14-centos:106:196 [0] transport/net_ib.cc:73 NCCL WARN NET/IB : Got async "
                        "event : GID table change");
  EXPECT_EQ(g.producer, Producer::kNccl);
  EXPECT_EQ(g.host, "VM-0-14-centos");
}

// `grep PATTERN *.log` names each line's file, with -n its number too; the
// name is the paste's, not the job's. A file where few lines start that way
// keeps them as written, and only log files' names count.
TEST(Framer, PeelsTheFileNamesOfGrepOutput) {
  Framer grep = learned({"prefill-2.log:[2025-09-17 15:16:23] prefill-2:311:405 [0] transport/net_ib.cc:199 NCCL "
                         "WARN NET/IB : mlx5_32:1 Got async error event: port error",
                         "logs/decode-0.log:17:decode-0:52:60 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB",
                         "prefill-2.log:Traceback (most recent call last):"});
  Frame f = grep.frame("prefill-2.log:[2025-09-17 15:16:23] prefill-2:311:405 [0] transport/net_ib.cc:199 NCCL "
                       "WARN NET/IB : mlx5_32:1 Got async error event: port error");
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.host, "prefill-2");
  EXPECT_EQ(f.body, "NET/IB : mlx5_32:1 Got async error event: port error");
  Frame g = grep.frame("logs/decode-0.log:17:decode-0:52:60 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB");
  EXPECT_EQ(g.host, "decode-0");
  EXPECT_EQ(g.device, 3);
  EXPECT_EQ(grep.frame("prefill-2.log:Traceback (most recent call last):").body, "Traceback (most recent call last):");
  EXPECT_EQ(grep.frame("torch.distributed.DistBackendError: boom").body, "torch.distributed.DistBackendError: boom");

  Framer plain = learned({"step 1", "step 2", "saved to ckpt.log:done"});
  EXPECT_EQ(plain.frame("saved to ckpt.log:done").body, "saved to ckpt.log:done");
  EXPECT_EQ(plain.frame("run.log:x").body, "run.log:x");
}

TEST(Framer, DoesNotTakeAnExceptionNameForAPdshHost) {
  Framer none = learned({"Traceback (most recent call last):", "RuntimeError: boom",
                         "KeyError: 'x'", "ValueError: bad"});
  EXPECT_EQ(none.launcher(), LauncherFormat::kNone);

  Framer pdsh = learned({"node07: a", "node08: b", "node07: c"});
  Frame f = pdsh.frame("RuntimeError: CUDA error: out of memory");
  EXPECT_EQ(f.host, "");
  EXPECT_EQ(f.body, "RuntimeError: CUDA error: out of memory");

  // A qualified exception name is dotted like a host's: a paste of one
  // exception line is no pdsh output, nor is its module a host.
  for (std::string_view line : {"torch.distributed.DistNetworkError: The server socket has failed to listen",
                                "ray.exceptions.LocalRayletDiedError: The task's local raylet died.",
                                "torch.cuda.OutOfMemoryError: CUDA out of memory."}) {
    Framer one = learned({line});
    EXPECT_EQ(one.launcher(), LauncherFormat::kNone) << line;
    Frame g = pdsh.frame(line);
    EXPECT_EQ(g.host, "") << line;
    EXPECT_EQ(g.body, line);
  }
  Framer fqdn = learned({"node07.cluster.local: a", "gpu-q-13.Error-lab.org: b"});
  EXPECT_EQ(fqdn.launcher(), LauncherFormat::kPdsh) << "a host's last part is no exception class";
}

TEST(Framer, PeelsAtMostOnePdshHostPerLine) {
  Framer pdsh = learned({"worker-1: a", "worker-2: b", "worker-1: c"});
  Frame f = pdsh.frame(
      "worker-1: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
      "NCCLUtils.hpp:275, unhandled system error, NCCL version 2.14.3");
  EXPECT_EQ(f.host, "worker-1");
  EXPECT_TRUE(f.body.starts_with("torch.distributed.DistBackendError: NCCL error in:")) << f.body;
}

// Two layers that prefix the host the pdsh way say it twice; the second time
// is the same prefix, not text. Another name after it is the line's own.
TEST(Framer, PeelsAPdshHostSaidTwice) {
  Framer pdsh = learned({"10.0.87.143: 10.0.87.143: starting", "10.0.87.144: 10.0.87.144: starting"});
  Frame f = pdsh.frame("10.0.87.143: 10.0.87.143: ip-10-0-87-143:149:298 [5] register_mr_buffers:465 NCCL WARN "
                       "NET/OFI Unable to register memory");
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.host, "ip-10-0-87-143");
  EXPECT_EQ(f.pid, 149);
  EXPECT_EQ(f.body, "NET/OFI Unable to register memory");
  Frame g = pdsh.frame("10.0.87.143: 10.0.87.143: 10.0.87.143: thrice");
  EXPECT_EQ(g.body, "10.0.87.143: thrice");
  Frame h = pdsh.frame("10.0.87.143: worker-2: a message naming a host");
  EXPECT_EQ(h.host, "10.0.87.143");
  EXPECT_EQ(h.body, "worker-2: a message naming a host");
}

TEST(Framer, PeelsStackedPdshSlurmTorchrunAndC10Prefixes) {
  std::vector<std::string_view> sample = {
      "node07: 3: [default3]:[rank11]:[E709 17:05:38.162814866 ProcessGroupNCCL.cpp:632] [Rank 3] "
      "x",
      "node07: 2: [default2]:[rank10]:[I709 17:05:30.000000000 ProcessGroupNCCL.cpp:900] y",
      "node08: 4: [default0]:[rank12]:[I709 17:05:30.000000000 ProcessGroupNCCL.cpp:900] y",
      "node08: 5: plain output",
  };
  Framer framer = learned(sample);
  Frame f = framer.frame(
      "node07: 3: [default3]:[rank11]:[E709 17:05:38.162814866 ProcessGroupNCCL.cpp:632] [Rank 3] "
      "Watchdog "
      "caught collective operation timeout: WorkNCCL(SeqNum=241, OpType=_ALLGATHER_BASE, "
      "NumelIn=1052672, "
      "NumelOut=8421376, Timeout(ms)=600000) ran for 600005 milliseconds before timing out.");
  EXPECT_EQ(f.host, "node07");
  EXPECT_EQ(f.rank, 11);
  EXPECT_EQ(f.local_rank, 3);
  EXPECT_EQ(f.producer, Producer::kC10);
  EXPECT_EQ(f.severity, 'E');
  EXPECT_EQ(f.ts.month, 7);
  EXPECT_EQ(f.ts.day, 9);
  EXPECT_EQ(f.pg_rank, 3);
  EXPECT_TRUE(f.body.starts_with("Watchdog caught collective operation timeout"));

  // The Slurm task id right after the host is a label too.
  Frame g = framer.frame("node08: 5: plain output");
  EXPECT_EQ(g.host, "node08");
  EXPECT_EQ(g.rank, 5);
  EXPECT_EQ(g.body, "plain output");
}

TEST(Framer, PeelsTorchrunTeePrefixAsLocalRank) {
  Framer framer;
  Frame f = framer.frame("[default3]:[rank11]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 11] x");
  EXPECT_EQ(f.local_rank, 3);
  EXPECT_EQ(f.rank, 11);
  Frame t = framer.frame("[trainer0]:epoch 1");
  EXPECT_EQ(t.local_rank, 0);
  EXPECT_EQ(t.body, "epoch 1");
  // --role rank: the outer tag is torchrun's local rank, the inner one c10's global rank.
  Frame r = framer.frame("[rank3]:[rank11]:[E ProcessGroupNCCL.cpp:1537] x");
  EXPECT_EQ(r.local_rank, 3);
  EXPECT_EQ(r.rank, 11);
}

TEST(Framer, LeavesBracketTagsWithoutANumberAlone) {
  Framer framer;
  Frame f = framer.frame("[default]:epoch 1");
  EXPECT_EQ(f.local_rank, -1);
  EXPECT_EQ(f.body, "[default]:epoch 1");
  Frame g = framer.frame("[rank3] epoch 1");  // no colon
  EXPECT_EQ(g.rank, -1);
  EXPECT_EQ(g.body, "[rank3] epoch 1");
}

TEST(Framer, DoesNotTakeTheIndexOfATorchrunFailureEntryForALauncherTag) {
  Framer framer;
  Frame f = framer.frame("[0]:");
  EXPECT_EQ(f.rank, -1);
  EXPECT_EQ(f.body, "[0]:");
  Frame tagged = framer.frame("[0]:hello");
  EXPECT_EQ(tagged.rank, 0);
  EXPECT_EQ(tagged.body, "hello");
}

TEST(Framer, PeelsSlurmLabelTeeAndNcclPrefixTogether) {
  Framer framer =
      learned({"0: a", "1: b", "3: [default3]:node1:4242:4242 [3] NCCL INFO Using network IB"});
  Frame f = framer.frame("3: [default3]:node1:4242:4242 [3] NCCL INFO Using network IB");
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.local_rank, 3);
  EXPECT_EQ(f.host, "node1");
  EXPECT_EQ(f.device, 3);
  EXPECT_EQ(f.producer, Producer::kNccl);
  EXPECT_EQ(f.body, "Using network IB");
}

TEST(Framer, PeelsDuplicatedExcepthookPrefixOnce) {
  Framer framer;
  Frame f = framer.frame("[rank3]: [rank3]:     work = group.barrier(opts=opts)");
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.local_rank, -1);
  EXPECT_EQ(f.body, "    work = group.barrier(opts=opts)");
  EXPECT_TRUE(f.had_prefix);
}

TEST(Framer, PeelsRayPrefixWithColoursAndRepeatCount) {
  Framer framer;
  Frame f = framer.frame(
      "\x1b[36m(WorkerDict pid=1230, ip=10.0.0.2)\x1b[0m [rank1]:[E1003 18:37:01.832146912 "
      "ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation timeout "
      "[repeated 14x across cluster]");
  EXPECT_EQ(f.pid, 1230);
  EXPECT_EQ(f.host, "10.0.0.2");
  EXPECT_EQ(f.rank, 1);
  EXPECT_EQ(f.repeated, 14);
  EXPECT_EQ(f.producer, Producer::kC10);
  EXPECT_EQ(f.pg_rank, 1);
  EXPECT_EQ(f.body, "Watchdog caught collective operation timeout");

  Frame local = framer.frame(
      "(pid=77) hello (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to "
      "disable log deduplication, or see https://docs.ray.io/)");
  EXPECT_EQ(local.pid, 77);
  EXPECT_EQ(local.host, "");
  EXPECT_EQ(local.body, "hello");

  Frame raylet = framer.frame("(raylet, ip=10.0.0.3) [2024-05-01 10:00:00,123 E 1 1] worker died");
  EXPECT_EQ(raylet.host, "10.0.0.3");
  EXPECT_EQ(raylet.pid, -1);

  Frame paren = framer.frame("(see above) for details");
  EXPECT_EQ(paren.body, "(see above) for details");
  EXPECT_FALSE(paren.had_prefix);
}

TEST(Framer, PeelsOpenMpiTagAlsoWhenGluedToADate) {
  Framer framer;
  Frame f = framer.frame("[1,3]<stdout>:[rank3]:[E ProcessGroupNCCL.cpp:1537] [Rank 3] x");
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.producer, Producer::kC10);
  EXPECT_EQ(f.body, "x");

  Frame glued = framer.frame("Fri Aug 11 12:31:45 2023[1,0]<stdout>:NCCL version 2.18.3+cuda12.1");
  EXPECT_EQ(glued.rank, 0);
  EXPECT_EQ(glued.body, "NCCL version 2.18.3+cuda12.1");
  ASSERT_TRUE(glued.ts.valid());
  EXPECT_EQ(glued.ts.year, 2023);
  EXPECT_EQ(glued.ts.month, 8);
  EXPECT_EQ(glued.ts.day, 11);
  EXPECT_EQ(glued.ts.hour, 12);
  EXPECT_EQ(glued.ts.second, 45);

  Frame err = framer.frame("[1,12]<stderr>: RuntimeError: boom");
  EXPECT_EQ(err.rank, 12);
  EXPECT_EQ(err.body, "RuntimeError: boom");
}

TEST(Framer, PeelsLogCollectorTimestamps) {
  Framer framer;
  Frame f = framer.frame(
      "\xE3\x80\x90"
      "2025-09-25 14:27:49"
      "\xE3\x80\x91"
      "[rank2]: Traceback (most recent call last):");
  EXPECT_EQ(f.rank, 2);
  EXPECT_EQ(f.body, "Traceback (most recent call last):");
  ASSERT_TRUE(f.ts.valid());
  EXPECT_EQ(f.ts.year, 2025);
  EXPECT_EQ(f.ts.month, 9);
  EXPECT_EQ(f.ts.day, 25);
  EXPECT_EQ(f.ts.minute, 27);

  Frame clock = framer.frame("18:11:06.680 [rank4]:[E ProcessGroupNCCL.cpp:1537] [Rank 4] x");
  EXPECT_EQ(clock.rank, 4);
  EXPECT_EQ(clock.producer, Producer::kC10);
  EXPECT_EQ(clock.body, "x");
  EXPECT_FALSE(clock.progress_bar);
  EXPECT_EQ(clock.ts.hour, 18);
  EXPECT_EQ(clock.ts.minute, 11);
}

TEST(Framer, FindsALogLineGluedToAProgressBar) {
  Framer framer;
  Frame f = framer.frame(
      "Epoch 10/10: 241it [15:55, 181.19s/it, loss=5.09][rank0]:[E709 17:05:39.081662161 "
      "ProcessGroupNCCL.cpp:1537] [PG 0 Rank 0] Timeout at NCCL work: 2, last enqueued NCCL work: "
      "2, last "
      "completed NCCL work: 1.");
  EXPECT_TRUE(f.progress_bar);
  EXPECT_EQ(f.rank, 0);
  EXPECT_EQ(f.producer, Producer::kC10);
  EXPECT_EQ(f.src_line, 1537);
  EXPECT_EQ(f.body,
            "Timeout at NCCL work: 2, last enqueued NCCL work: 2, last completed NCCL work: 1.");

  Frame g = framer.frame(
      "train:  87%|########7 | 13/15 [34:14<05:16, 158.06s/it[rank0]:[E ProcessGroupNCCL.cpp:1] x");
  EXPECT_TRUE(g.progress_bar);
  EXPECT_EQ(g.rank, 0);
  EXPECT_EQ(g.body, "x");
}

TEST(Framer, FindsAGluedLogLineBehindATorchrunTeePrefix) {
  Framer framer;
  Frame f = framer.frame(
      "[default0]:train:  87%|########7 | 13/15 [34:14<05:16, 158.06s/it[rank0]:[E709 "
      "17:05:39.081662161 "
      "ProcessGroupNCCL.cpp:1537] [PG 0 Rank 0] x");
  EXPECT_EQ(f.local_rank, 0);
  EXPECT_EQ(f.rank, 0);
  EXPECT_TRUE(f.progress_bar);
  EXPECT_EQ(f.producer, Producer::kC10);
  EXPECT_EQ(f.body, "x");
}

TEST(Framer, SaysWhereAGluedLogLineBeginsSoTheBarIsKept) {
  Framer framer;
  std::string_view line =
      "[default0]:Map:   8%|8  | 72/967 [02:32<30:38, 4.01 examples/s][default2]:[E ProcessGroupNCCL.cpp:1] x";
  Frame f = framer.frame(line);
  EXPECT_EQ(f.local_rank, 2);
  EXPECT_EQ(f.body, "x");
  EXPECT_EQ(f.glued_at, line.find("[default2]"));
  Frame plain = framer.frame("[default0]:Map:   8%|8  | 72/967 [02:32<30:38, 4.01 examples/s]");
  EXPECT_EQ(plain.glued_at, 0u);
}

// A coloured bar (a logger's or a terminal's colours): where the glued line
// begins is said in the physical line, colour codes counted, so that the
// bar is split off and kept, not dropped with its colours.
TEST(Framer, SaysWhereALineGluedToAColouredBarBeginsInThePhysicalLine) {
  Framer framer;
  for (std::string_view line : {
           std::string_view("\x1b[36mTokenizing Prompts (num_proc=64):  92%|#########1| 328986/359152 [29:58<12:05, "
                            "41.59 examples/s][rank1]:[W516 14:34:56.853490829 socket.cpp:464] [c10d] x\x1b[0m"),
           std::string_view("\x1b[32mtrain: 97%|##9| 43830/45049 [01:07<00:18, 66.12it/s]\x1b[0m[E "
                            "ProcessGroupNCCL.cpp:567] [Rank 1] Watchdog caught collective operation timeout"),
           std::string_view("\x1b[1mPreparing:  46%|####6     | 31/67 [29:02<35:12, 58.67s/it]\x1b[0mslurmstepd: error: "
                            "*** STEP 6053.0 ON DEL2212S020 CANCELLED AT 2024-04-23T12:18:08 ***"),
       }) {
    Frame f = framer.frame(line);
    size_t expected = line.find("[rank1]") != std::string_view::npos ? line.find("[rank1]")
                      : line.find("[E ") != std::string_view::npos ? line.find("[E ")
                                                                     : line.find("slurmstepd");
    EXPECT_EQ(f.glued_at, expected) << line;
  }
}

TEST(Framer, ReadsTheLevelOfNcclBeforeItsSourcesWerePublished) {
  // NCCL 2.0-2.2 printed no "NCCL" before the level.
  Framer framer;
  Frame warn = framer.frame("seyun:17283:17549 [3] include/socket.h:371 WARN Connection closed by remote peer");
  EXPECT_EQ(warn.producer, Producer::kNccl);
  EXPECT_EQ(warn.nccl_level, "WARN");
  EXPECT_EQ(warn.host, "seyun");
  EXPECT_EQ(warn.device, 3);
  EXPECT_EQ(warn.src_file, "include/socket.h");
  EXPECT_EQ(warn.src_line, 371);
  EXPECT_EQ(warn.body, "Connection closed by remote peer");
  Frame info = framer.frame("seyun:17281:17552 [1] INFO bootstrap.cu:45 -> 2 [Net]");
  EXPECT_EQ(info.producer, Producer::kNccl);
  EXPECT_EQ(info.nccl_level, "INFO");
  EXPECT_EQ(info.body, "bootstrap.cu:45 -> 2 [Net]");
  // Without the whole host:pid:tid [dev] prefix, a bare INFO is not NCCL's.
  Frame plain = framer.frame("[1] INFO starting the data loader");
  EXPECT_NE(plain.producer, Producer::kNccl);
  Frame words = framer.frame("node1:12:13 [0] some words WARN nothing");
  EXPECT_NE(words.producer, Producer::kNccl);
}

TEST(Framer, FindsAC10LineGluedToAProgressBarWithoutATeePrefix) {
  Framer framer;
  std::string_view line =
      "train: Scanning 'labels'...43718 found:  97%|##9| 43830/45049 [01:07<00:18, 66.12it/s][E "
      "ProcessGroupNCCL.cpp:567] [Rank 1] Watchdog caught collective operation timeout";
  Frame f = framer.frame(line);
  EXPECT_EQ(f.producer, Producer::kC10);
  EXPECT_EQ(f.pg_rank, 1);
  EXPECT_EQ(f.body, "Watchdog caught collective operation timeout");
  EXPECT_EQ(f.glued_at, line.find("[E "));
  Frame words = framer.frame("Epoch 1:  50%|#####     | 5/10 [00:05<00:05, 1.00it/s][Ending soon]");
  EXPECT_EQ(words.glued_at, 0u) << "a bracket that is no c10 prefix stays part of the bar";
}

// tqdm writes nothing after its stats bracket but the next redraw ('\r'):
// text there is another writer's line that lost its newline.
TEST(Framer, FindsALineGluedAfterAProgressBarsStats) {
  Framer framer;
  std::string_view line =
      "Preparing test set...:  46%|####6     | 31/67 [29:02<35:12, 58.67s/it]slurmstepd: error: *** STEP 6053.0 ON "
      "DEL2212S020 CANCELLED AT 2024-04-23T12:18:08 ***";
  Frame f = framer.frame(line);
  EXPECT_EQ(f.glued_at, line.find("slurmstepd"));
  EXPECT_TRUE(std::string_view(f.body).starts_with("slurmstepd: error:")) << f.body;
  std::string_view logged =
      "  0%|          | 0/17165 [00:00<?, ?it/s][2024-01-03 14:05:36,090] [INFO] [launch.py:315:sigkill_handler] "
      "Killing subprocess 2726715";
  EXPECT_EQ(framer.frame(logged).glued_at, logged.find("[2024")) << "a logger's prefix opens the glued line";
  for (std::string_view whole : {
           std::string_view("Map: 100%|##########| 1000/1000 [00:01<00:00, 900.12 examples/s]"),
           std::string_view("Epoch 1:  50%|#####     | 5/10 [00:05<00:05, 1.00it/s, loss=0.52]  "),
           std::string_view("download:  50%|#####     | 5/10 [see the mirror] then retry"),
           std::string_view(" 69%|######8   | 1003/1464 [4:52:12<2:13:00, 17.31s/it] 69%|######8   | 1006/1464 "
                            "[4:53:05<2:12:08, 17.31s/it]"),
       })
    EXPECT_EQ(framer.frame(whole).glued_at, 0u) << whole;
}

TEST(Framer, KeepsTheLastSegmentOfCarriageReturnRedraws) {
  Framer framer;
  Frame f = framer.frame(
      "Epoch 1:  10%|#         | 1/10\rEpoch 1:  20%|##        | 2/10\rEpoch 1: 100%|##########| "
      "10/10\r");
  EXPECT_TRUE(f.progress_bar);
  EXPECT_EQ(f.body, "Epoch 1: 100%|##########| 10/10");

  Frame log =
      framer.frame("Epoch 1:  10%|#   | 1/10\r[rank0]:[E ProcessGroupNCCL.cpp:1537] [Rank 0] x");
  EXPECT_EQ(log.rank, 0);
  EXPECT_EQ(log.producer, Producer::kC10);
  EXPECT_EQ(log.body, "x");
}

TEST(Framer, KeepsTorchrunTeePrefixOfARedrawnProgressBar) {
  Framer framer;
  Frame f = framer.frame("[default2]:Epoch 1:  10%|#   | 1/10\rEpoch 1:  20%|##  | 2/10");
  EXPECT_EQ(f.local_rank, 2);
  EXPECT_TRUE(f.progress_bar);
  EXPECT_EQ(f.body, "Epoch 1:  20%|##  | 2/10");
}

TEST(Framer, LeavesRankMentionsInsidePlainTextAlone) {
  Framer framer;
  Frame f = framer.frame("[rank2]:     raise RuntimeError(\"[rank0]: bad\")");
  EXPECT_EQ(f.rank, 2);
  EXPECT_EQ(f.body, "    raise RuntimeError(\"[rank0]: bad\")");
  EXPECT_FALSE(f.progress_bar);
}

TEST(Framer, NamesEveryProducer) {
  EXPECT_STREQ(producer_name(Producer::kNccl), "nccl");
  EXPECT_STREQ(producer_name(Producer::kC10), "c10");
  EXPECT_STREQ(producer_name(Producer::kGlog), "glog");
  EXPECT_STREQ(producer_name(Producer::kPyLogging), "python_logging");
  EXPECT_STREQ(producer_name(Producer::kDeepSpeed), "deepspeed");
  EXPECT_STREQ(producer_name(Producer::kUnknown), "plain");
}

}  // namespace
}  // namespace ncclpm::frame

// tests/diagnose/findings_test.cc
//
// Findings on small logs ingested and diagnosed end to end: the lead (the
// earliest error line, when no signature explains a job), the start-up stage,
// catalogued NCCL warnings, mismatch reports, ordering by what came first,
// rules that give way to more direct ones, and stalls read from the lines
// before a timeout.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/ingest/ingest.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

using testing::diagnose_files;

diagnose::Diagnosis diagnose_log(const std::string& log) { return diagnose_files({{"job.log", log}}); }

const diagnose::Finding* find_rule(const diagnose::Diagnosis& d, const std::string& rule) {
  auto it = std::find_if(d.findings.begin(), d.findings.end(), [&](const auto& f) { return f.rule == rule; });
  return it == d.findings.end() ? nullptr : &*it;
}

TEST(Lead, AnErrorNoSignatureKnowsStillLeadsWithItsRankAndCascade) {
  auto d = diagnose_log(
      "[rank2]: step 10 loss 1.2\n"
      "[rank2]: FrobnicatorError: the flux capacitor overheated\n"
      "[rank0]: RuntimeError: rank 2 went away\n");
  ASSERT_TRUE(d.has_root_cause());
  const diagnose::Finding& top = d.findings.front();
  EXPECT_EQ(top.rule, "earliest-error-line");
  EXPECT_EQ(top.category, "rank_crash");
  EXPECT_EQ(top.culprit_ranks, std::vector<int>{2});
  EXPECT_LT(top.confidence, 0.5) << "a lead is honest about being a guess";
  ASSERT_EQ(top.evidence.size(), 2u);
  EXPECT_EQ(top.evidence[0].text, "FrobnicatorError: the flux capacitor overheated");
  EXPECT_EQ(top.evidence[1].rank, 0);
}

// A file's lines are in the order they were written: a launcher's error with
// no time of its own, above a worker's timed one, came first. Another file's
// untimed error does not.
TEST(Lead, AnUntimedErrorAboveTheLeadInItsOwnFileCameFirst) {
  const std::string worker =
      "[rank1]:[E1224 13:23:05.483840160 ProcessGroupNCCL.cpp:542] [Rank 1] FrobnicatorError: peer went away\n";
  auto d = diagnose_log("WidgetError: the launcher lost worker 3\n" + worker);
  ASSERT_TRUE(d.has_root_cause());
  ASSERT_EQ(d.findings.front().rule, "earliest-error-line");
  EXPECT_EQ(d.findings.front().evidence[0].text, "WidgetError: the launcher lost worker 3");

  auto apart = diagnose_files({{"a.log", "WidgetError: the launcher lost worker 3\n"}, {"b.log", worker}});
  ASSERT_TRUE(apart.has_root_cause());
  ASSERT_EQ(apart.findings.front().rule, "earliest-error-line");
  EXPECT_EQ(apart.findings.front().culprit_ranks, std::vector<int>{1}) << "across files, time orders";
}

// The level letter is the producer's own verdict: a c10d line cut short
// before any error word, or a Python ERROR record in plain words, still leads.
TEST(Lead, ALineLoggedAtErrorLevelLeadsWithoutErrorWords) {
  struct Case {
    const char* log;
    int rank;
  };
  for (const Case& c : {
           Case{"[rank2]:[E212 15:34:10.420036109 ProcessGroupNCCL.cpp:1484] [PG ID 0 PG GUID 0(default_pg) Rank 2] "
                "ProcessGroupNCCL's watc\n",
                2},
           Case{"[rank5]:E0709 17:05:38.162555 123 trainer.py:88] shard 3 of the batch is empty\n", 5},
       }) {
    auto d = diagnose_log(std::string("[rank0]: step 1 loss 2.0\n") + c.log);
    ASSERT_TRUE(d.has_root_cause()) << c.log;
    EXPECT_EQ(d.findings.front().rule, "earliest-error-line") << c.log;
    EXPECT_EQ(d.findings.front().culprit_ranks, std::vector<int>{c.rank}) << c.log;
  }
  auto info = diagnose_log("[rank2]:[I212 15:34:10.420036109 ProcessGroupNCCL.cpp:1484] [PG ID 0] all is well\n");
  EXPECT_FALSE(info.has_root_cause()) << "an INFO line of the same producer is not an error";
}

// A paste cut above its "Traceback" header still shows that an exception
// was raised, on the rank its prefix names; the exception line, when it is
// there below the frames, says more and leads instead.
TEST(Lead, FramesOfACutTracebackLeadOnlyWithoutABetterLine) {
  const std::string frames =
      "[rank3]:   File \"/opt/app/train.py\", line 126, in train\n"
      "[rank3]:     trainer.train()\n"
      "[rank3]:   File \"/opt/app/trainer.py\", line 2386, in _save_checkpoint\n";
  auto cut = diagnose_log("[rank0]: step 10 loss 1.2\n" + frames);
  ASSERT_TRUE(cut.has_root_cause());
  EXPECT_EQ(cut.findings.front().rule, "earliest-error-line");
  EXPECT_EQ(cut.findings.front().category, "rank_crash");
  EXPECT_EQ(cut.findings.front().culprit_ranks, std::vector<int>{3});

  auto whole = diagnose_log(frames + "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
  ASSERT_TRUE(whole.has_root_cause());
  EXPECT_EQ(whole.findings.front().category, "rank_crash_oom");

  auto dump = diagnose_log("Thread 0x00007f (most recent call first):\n  File \"/opt/app/loader.py\", line 88 in wait\n");
  EXPECT_FALSE(dump.has_root_cause()) << "faulthandler's dump of a live process is not an exception";
}

// A paste that begins below the traceback's header: the exception under its
// frames is the rank's crash, and the timeout printed after it its cascade.
TEST(Lead, AnExceptionPastedWithoutItsTracebackHeaderIsTheCrashBeforeTheTimeout) {
  auto d = diagnose_log(
      "  File \"/opt/accelerate/utils/operations.py\", line 557, in _pad_across_processes\n"
      "    new_tensor = tensor.new_zeros(tuple(new_size)) + pad_index\n"
      "RuntimeError: Storage size calculation overflowed with sizes=[128, 4647976594785319098]\n"
      "[E ProcessGroupNCCL.cpp:916] [Rank 3] NCCL watchdog thread terminated with exception: [Rank 3] Watchdog "
      "caught collective operation timeout: WorkNCCL(SeqNum=31, OpType=_ALLGATHER_BASE, NumelIn=2, NumelOut=8, "
      "Timeout(ms)=1800000) ran for 1800035 milliseconds before timing out.\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "python-exception");
  EXPECT_EQ(d.findings.front().category, "rank_crash");
  const diagnose::Finding* timeout = find_rule(d, "nccl-watchdog-timeout");
  ASSERT_NE(timeout, nullptr);
  EXPECT_FALSE(timeout->root_cause);
}

// Frames whose header a paste cut off, above PyTorch's report of an NCCL
// error: NCCL's own words under "Last error:" say what failed, though NCCL
// calls them a consequence; the frames say least and lead only alone.
TEST(Lead, NcclsWordsUnderAHeadlessTracebacksExceptionLeadOverItsFrames) {
  auto d = diagnose_log(
      "  File \"/opt/verl/workers/fsdp_workers.py\", line 148, in _build_model_optimizer\n"
      "    torch.distributed.barrier()\n"
      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2615, "
      "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.24.3\n"
      "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
      "Last error:\n"
      "[Service thread] Error encountered progressing operation=Connect, res=3, closing connection\n");
  ASSERT_TRUE(d.has_root_cause());
  const diagnose::Finding& top = d.findings.front();
  EXPECT_EQ(top.rule, "earliest-error-line");
  EXPECT_EQ(top.category, "network_socket");
  ASSERT_FALSE(top.evidence.empty());
  EXPECT_EQ(top.evidence[0].text.rfind("[Service thread] Error encountered", 0), 0u) << top.evidence[0].text;
}

// A paste cut inside a chained exception's frames: the exception above the
// cut says what went wrong, not the last frame, and the source line that
// raised it is no message of its own.
TEST(Lead, ATracebackCutInsideItsFramesIsNamedByItsLastExceptionLine) {
  auto d = diagnose_log(
      "Traceback (most recent call last):\n"
      "  File \"/opt/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py\", line 113, in _call_store\n"
      "    return getattr(self._store, store_op)(*args, **kwargs)\n"
      "RuntimeError: Broken pipe\n"
      "\n"
      "The above exception was the direct cause of the following exception:\n"
      "\n"
      "Traceback (most recent call last):\n"
      "  File \"/opt/bin/torchrun\", line 33, in <module>\n"
      "    raise RendezvousConnectionError(\n"
      "  File \"/opt/torch/\n");
  ASSERT_TRUE(d.has_root_cause());
  const diagnose::Finding& top = d.findings.front();
  EXPECT_EQ(top.rule, "earliest-error-line") << "a rendezvous backend's exception is no crash of the worker";
  EXPECT_EQ(top.category, "network_socket");
  EXPECT_NE(top.summary.find("RuntimeError: Broken pipe"), std::string::npos) << top.summary;

  // Cut above its header: the frame's source line that raises is code.
  auto cut = diagnose_log(
      "  File \"/opt/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py\", line 115, in _call_store\n"
      "    raise RendezvousConnectionError(\n"
      "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
      "failed. See inner exception for details.\n");
  ASSERT_TRUE(cut.has_root_cause());
  EXPECT_EQ(cut.findings.front().category, "network_socket");
  ASSERT_FALSE(cut.findings.front().evidence.empty());
  EXPECT_EQ(cut.findings.front().evidence[0].text.rfind("torch.distributed.elastic", 0), 0u)
      << cut.findings.front().evidence[0].text;
}

// A launcher kills the other workers once one failed: with no error and no
// signal of its own in the logs, the cause is a worker whose output is missing.
TEST(Lead, ALauncherKillWithNothingElseSaysAWorkerFailedUnseen) {
  auto d = diagnose_log(
      "10.0.0.7: [2023-10-13 11:31:28,593] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 249\n"
      "10.0.0.7: [2023-10-13 11:31:58,630] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 250\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "failure-behind-launcher-kill");
  EXPECT_EQ(d.findings.front().category, "rank_crash");
  EXPECT_LT(d.findings.front().confidence, 0.5);

  auto signalled = diagnose_log(
      "[2023-10-13 11:31:20,001] [INFO] [launch.py:320:sigkill_handler] Main process received SIGTERM, exiting\n"
      "[2023-10-13 11:31:28,593] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 249\n");
  EXPECT_EQ(find_rule(signalled, "failure-behind-launcher-kill"), nullptr) << "the launcher was stopped from outside";
}

// A survivor's report of a store peer that went away: the catalogue calls the
// line a consequence (network_socket), a rule reads it as a peer that died.
// With nothing else in the logs the rule's reading leads and the lead stays
// as its symptom; a launcher's line the catalogue calls a failure in itself
// keeps the lead.
TEST(Lead, ARulesReadingOfALeadTheCatalogueCallsAConsequenceLeads) {
  auto d = diagnose_log(
      "[rank101]:[W1012 08:01:02.123456789 TCPStore.cpp:125] [c10d] recvValueWithTimeout failed on "
      "SocketImpl(fd=53, addr=[node7]:40310, remote=[node1]:29500): Failed to recv, got 0 bytes. Connection was "
      "likely closed. Did the remote server shutdown or crash?\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "remote-peer-exited") << d.findings.front().summary;
  EXPECT_EQ(d.findings.front().category, "rank_crash");
  const diagnose::Finding* lead = find_rule(d, "earliest-error-line");
  ASSERT_NE(lead, nullptr);
  EXPECT_FALSE(lead->root_cause);
  EXPECT_EQ(lead->category, "network_socket");

  auto launcher = diagnose_log(
      "Primary job  terminated normally, but 1 process returned a non-zero exit code. Per user-direction, the job "
      "has been aborted.\n");
  ASSERT_TRUE(launcher.has_root_cause());
  EXPECT_EQ(launcher.findings.front().rule, "earliest-error-line") << launcher.findings.front().summary;
  EXPECT_NE(find_rule(launcher, "launcher-sigterm-cascade"), nullptr) << "a rule read the line, as a cascade";
}

TEST(Lead, AnNcclWarnTheCatalogueCallsACauseIsAFindingAndItsEchoesAreNot) {
  auto d = diagnose_log(
      "node1:100:100 [0] NCCL INFO misc/socket.cc:50 -> 6\n"
      "node2:200:200 [1] graph/search.cc:120 NCCL WARN Could not find NIC for rank 5 in NVLS graph\n");
  ASSERT_TRUE(d.has_root_cause());
  const diagnose::Finding& top = d.findings.front();
  EXPECT_EQ(top.rule, "nccl-warning-catalogued");
  EXPECT_EQ(top.category, "nccl_setup_error");
  EXPECT_EQ(top.culprit_hosts, std::vector<std::string>{"node2"}) << "the error trace on node1 is an echo";
  EXPECT_NE(top.summary.find("nccl catalogue (src/graph/search.cc)"), std::string::npos) << top.summary;
  EXPECT_EQ(find_rule(d, "earliest-error-line"), nullptr) << "a finding explains the job: no lead needed";
}

// A line cut before the catalogue can name it is still read by its words:
// a connection NCCL or anyone else could not make is a socket failure.
TEST(Lead, AConnectionThatCouldNotBeMadeIsASocketFailureByItsWords) {
  for (const char* line : {"worker:101542:101934 [0] include/socket.h:403 NCCL WARN Connect to f\n",
                           "[rank3]: ValueError: could not connect to 10.0.0.7:29500\n"}) {
    auto d = diagnose_log(line);
    ASSERT_TRUE(d.has_root_cause()) << line;
    EXPECT_EQ(d.findings.front().rule, "earliest-error-line") << line;
    EXPECT_EQ(d.findings.front().category, "network_socket") << line;
  }
}

// A message that begins with "Error" reports one at whatever level it was
// logged (a glog warning from a storage client here); the word inside a name
// or a sentence is not one.
TEST(Lead, AMessageThatBeginsWithErrorLeadsWhateverItsLevel) {
  for (const char* line : {"W0000 00:00:1715498963.019816  583764 curl_transport.cc:444] Error [28]=Timeout was "
                           "reached in curl operation\n",
                           "Error while saving shard 3 of 8\n"}) {
    auto d = diagnose_log(line);
    ASSERT_TRUE(d.has_root_cause()) << line;
    EXPECT_EQ(d.findings.front().rule, "earliest-error-line") << line;
  }
  for (const char* line : {"I0512 07:29:27.000000 41 metrics.cc:10] ErrorRate=0.00 over the last epoch\n",
                           "step 300: the training Error is 0.12\n"})
    EXPECT_FALSE(diagnose_log(line).has_root_cause()) << line;
}

// A failed work completion is an error line in any transport's words, even
// one no parser knows (a plugin's "NET/IBP:" spelling, no NCCL prefix).
TEST(Lead, AFailedWorkCompletionInAnUnknownSpellingStillLeads) {
  auto d = diagnose_log(
      "NET/IBP:Got completion from peer 10.0.0.7<36315> with status=12 opcode=32698 len=32696 vendor err 129 (Send)\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "earliest-error-line");
  EXPECT_EQ(d.findings.front().category, "network_ib");
}

// A launcher's record of the worker that failed prints its command line as a
// Python list: '--ddp_timeout' there is an option, not a timeout.
TEST(Lead, TheWordsOfAFailedWorkersCommandLineAreNotItsFailure) {
  auto d = diagnose_log(
      "[2024-01-03 14:05:36,716] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', "
      "'src/train_bash.py', '--local_rank=3', '--ddp_timeout', '30000', '--report_to', 'tensorboard']\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "earliest-error-line");
  EXPECT_EQ(d.findings.front().category, "rank_crash");
  auto words = diagnose_log("[2024-01-03 14:05:36,716] [ERROR] [trainer.py:10] barrier timed out after 30000 ms\n");
  ASSERT_TRUE(words.has_root_cause());
  EXPECT_EQ(words.findings.front().category, "collective_timeout") << "outside a command line the words still count";
}

// NCCL warns that it cannot load libibverbs and goes on over sockets: a
// notice (rules/catalog/nccl.tsv), no cause; it leads only when nothing else is there.
TEST(Lead, ANoticeNcclCarriedOnAfterIsNoCauseAndLeadsOnlyAlone) {
  const std::string notice =
      "GPU9:10330:10330 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
      "GPU9:10330:10330 [0] NCCL INFO Using network Socket\n";
  auto d = diagnose_log(notice + "[rank1]: FrobnicatorError: the flux capacitor overheated\n");
  EXPECT_EQ(find_rule(d, "nccl-warning-catalogued"), nullptr);
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "earliest-error-line");
  EXPECT_EQ(d.findings.front().evidence[0].text, "FrobnicatorError: the flux capacitor overheated");

  auto alone = diagnose_log(notice);
  ASSERT_TRUE(alone.has_root_cause()) << "an error line still leads somewhere";
  EXPECT_EQ(alone.findings.front().rule, "earliest-error-line");
  EXPECT_LT(alone.findings.front().confidence, 0.5);
}

TEST(Lead, LogsWithoutAnErrorLineHaveNoRootCause) {
  auto d = diagnose_log("[rank0]: step 1 loss 2.0\n[rank1]: step 1 loss 2.1\nall done\n");
  EXPECT_FALSE(d.has_root_cause());
}

TEST(StartupFailure, ErrorsBeforeInitCompleteSayTheCommunicatorNeverFormed) {
  auto d = diagnose_log(
      "hostA:11:11 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
      "hostA:11:11 [0] NCCL INFO ncclCommInitRank comm 0x5555 rank 0 nranks 2 cudaDev 0 busId 1000 - Init START\n"
      "hostB:22:22 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n"
      "hostB:22:30 [0] misc/socket.cc:480 NCCL WARN socketStartConnect: Connect to 10.0.0.1<43211> failed : Connection refused\n"
      "hostB:22:30 [0] NCCL INFO bootstrap.cc:90 -> 6\n");
  const diagnose::Finding* init = find_rule(d, "startup-failure");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->category, "init_failure");
  EXPECT_EQ(init->culprit_hosts, std::vector<std::string>{"hostB"});
  EXPECT_NE(init->summary.find("started communicator init"), std::string::npos) << init->summary;
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "network_socket") << "the specific cause leads, the stage follows";
}

// A client that cannot reach the c10d store is a socket failure, at start-up;
// a store port another job holds is a start-up failure with nothing wrong on
// the network.
TEST(StartupFailure, AStoreClientThatCannotConnectIsASocketFailureAtStartup) {
  auto refused = diagnose_log(
      "trainer-2: torch.distributed.DistNetworkError: The client socket has failed to connect to any network "
      "address of (192.168.121.122, 1040). The client socket has failed to connect to 192.168.121.122:1040 "
      "(errno: 113 - No route to host).\n");
  ASSERT_TRUE(refused.has_root_cause());
  EXPECT_EQ(refused.findings.front().category, "network_socket");
  const diagnose::Finding* init = find_rule(refused, "startup-failure");
  ASSERT_NE(init, nullptr) << "the job never got past initialisation";
  EXPECT_EQ(init->culprit_hosts, std::vector<std::string>{"trainer-2"});

  auto in_use = diagnose_log(
      "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
      "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n");
  ASSERT_TRUE(in_use.has_root_cause());
  EXPECT_EQ(in_use.findings.front().category, "init_failure");
  for (const diagnose::Finding& f : in_use.findings) EXPECT_NE(f.category, "network_socket") << f.rule;
}

// Steps NCCL takes only while connecting a communicator are the start-up
// path whichever file of whichever release prints them, even in a log with
// no INFO lines (NCCL_DEBUG=WARN) to show how far init got.
TEST(StartupFailure, SharedMemoryAndSocketSetupStepsAreStartupWhateverFilePrintsThem) {
  const char* kSetupFailures[] = {
      "h1:7:9 [3] include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-1-2 (size 9637888)\n",
      "h1:7:9 [0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE to 9637892 bytes\n",
      "h1:7:9 [0] os/linux.cc:300 NCCL WARN Error: failed to create shared memory file 0x1, error No space left on device (28)\n",
      "h1:7:9 [0] include/socket.h:344 NCCL WARN Net : Socket creation failed : Address family not supported by protocol\n",
      "h1:7:9 [0] bootstrap.cc:40 NCCL WARN Bootstrap : no socket interface found\n",
      "h1:7:9 [0] misc/socket.cc:450 NCCL WARN Call to bind failed: Address already in use\n",
      // Refused: nobody listened where the process connected, in either era's wording.
      "ip-172-31-34-232:63799:64163 [7] include/socket.h:387 NCCL WARN Connect to 172.31.34.232<52473> failed : "
      "Connection refused\n",
      "ncclInternalError: Internal check failed.\nLast error:\nNet : Call to recv from 10.58.226.18<38309> failed : "
      "Connection refused\n"};
  for (const char* line : kSetupFailures) {
    auto d = diagnose_log(line);
    const diagnose::Finding* init = find_rule(d, "startup-failure");
    ASSERT_NE(init, nullptr) << line;
    EXPECT_NE(init->summary.find("No NCCL init lines were logged"), std::string::npos) << init->summary;
  }
}

// NCCL prints the settings it reads while setting up its first communicator:
// a process that logged one was in start-up, and a message NCCL's catalogue
// names, printed as PyTorch passes it on (no WARN prefix), failed it there.
TEST(StartupFailure, AnNcclSettingReadAndNoInitCompleteMakeACataloguedNcclMessageAStartupFailure) {
  const std::string setting = "hostA:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth2\n";
  const std::string failure =
      "ncclInternalError: Internal check failed.\nLast error:\n"
      "ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)\n";
  const diagnose::Finding* init = nullptr;
  auto d = diagnose_log(setting + failure);
  init = find_rule(d, "startup-failure");
  ASSERT_NE(init, nullptr);
  EXPECT_NE(init->summary.find("hostA pid 1958 loaded NCCL"), std::string::npos) << init->summary;

  auto formed = diagnose_log(setting +
                             "hostA:1958:1958 [3] NCCL INFO ncclCommInitRank comm 0x5555 rank 3 nranks 4 cudaDev 3 "
                             "busId 1000 - Init COMPLETE\n" +
                             failure);
  EXPECT_EQ(find_rule(formed, "startup-failure"), nullptr) << "its communicator had formed";
}

// PyTorch names only NCCL's result code; the "Last error:" under it is what
// failed, in NCCL's words or its network plugin's (aws-ofi-nccl's NET/OFI).
TEST(NcclWords, TheLastErrorUnderPyTorchsResultCodeIsTheCause) {
  auto d = diagnose_log(
      "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
      "ProcessGroupNCCL.cpp:1970, internal error - please report this issue to the NCCL developers, NCCL version "
      "2.20.5\n"
      "[rank1]: ncclInternalError: Internal check failed.\n"
      "[rank1]: Last error:\n"
      "[rank1]: NET/OFI Unable to insert remote address into address vector for device 1. RC: 0\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "network_ib");
  EXPECT_NE(d.findings.front().advice.find("fi_info -p efa"), std::string::npos) << d.findings.front().advice;
  const diagnose::Finding* code = find_rule(d, "nccl-setup-error");
  ASSERT_NE(code, nullptr);
  EXPECT_FALSE(code->root_cause) << "the result code is the symptom";

  // With nothing catalogued under it, the result code stays the cause.
  auto bare = diagnose_log(
      "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
      "ProcessGroupNCCL.cpp:1970, internal error - please report this issue to the NCCL developers, NCCL version "
      "2.20.5\n");
  ASSERT_TRUE(bare.has_root_cause());
  EXPECT_EQ(bare.findings.front().rule, "nccl-setup-error");
}

// "unhandled cuda error" is NCCL's result code for any CUDA call of its that
// failed; NCCL's WARN saying which call and why is the cause, even when a paste
// wrapped it, and even in another file. A kernel's own CUDA error is no such
// explanation: the result code then stays a cause beside it.
TEST(NcclWords, TheFailedCudaCallNcclNamesExplainsUnhandledCudaError) {
  auto d = diagnose_files({
      {"console.log", "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"},
      {"nccl_debug.log",
       "transport/nvls.cc:287 NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory\n"
       "  of size 2097152 : CUDA error 401 'the operation cannot be performed in the present state'.\n"},
  });
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "nccl_setup_error");
  const diagnose::Finding* code = find_rule(d, "cuda-error");
  ASSERT_NE(code, nullptr);
  EXPECT_FALSE(code->root_cause) << "the result code reports the NVLS failure";
  const diagnose::Finding* startup = find_rule(d, "startup-failure");
  EXPECT_NE(startup, nullptr) << "NVLS buffers are built while a communicator is set up";

  auto kernel = diagnose_log(
      "[rank0]: RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"
      "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n");
  const diagnose::Finding* crash = find_rule(kernel, "cuda-error");
  ASSERT_NE(crash, nullptr);
  EXPECT_TRUE(crash->root_cause);
}

// CUDA's out-of-memory in every CUDA check that quotes it: NCCL 2.19+'s
// cudawrap.h form under PyTorch's "Last error:", nccl-tests' own check.
TEST(NcclWords, CudasOutOfMemoryInNcclsAndNcclTestsChecksIsOutOfMemory) {
  for (const std::string& log : {
           std::string("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                       "NCCLUtils.hpp:219, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL "
                       "version 2.19.3\nncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"
                       "Cuda failure 2 'out of memory'\n"),
           std::string("node1: Test CUDA failure common.cu:891 'out of memory'\n"),
       }) {
    auto d = diagnose_log(log);
    ASSERT_TRUE(d.has_root_cause()) << log;
    EXPECT_EQ(d.findings.front().category, "rank_crash_oom") << log;
  }
}

// torch.cuda.nccl's own report of an NCCL result ("NCCL Error 2: unhandled
// system error", the coalesced collectives') is no crash of the rank's own:
// NCCL's warning says what failed.
TEST(NcclWords, TorchCudaNcclsResultCodeGivesWayToNcclsWarning) {
  auto d = diagnose_log(
      "[rank10]:     work = group.reduce_scatter_tensor_coalesced(outputs, inputs, reduce_opts)\n"
      "[rank10]: RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)\n"
      "[2025-10-13 10:12:54] node-a:1458548:1480527 [0] misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 "
      "failed with error Invalid argument\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "network_ib");
  EXPECT_EQ(find_rule(d, "python-exception"), nullptr);
}

TEST(NcclWords, ThePluginsOwnWarningsAreReadAsItsNetwork) {
  auto d = diagnose_log(
      "[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI "
      "fi_getinfo() call failed: No data available\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "network_ib");
  EXPECT_EQ(d.findings.front().culprit_hosts, std::vector<std::string>{"ip-172-31-3-90"});
}

// A hung rank's stack (py-spy dump) that waits in a collective the save
// issued: a save stall though nothing timed out; a save that failed on its
// own (no collective in the stack) is not one.
TEST(StackWaitsInSave, AStackInACollectiveUnderTheSaveIsASaveStall) {
  auto d = diagnose_log(
      "Thread 2213 (idle): \"MainThread\"\n"
      "    barrier (torch/distributed/distributed_c10d.py:3696)\n"
      "    barrier (lightning/pytorch/strategies/ddp.py:290)\n"
      "    save_checkpoint (lightning/pytorch/trainer/trainer.py:1384)\n"
      "    _save_checkpoint (lightning/pytorch/callbacks/model_checkpoint.py:377)\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "stack-waits-in-save");
  EXPECT_EQ(d.findings.front().category, "save_phase_stall");

  auto failed = diagnose_log(
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3/dist-packages/transformers/trainer.py\", line 3001, in _save_checkpoint\n"
      "    self.save_model(output_dir)\n"
      "OSError: [Errno 28] No space left on device\n");
  EXPECT_EQ(find_rule(failed, "stack-waits-in-save"), nullptr);
}

// A frame of a module that only saves (DCP's saver, Megatron Core's async
// save strategies) under the collective that timed out is a save stall in
// every stack format; the loader's frames are not.
TEST(StackWaitsInSave, AFrameOfASaveOnlyModuleIsTheSave) {
  const std::string timeout =
      "[rank5]:[E627 12:26:40.073493187 ProcessGroupNCCL.cpp:629] [Rank 5] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=29, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600014 "
      "milliseconds before timing out.\n";
  const std::string megatron =
      "[rank5]:[E627 12:26:40.074084476 ProcessGroupNCCL.cpp:664] Stack trace of the failed collective: \n"
      "#0 all_reduce from /usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py:2806\n"
      "#1 wrapper from /usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py:81\n"
      "#2 sync_all_async_calls from /usr/lib/python3/dist-packages/megatron/core/dist_checkpointing/strategies/"
      "async_utils.py:149\n";
  auto d = diagnose_log(timeout + megatron);
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "stack-waits-in-save");
  EXPECT_EQ(d.findings.front().category, "save_phase_stall");

  auto dcp = diagnose_log(
      "Thread 88 (idle): \"MainThread\"\n"
      "    all_gather_object (torch/distributed/distributed_c10d.py:2450)\n"
      "    gather_object (torch/distributed/checkpoint/utils.py:114)\n"
      "    save (torch/distributed/checkpoint/state_dict_saver.py:154)\n");
  ASSERT_TRUE(dcp.has_root_cause());
  EXPECT_EQ(dcp.findings.front().rule, "stack-waits-in-save");

  auto loading = diagnose_log(
      timeout + "Traceback (most recent call last):\n"
      "  File \"/opt/torch/distributed/checkpoint/state_dict_loader.py\", line 220, in load\n"
      "  File \"/opt/torch/distributed/distributed_c10d.py\", line 2501, in all_gather_object\n");
  EXPECT_EQ(find_rule(loading, "stack-waits-in-save"), nullptr);
}

// The phase lines before a timeout count only since the last training step:
// an evaluation (or a save) that training went on from was over.
TEST(PhaseBeforeStop, AnEvaluationJustEndedIsTheStallUnlessTrainingWentOn) {
  const std::string timeout =
      "[rank0]:[E ProcessGroupNCCL.cpp:523] [Rank 0] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=9314, OpType=_REDUCE_SCATTER_BASE, NumelIn=131072000, NumelOut=32768000, "
      "Timeout(ms)=600000) ran for 600011 milliseconds before timing out.\n";
  const std::string step = "{'loss': 1.7157, 'grad_norm': 0.0, 'learning_rate': 0.0, 'epoch': 0.02}\n";
  const std::string eval =
      "{'eval_loss': 1.8737, 'eval_runtime': 14.4006, 'eval_samples_per_second': 3.194, 'epoch': 0.02}\n";
  auto hung = diagnose_log(step + eval + timeout);
  ASSERT_TRUE(hung.has_root_cause());
  EXPECT_EQ(hung.findings.front().rule, "hang-right-after-evaluation");
  EXPECT_EQ(hung.findings.front().category, "eval_generate_stall");

  auto went_on = diagnose_log(step + eval + step + timeout);
  EXPECT_EQ(find_rule(went_on, "hang-right-after-evaluation"), nullptr);
  auto saved_then_trained = diagnose_log("Saving model checkpoint to out/checkpoint-500\n" + step + timeout);
  EXPECT_EQ(find_rule(saved_then_trained, "checkpoint-save-stall"), nullptr);
  auto saving = diagnose_log(step + "Saving model checkpoint to out/checkpoint-500\n" + timeout);
  EXPECT_NE(find_rule(saving, "checkpoint-save-stall"), nullptr);
}

// Horovod's stall inspector, as its 2018-2019 releases print it: the ranks
// missing from each stalled tensor are the culprits.
TEST(HorovodStall, TheMissingRanksOfAStalledTensorAreTheCulprits) {
  auto d = diagnose_log(
      "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and "
      "are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are "
      "trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause "
      "deadlock. \n"
      "Stalled ops:\n"
      "DistributedAdamOptimizer_Allreduce/HorovodAllreduce_gradients_dense_MatMul_grad_MatMul_1_0 [missing ranks: 0, 2]\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "horovod-stall");
  EXPECT_EQ(d.findings.front().category, "desync");
  EXPECT_EQ(d.findings.front().culprit_ranks, (std::vector<int>{0, 2}));
}

// A connect NCCL retries is the word of a network that failed when nothing
// else says it, weaker than NCCL's warnings (it went on after it), and it is
// no match for a failure named outright.
TEST(NcclWords, ARetriedConnectIsTheSocketsWordButNoMatchForANamedFailure) {
  const std::string notice =
      "GPU9:10330:10330 [0] NCCL INFO Failed to open libibverbs.so[.1]\n"
      "GPU9:10330:10330 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.9<0>\n";
  const std::string retry = "GPU9:10330:10399 [0] NCCL INFO Call to connect returned Connection refused, retrying\n";
  auto d = diagnose_log(notice + retry);
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "network_socket");
  EXPECT_LT(d.findings.front().confidence, 0.6);

  auto oom = diagnose_log(retry + "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
  ASSERT_TRUE(oom.has_root_cause());
  EXPECT_EQ(oom.findings.front().category, "rank_crash_oom");
}

TEST(StartupFailure, APeerClosingAConnectionCanHappenAnyTimeAndSaysNothingOfStartup) {
  auto d = diagnose_log(
      "h1:7:9 [0] misc/socket.cc:47 NCCL WARN socketProgress: Connection closed by remote peer h2<52312>\n"
      "h1:7:9 [0] os/linux.cc:520 NCCL WARN unlink shared memory /dev/shm/nccl-x failed, error: No such file (2)\n");
  EXPECT_EQ(find_rule(d, "startup-failure"), nullptr);
  // The proxy's report of a peer that went away, from a file that also sets
  // connections up; a rendezvous frame of a cut traceback.
  auto proxy = diagnose_log("A100-50:91:95 [3] proxy.cc:1505 NCCL WARN [Service thread] Connection closed by localRank 7\n");
  EXPECT_EQ(find_rule(proxy, "startup-failure"), nullptr);
  auto frame = diagnose_log(
      "  File \"/venv/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py\", line 1079, in num_nodes_waiting\n");
  EXPECT_EQ(find_rule(frame, "startup-failure"), nullptr);
  // But the proxy failing to set a connection up is a start-up step.
  auto connect = diagnose_log(
      "t401:18:13 [0] proxy.cc:1519 NCCL WARN [Proxy Service 0] Failed to execute operation Connect from rank 0, retcode 3\n");
  EXPECT_NE(find_rule(connect, "startup-failure"), nullptr);
}

// A host that logged its NCCL start-up and then died in any way, before any
// process printed Init COMPLETE, in a job that never trained, died starting.
TEST(StartupFailure, ACrashOfAHostInTheMiddleOfNcclStartupIsAStartupFailure) {
  const std::string startup =
      "node1621:405884:407462 [0] NCCL INFO NCCL_IB_FIFO_TC set by environment to 224.\n"
      "node1625:1886888:1890510 [7] NCCL INFO NET/IB: IbDev 4 Port 1 qpn 103534 set_ece={supported=1}\n";
  auto d = diagnose_log(startup + "[node1621:405884] *** Process received signal ***\n");
  const diagnose::Finding* init = find_rule(d, "startup-failure");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->culprit_hosts, std::vector<std::string>{"node1621"});
  ASSERT_TRUE(d.has_root_cause()) << "Open MPI's crash banner is an error line";

  // A job that trained had formed its communicators: the same crash is not one.
  auto trained = diagnose_log(startup + "Epoch 1:  40%|####      | 40/100 [00:05<00:07,  7.80it/s]\n" +
                              "[node1621:405884] *** Process received signal ***\n");
  EXPECT_EQ(find_rule(trained, "startup-failure"), nullptr);
  // Nor is a crash on a host whose processes logged no start-up.
  auto elsewhere = diagnose_log(startup + "[node1630:77] *** Process received signal ***\n");
  EXPECT_EQ(find_rule(elsewhere, "startup-failure"), nullptr);
}

// NCCL's connect failing, whatever the reason and in every release's words,
// and PyTorch's communicator wrapper failing, are start-up steps; so is a
// start-up step named in the NCCL detail under PyTorch's result code.
TEST(StartupFailure, ConnectFailuresAndTheCommunicatorWrapperAreStartupSteps) {
  const char* kStartup[] = {
      "h1:7:9 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to fe80::20d:3aff:fef7:74b3%enP7906s1<51577> "
      "failed : Software caused connection abort\n",
      "h1:7:9 [3] misc/socket.cc:484 NCCL WARN socketPollConnect to 10.0.0.2<51577> failed with error No route to host\n",
      "h1:7:9 [3] include/socket.h:390 NCCL WARN Connect to 10.0.0.2<51577> failed : No route to host\n",
      // NCCL's retries of a connect, the last one before it gives up (2.24-2.26, 2.4-2.23)
      "zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (34/34) "
      "after sleep for 3400 msec\n",
      "h1:7:9 [3] NCCL INFO Call to connect returned Connection refused, retrying\n",
      // no NCCL to load at all (a Windows build of PyTorch)
      "RuntimeError: Distributed package doesn't have NCCL built in\n",
      "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
      "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n",
      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2615, "
      "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.24.3\n"
      "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
      "Last error:\n"
      "[Service thread] Error encountered progressing operation=Connect, res=3, closing connection\n"};
  for (const char* log : kStartup) {
    SCOPED_TRACE(log);
    auto d = diagnose_log(log);
    EXPECT_NE(find_rule(d, "startup-failure"), nullptr);
  }
  // The same result code with nothing of start-up under it says nothing of the stage.
  auto plain = diagnose_log(
      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2615, "
      "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.24.3\n"
      "Last error:\nsocketProgress: Connection closed by remote peer h2<52312>\n");
  EXPECT_EQ(find_rule(plain, "startup-failure"), nullptr);
}

// Logs that stop in the middle of NCCL's start-up without an error: the
// communicator never formed, said with low confidence (the paste may stop there).
TEST(StartupFailure, LogsThatEndInsideNcclStartupSayItNeverCompleted) {
  const std::string startup =
      "gh1:180172:180172 [0] NCCL INFO Bootstrap : Using ib0:fe80::a288:c203:d2:aaf2%ib0<0>\n"
      "gh2:9746:9746 [0] NCCL INFO cudaDriverVersion 12040\n"
      "gh2:9746:9746 [0] NCCL INFO Bootstrap : Using bond0:10.1.1.2<0>\n";
  auto d = diagnose_log(startup);
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "startup-never-completed");
  EXPECT_EQ(d.findings.front().category, "init_failure");
  EXPECT_LE(d.findings.front().confidence, 0.3);
  EXPECT_NE(d.findings.front().summary.find("loaded NCCL"), std::string::npos) << d.findings.front().summary;

  auto complete = diagnose_log(startup +
                               "gh1:180172:180172 [0] NCCL INFO ncclCommInitRank comm 0x5555 rank 0 nranks 2 cudaDev 0 "
                               "busId 1000 - Init COMPLETE\n");
  EXPECT_EQ(find_rule(complete, "startup-never-completed"), nullptr);
  auto trained = diagnose_log(startup + "{'loss': 1.7157, 'grad_norm': 0.5, 'learning_rate': 1e-05, 'epoch': 0.02}\n");
  EXPECT_EQ(find_rule(trained, "startup-never-completed"), nullptr);
}

// vLLM's own NCCL wrapper names the library it loaded right before it creates
// its communicator: a worker whose last line that is never formed one.
TEST(StartupFailure, AServingWorkerWhoseLastLineIsItsNcclVersionNeverFormedItsCommunicator) {
  auto d = diagnose_log("(Worker pid=960) INFO 08-12 20:26:09 [pynccl.py:113] vLLM is using nccl==2.28.9\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "startup-never-completed");
  EXPECT_NE(d.findings.front().summary.find("pid 960 loaded NCCL"), std::string::npos) << d.findings.front().summary;
}

// Without a timeout or a traceback, a C++ exception's trace is where the
// process stopped: the lines before it tell what the job was doing (here an
// evaluation while another rank gave up waiting on the store).
TEST(Phases, AStoreWaitThatTimedOutWithoutATracebackIsReadFromTheLinesBeforeIt) {
  auto d = diagnose_log(
      "***** Running Evaluation *****\n"
      "  Num examples = 500\n"
      "Evaluating:  12%|#2        | 30/250 [01:02<07:40,  2.09s/it]\n"
      "RuntimeError: Socket Timeout\n"
      "Exception raised from doWait at ../torch/csrc/distributed/c10d/TCPStore.cpp:445 (most recent call first):\n"
      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x757e97d92617 in libc10.so)\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "eval_generate_stall") << d.findings.front().rule;
}

// A native backtrace through abort() is a process that was aborting.
TEST(Lead, ANativeBacktraceThroughAbortIsAnErrorLine) {
  auto d = diagnose_log(
      "/lib/libc.so.6(raise+0x12)[0x7fda61527ea2]\n"
      "/lib/libc.so.6(abort+0xc2)[0x7fda6151345c]\n"
      "/venv/torch/lib/libc10.so(_ZN3c106detail14torchCheckFailEPKcS2_jRKSs+0x94)[0x7fda364f09bd]\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "rank_crash");
  EXPECT_FALSE(diagnose_log("/lib/libc.so.6(__libc_start_main+0xf3)[0x7fda6151345c]\n").has_root_cause());
}

TEST(StartupFailure, AFormedCommunicatorThatFailsLaterIsNotAStartupFailure) {
  auto d = diagnose_log(
      "hostA:11:11 [0] NCCL INFO ncclCommInitRank comm 0x5555 rank 0 nranks 2 cudaDev 0 busId 1000 - Init START\n"
      "hostA:11:11 [0] NCCL INFO ncclCommInitRank comm 0x5555 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
      "hostA:11:40 [0] transport/net_ib.cc:1200 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4321> with error 12, opcode 0, len 0, vendor err 129\n"
      "hostA:11:40 [0] NCCL INFO transport/net_ib.cc:1300 -> 6\n");
  EXPECT_EQ(find_rule(d, "startup-failure"), nullptr);
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "network_ib");

  auto refused_later = diagnose_log(
      "hostA:11:11 [0] NCCL INFO ncclCommInitRank comm 0x5555 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
      "hostA:11:40 [0] misc/socket.cc:480 NCCL WARN socketStartConnect: Connect to 10.0.0.2<4321> failed : "
      "Connection refused\n");
  EXPECT_EQ(find_rule(refused_later, "startup-failure"), nullptr) << "its communicator had formed";
}

// A rank that never reported the timeout the others hit was elsewhere; a
// rank whose own report was cut short (a paste clipped at the terminal's
// width) did report one, and is no suspect.
TEST(Silence, ARankWhoseTimeoutReportWasCutIsNotTheOneThatNeverIssuedIt) {
  const std::string timeout3 =
      "[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=77, OpType=_ALLGATHER_BASE, NumelIn=1024, NumelOut=4096, Timeout(ms)=1800000) ran for "
      "1800042 milliseconds before timing out.\n";
  auto cut = diagnose_log("[rank1]: step 9 loss 1.0\n" + timeout3 +
                          "[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught colle\n");
  EXPECT_EQ(find_rule(cut, "rank-never-issued-collective"), nullptr);
  ASSERT_TRUE(cut.has_root_cause());
  EXPECT_EQ(cut.findings.front().category, "collective_timeout");

  auto silent = diagnose_log("[rank1]: step 9 loss 1.0\n" + timeout3);
  const diagnose::Finding* never = find_rule(silent, "rank-never-issued-collective");
  ASSERT_NE(never, nullptr) << "without the cut report rank 1 is the one that was elsewhere";
  EXPECT_EQ(never->culprit_ranks, std::vector<int>{1});
}

// PyTorch's mismatch report and the never-issued analysis blame the same
// rank for the same collective: one root cause, the other corroborates it.
TEST(Mismatch, TwoFindingsOfOneCategoryBlamingOneRankTellOneStory) {
  auto d = diagnose_files({{"console.log", testing::read_file(testing::source_path(
                                               "fixtures/incidents/collective-mismatch-desync/logs/console.log"))}});
  ASSERT_TRUE(d.has_root_cause());
  size_t roots = std::count_if(d.findings.begin(), d.findings.end(), [](const diagnose::Finding& f) {
    return f.root_cause && f.category == "desync";
  });
  EXPECT_EQ(roots, 1u);
  EXPECT_EQ(d.findings.front().culprit_ranks, std::vector<int>{2});
  const diagnose::Finding* never = find_rule(d, "rank-never-issued-collective");
  ASSERT_NE(never, nullptr);
  EXPECT_FALSE(never->root_cause);
  EXPECT_NE(never->summary.find("corroborates"), std::string::npos) << never->summary;
}

TEST(Mismatch, TheSameOpOnDifferentShapesIsUnevenDataNotADesync) {
  auto d = diagnose_log(
      "[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
      "CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], TensorDtypes=BFloat16), "
      "but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, "
      "TensorShape=[51123456], TensorDtypes=BFloat16).\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "data_imbalance");
  EXPECT_NE(find_rule(d, "collective-mismatch"), nullptr) << "the mismatch itself is still reported";
}

TEST(Mismatch, DifferentOpsAreADesync) {
  auto d = diagnose_log(
      "[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
      "CollectiveFingerPrint(SequenceNumber=485, OpType=ALLREDUCE, TensorShape=[10]), but Rank 0 is running "
      "collective: CollectiveFingerPrint(SequenceNumber=485, OpType=BROADCAST, TensorShape=[10]).\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "desync");
  EXPECT_EQ(find_rule(d, "uneven-inputs"), nullptr);
}

// Without times, a file orders one process's lines: an IB error its proxy
// thread logged above its own CUDA failure came first. Another process's
// lines above a crash say nothing of what came first.
TEST(Ordering, AnUntimedNetworkErrorAProcessLoggedBeforeItsOwnCrashLeads) {
  const std::string ib = "gpu5:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, "
                         "opcode 1, len 0, vendor err 129\n";
  const std::string cuda = "gpu5:35917:35917 [1] init.cu:194 NCCL WARN Cuda failure 'an illegal memory access was "
                           "encountered'\n";
  auto same = diagnose_log(ib + cuda);
  ASSERT_TRUE(same.has_root_cause());
  EXPECT_EQ(same.findings.front().category, "network_ib");
  std::string other_process = cuda;
  other_process.replace(other_process.find("35917:35917"), 11, "35920:35920");
  auto other = diagnose_log(ib + other_process);
  ASSERT_TRUE(other.has_root_cause());
  EXPECT_EQ(other.findings.front().category, "cuda_error") << "another process's crash: the IB error is its cascade";
}

// An HCA's own event names the host whose device failed; the completions
// its peers saw fail are how the others met it. A device event logged after
// the completions failed, or hours before them (both timed), explains
// nothing of them.
TEST(Ordering, AnIbDeviceEventLeadsThePeersFailedCompletions) {
  const std::string event = "[2025-05-16 10:00:01] node201:127799:127863 [0] transport/net_ib.cc:101 NCCL WARN NET/IB : "
                            "mlx5_0:1 Got async event : local access violation work queue error\n";
  const std::string completion = "[2025-05-16 10:00:02] node023:10214:10303 [0] transport/net_ib.cc:1909 NCCL WARN NET/IB "
                                 ": Got completion from peer 10.1.3.201<33057> with status=9 opcode=0 len=0 vendor err "
                                 "138 (Send)\n";
  auto d = diagnose_files({{"node201.log", event}, {"node023.log", completion}});
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "ib-async-event");
  EXPECT_EQ(d.findings.front().culprit_hosts, std::vector<std::string>{"node201"});
  const diagnose::Finding* peer = find_rule(d, "ib-completion-error");
  ASSERT_NE(peer, nullptr);
  EXPECT_FALSE(peer->root_cause);

  std::string late = event;
  late.replace(late.find("10:00:01"), 8, "10:09:00");
  auto after = diagnose_files({{"node201.log", late}, {"node023.log", completion}});
  ASSERT_TRUE(after.has_root_cause());
  EXPECT_EQ(after.findings.front().rule, "ib-completion-error") << "a device event after the completions failed";

  std::string long_before = event;
  long_before.replace(long_before.find("10:00:01"), 8, "08:00:00");
  auto hours = diagnose_files({{"node201.log", long_before}, {"node023.log", completion}});
  ASSERT_TRUE(hours.has_root_cause());
  EXPECT_EQ(hours.findings.front().rule, "ib-completion-error") << "a device event two hours before";
}

// A rank that gave up waiting for rank 0's ncclUniqueId only waited: rank 0,
// which never published it, is the culprit, and the summary says who waited.
TEST(Culprits, TheRankAWaitingMessageNamesIsTheCulprit) {
  auto d = diagnose_log(
      "[rank1]:[E1113 10:00:00.000000000 ProcessGroupNCCL.cpp:1900] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
      "[1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key "
      "'0', but store->get('0') got error: Socket Timeout\n");
  const diagnose::Finding* f = find_rule(d, "nccl-init-failure");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->culprit_ranks, std::vector<int>{0});
  EXPECT_NE(f->summary.find("on rank 1, which waited for rank 0"), std::string::npos) << f->summary;

  auto own = diagnose_log("[rank1]: RuntimeError: Failed to initialize NCCL communicator\n");
  const diagnose::Finding* g = find_rule(own, "nccl-init-failure");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->culprit_ranks, std::vector<int>{1}) << "a failure of its own names the printer";
}

// "All ranks arrived" is said only when every rank of the job said it had
// enqueued the collective: ranks 0 and 1 of four never showing up may be the
// ones that were missing.
TEST(Alignment, AllRanksStuckNeedsEveryRankOfTheJobToReport) {
  auto stuck = [](int rank) {
    std::string r = std::to_string(rank);
    return "[rank" + r + "]:[E821 16:40:45.240894715 ProcessGroupNCCL.cpp:632] [Rank " + r +
           "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=19, OpType=ALLREDUCE, NumelIn=1, "
           "NumelOut=1, Timeout(ms)=1800000) ran for 1800093 milliseconds before timing out.\n"
           "[rank" + r + "]:[E821 16:40:45.241026910 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank " +
           r + "]  failure detected by watchdog at work sequence id: 19 PG status: last enqueued work: 19, last "
           "completed work: 18\n";
  };
  auto both = diagnose_log(stuck(0) + stuck(1));
  ASSERT_TRUE(both.has_root_cause());
  EXPECT_EQ(both.findings.front().rule, "all-ranks-stuck-in-collective");
  auto half = diagnose_log(stuck(2) + stuck(3));
  EXPECT_EQ(find_rule(half, "all-ranks-stuck-in-collective"), nullptr) << "ranks 0 and 1 never reported";
}

// A rank's watchdog line cut after its seq names no op: it waited in the
// same collective as far as anyone can tell, not in another one.
TEST(Alignment, ATimeoutCutBeforeItsOpIsNoOtherCollective) {
  auto d = diagnose_log(testing::watchdog_line(1, 1) + testing::watchdog_line(4, 1) +
                        "[rank2]:[E709 17:05:38.162814866 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught "
                        "collective operation timeout: WorkNCCL(SeqNum=1,\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "collective_timeout");
  EXPECT_EQ(find_rule(d, "rank-never-issued-collective"), nullptr) << d.findings.front().summary;
}

// A watchdog line a paste cut before its record still says the rank timed
// out; what it waited in is not said, so no collective is shown or replayed.
TEST(Alignment, AWatchdogLineCutBeforeItsRecordIsATimeoutOfNoNamedCollective) {
  auto d = diagnose_log(
      "[rank62]:[E809 14:59:33.656957424 ProcessGroupNCCL.cpp:629] [Rank 62] Watchdog caught collective oper\n");
  ASSERT_TRUE(d.has_root_cause());
  const diagnose::Finding& top = d.findings.front();
  EXPECT_EQ(top.rule, "nccl-watchdog-timeout");
  EXPECT_FALSE(top.collective.has_value());
  EXPECT_FALSE(top.replay.has_value());
  EXPECT_NE(top.summary.find("Rank 62 timed out in a collective."), std::string::npos) << top.summary;
}

// A rank whose own watchdog line is not in the logs but whose termination
// restates the timeout ("NCCL watchdog thread terminated with exception:
// [Rank 0] Watchdog caught ...") waited in that collective too: it is no
// rank that never issued it, and a rank that printed both counts once.
TEST(Alignment, ATimeoutRestatedByTheWatchdogsTerminationIsThatRanksTimeout) {
  const std::string work =
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
      "Timeout(ms)=1800000) ran for 1800790 milliseconds before timing out.\n";
  const std::string rank1 = "(RayWorkerVllm pid=409241) [E ProcessGroupNCCL.cpp:474] [Rank 1] " + work;
  const std::string rank0_terminated =
      "(RayWorkerVllm pid=409240) [E ProcessGroupNCCL.cpp:915] [Rank 0] NCCL watchdog thread terminated with "
      "exception: [Rank 0] " + work;
  auto d = diagnose_log(rank1 + rank0_terminated);
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "collective_timeout");
  EXPECT_EQ(find_rule(d, "rank-never-issued-collective"), nullptr) << "rank 0 reported the same timeout";
  EXPECT_NE(d.findings.front().summary.find("Rank 0-1 timed out"), std::string::npos) << d.findings.front().summary;

  // Without rank 0's termination, rank 0 is the one missing (from the
  // group's first collective: it never got as far).
  auto missing = diagnose_log(rank1 + "[rank0]: step 7\n");
  EXPECT_NE(find_rule(missing, "rank-never-reached-first-collective"), nullptr);

  // Both of rank 0's lines: one timeout of rank 0.
  auto both = diagnose_log(rank1 + "(RayWorkerVllm pid=409240) [E ProcessGroupNCCL.cpp:474] [Rank 0] " + work +
                           rank0_terminated);
  ASSERT_TRUE(both.has_root_cause());
  EXPECT_NE(both.findings.front().summary.find("Rank 0-1 timed out"), std::string::npos)
      << both.findings.front().summary;
}

// Ranks that timed out in another collective of the group than the others:
// fewer of them than the others, they are the odd ones out, behind or ahead.
TEST(Alignment, RanksFewerThanTheOthersInAnotherCollectiveAreOutOfStep) {
  using testing::watchdog_line;
  auto ahead = diagnose_log(watchdog_line(1, 40) + watchdog_line(2, 40) + watchdog_line(0, 42));
  const diagnose::Finding* never = find_rule(ahead, "rank-never-issued-collective");
  ASSERT_NE(never, nullptr);
  EXPECT_TRUE(never->root_cause);
  EXPECT_EQ(never->culprit_ranks, (std::vector<int>{0}));
  EXPECT_NE(never->summary.find("rank 0 at seq 42 (ahead)"), std::string::npos) << never->summary;

  auto behind = diagnose_log(watchdog_line(0, 40) + watchdog_line(1, 40) + watchdog_line(2, 40) + watchdog_line(3, 39));
  never = find_rule(behind, "rank-never-issued-collective");
  ASSERT_NE(never, nullptr);
  EXPECT_EQ(never->culprit_ranks, (std::vector<int>{3}));
  EXPECT_NE(never->summary.find("rank 3 at seq 39 (behind)"), std::string::npos) << never->summary;
}

// One rank against one in different collectives: out of step, and nothing
// says which of the two strayed, so no culprit is named.
TEST(Alignment, AsManyRanksOnEachSideAreOutOfStepWithNoCulprit) {
  auto d = diagnose_log(testing::watchdog_line(0, 1516) + testing::watchdog_line(1, 1517));
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "ranks-out-of-step") << d.findings.front().summary;
  EXPECT_EQ(d.findings.front().category, "desync");
  EXPECT_TRUE(d.findings.front().culprit_ranks.empty());
  EXPECT_EQ(d.findings.front().evidence.size(), 2u) << "both sides' records";
  EXPECT_EQ(find_rule(d, "rank-never-issued-collective"), nullptr);
}

// Records hundreds of collectives apart are not of one sequence (another
// run's log beside this one, another communicator): no rank is out of step
// with the others, nor silent, since it reported a timeout of its own.
TEST(Alignment, TimeoutsFarApartAreNotOneSequence) {
  auto d = diagnose_log(testing::watchdog_line(1, 369526) + testing::watchdog_line(4, 20518));
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "collective_timeout") << d.findings.front().summary;
  EXPECT_EQ(find_rule(d, "rank-never-issued-collective"), nullptr);
  EXPECT_EQ(find_rule(d, "ranks-out-of-step"), nullptr);
}

// A rank absent from the group's first collective was late to start, not out
// of step with a sequence it never began: a straggler, named; later in the
// job the same absence is a rank that never issued the collective.
TEST(Alignment, ARankAbsentFromTheFirstCollectiveIsLate) {
  auto first = diagnose_log(testing::watchdog_line(1, 1) + testing::watchdog_line(2, 1) +
                            "[rank3]:NCCL INFO Using network Socket\n");
  ASSERT_TRUE(first.has_root_cause());
  EXPECT_EQ(first.findings.front().rule, "rank-never-reached-first-collective") << first.findings.front().summary;
  EXPECT_EQ(first.findings.front().category, "straggler");
  EXPECT_EQ(first.findings.front().culprit_ranks, (std::vector<int>{3}));
  EXPECT_EQ(find_rule(first, "rank-never-issued-collective"), nullptr);

  auto later = diagnose_log(testing::watchdog_line(1, 9) + testing::watchdog_line(2, 9) +
                            "[rank3]:NCCL INFO Using network Socket\n");
  EXPECT_NE(find_rule(later, "rank-never-issued-collective"), nullptr);
  EXPECT_EQ(find_rule(later, "rank-never-reached-first-collective"), nullptr);
}

TEST(Ordering, AJobStoppedFromOutsideBeforeAnyFailureLeads) {
  auto d = diagnose_log(
      "slurmstepd: error: *** JOB 608 ON node7 CANCELLED AT 2022-08-12T02:06:12 DUE TO PREEMPTION ***\n"
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 3, in <module>\n"
      "RuntimeError: Failed to create placement group in 180 seconds.\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "job-stopped-from-outside");
}

TEST(Ordering, AnExceptionBeforeTheStopStaysTheCause) {
  auto d = diagnose_log(
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 3, in <module>\n"
      "KeyError: 'labels'\n"
      "slurmstepd: error: *** JOB 608 ON node7 CANCELLED AT 2022-08-12T02:06:12 ***\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "python-exception");
  // The stop after it ended the failed job: shown, but not a second cause.
  const diagnose::Finding* stop = find_rule(d, "job-stopped-from-outside");
  ASSERT_NE(stop, nullptr);
  EXPECT_FALSE(stop->root_cause) << stop->summary;
  EXPECT_NE(stop->summary.find("came after the job had failed"), std::string::npos) << stop->summary;
}

// Slurm's stop line carries no time of its own but names one ("CANCELLED AT
// ..."): the stop is placed there, so that it orders against the failures in
// other files (coll-512's save stall, 30 minutes before its cancel).
TEST(Ordering, SlurmsStopIsTimedByTheTimeItNames) {
  auto d = diagnose_files(
      {{"slurm-48213.out", "slurmstepd: error: *** STEP 48213.0 ON node7 CANCELLED AT 2030-12-31T23:00:00 ***\n"}});
  const diagnose::Finding* stop = find_rule(d, "job-stopped-from-outside");
  ASSERT_NE(stop, nullptr);
  ASSERT_FALSE(stop->evidence.empty());
  EXPECT_EQ(stop->evidence.front().ts_us, int64_t{1924988400000000}) << "2030-12-31 23:00:00 UTC";
}

TEST(Lead, WithNoCauseAHangPyTorchReportedLeadsOverAGuessByWords) {
  auto d = diagnose_log(
      "[rank0]:[E321 02:07:20.1 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=600000) ran for 600010 milliseconds "
      "before timing out.\n"
      "[rank0]: something failed somewhere\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "collective_timeout");
  EXPECT_EQ(find_rule(d, "earliest-error-line"), nullptr);
}

TEST(RuleAbsent, TheWatchdogBacktraceSpeaksOnlyWhenTheTimeoutLineIsMissing) {
  const std::string frame =
      "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
      "std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f790a75f8d2 in libtorch_cuda.so)\n";
  auto cut = diagnose_log("terminate called after throwing an instance of 'c10::DistBackendError'\n" + frame);
  EXPECT_NE(find_rule(cut, "watchdog-abort-backtrace"), nullptr);
  auto whole = diagnose_log(
      "[rank0]:[E321 02:07:20.1 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=600000) ran for 600010 milliseconds "
      "before timing out.\n" + frame);
  EXPECT_NE(find_rule(whole, "nccl-watchdog-timeout"), nullptr);
  EXPECT_EQ(find_rule(whole, "watchdog-abort-backtrace"), nullptr) << "absent = [\"nccl-watchdog-timeout\"]";
}

TEST(Stall, DataStillBeingPreparedWhenTheOthersTimedOutIsAStraggler) {
  auto d = diagnose_log(
      "Running tokenizer on dataset:   9%|###       | 280000/2969526 [29:55<4:48:08, 155.57 examples/s]"
      "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
      "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800520 milliseconds before timing out.\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "straggler");
}

// An old (PyTorch 1.x) watchdog line of one rank, without a sequence number.
std::string old_watchdog(int rank) {
  return "[E ProcessGroupNCCL.cpp:567] [Rank " + std::to_string(rank) +
         "] Watchdog caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=60000) ran for "
         "67434 milliseconds before timing out.\n";
}

TEST(Stall, DataPreparedByAnUnnamedRankIsTheOneRankThatDidNotTimeOut) {
  const std::string bar = "train: Scanning 'labels'...:  97%|##9| 43830/45049 [01:07<00:18, 66.12it/s]";
  auto one = diagnose_log(bar + old_watchdog(1) + old_watchdog(2) + old_watchdog(3));
  ASSERT_TRUE(one.has_root_cause());
  EXPECT_EQ(one.findings.front().rule, "data-preparation-outlasted-timeout");
  EXPECT_EQ(one.findings.front().culprit_ranks, std::vector<int>{0}) << "ranks 1-3 timed out: rank 0 was preparing";

  auto two = diagnose_log(bar + "\n" + old_watchdog(1) + old_watchdog(3));
  ASSERT_TRUE(two.has_root_cause());
  EXPECT_EQ(two.findings.front().rule, "data-preparation-outlasted-timeout");
  EXPECT_TRUE(two.findings.front().culprit_ranks.empty()) << "ranks 1 and 3 timed out: 0 or 2 may be preparing";
}

// YOLO's image cache filling on the main process while rank 1's watchdog
// fires, its line cut a few letters into the sentence (a paste, a terminal):
// the cut is still a timeout, and the cache is the data preparation it waited
// for; a cache that had filled is no stall.
TEST(Stall, AnImageCacheStillFillingWhenACutWatchdogLineFiredIsDataPreparation) {
  const std::string cut = "[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog c\n";
  auto d = diagnose_log(
      "train: Caching images (31.3GB ram):  85%|########4 | 35595/41999 [29:57<08:39, 12.34it/s]\n" + cut);
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "data-preparation-outlasted-timeout");
  EXPECT_EQ(d.findings.front().category, "straggler");
  EXPECT_NE(find_rule(d, "nccl-watchdog-timeout"), nullptr) << "the cut line is rank 1's timeout";

  auto cached = diagnose_log(
      "train: Caching images (31.3GB ram): 100%|##########| 41999/41999 [38:01<00:00, 18.40it/s]\n" + cut);
  EXPECT_EQ(find_rule(cached, "data-preparation-outlasted-timeout"), nullptr);
}

// Ranks 1-3 gave up fetching rank 0's ncclUniqueId (the store's 30-minute
// timeout) while an unranked bar shows the data still being tokenized: rank 0
// was preparing it, under main_process_first(). Each era's wording.
TEST(Stall, RanksThatGaveUpOnRankZerosUniqueIdWaitedForItsDataPreparation) {
  const std::string bar =
      "Running tokenizer on dataset:  47%|####7     | 3169000/6811963 [30:11<38:27, 1578.58 examples/s]";
  const std::string wordings[] = {
      "RuntimeError: [%d] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value "
      "store by key '0', but store->get('0') got error: Socket Timeout",
      "torch.distributed.DistBackendError: [%d] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
      "via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 1800000ms, keys: "
      "/default_pg/0//cuda//0. This may indicate a possible application crash on rank 0 or a network set up issue.",
      "torch.distributed.DistBackendError: [%d] is setting up NCCL communicators and retrieving ncclUniqueId from "
      "roots via TCPStore by key '0:0', but got error: wait timeout after 1800000ms. This may indicate a possible "
      "application crash on rank 0 or a network set up issue.",
  };
  for (const std::string& wording : wordings) {
    SCOPED_TRACE(wording);
    std::string log = bar + "\n";
    for (int r : {1, 2, 3}) {
      std::string line = wording;
      line.replace(line.find("%d"), 2, std::to_string(r));
      log += "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    "
             "torch.distributed.barrier()\n" + line + "\n";
    }
    auto d = diagnose_log(log);
    ASSERT_TRUE(d.has_root_cause());
    EXPECT_EQ(d.findings.front().rule, "data-preparation-outlasted-timeout");
    EXPECT_EQ(d.findings.front().culprit_ranks, std::vector<int>{0});
  }
  // One console: rank 1's traceback glued to rank 0's bar, no newline between.
  std::string glued = wordings[1];
  glued.replace(glued.find("%d"), 2, "1");
  auto d = diagnose_log(bar + "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
                        "    torch.distributed.barrier()\n" + glued + "\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "data-preparation-outlasted-timeout");
  EXPECT_EQ(d.findings.front().culprit_ranks, std::vector<int>{0}) << "the bar is not rank 1's";
}

// The same story in one file per rank: rank 0's file ends in its dataset's
// map while rank 1's file fails waiting for rank 0's ncclUniqueId. The file
// that never failed went quiet; its last lines tell what rank 0 was doing.
TEST(Stall, ARankFileThatWentQuietInDataPreparationIsWhatTheOthersWaitedFor) {
  const std::string waited =
      "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    torch.distributed.barrier()\n"
      "RuntimeError: [1] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value "
      "store by key '0', but store->get('0') got error: Socket Timeout\n";
  const std::string preparing = "Map:  20%|##        | 273000/1332406 [32:01<1:40:12, 176.20 examples/s]\n";
  auto d = diagnose_files({{"rank0.log", preparing}, {"rank1.log", waited}});
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "data-preparation-outlasted-timeout");
  EXPECT_EQ(d.findings.front().culprit_ranks, std::vector<int>{0});

  auto done = diagnose_files({{"rank0.log", "Map: 100%|##########| 1332406/1332406 [41:07<00:00, 540.10 examples/s]\n"},
                              {"rank1.log", waited}});
  EXPECT_EQ(find_rule(done, "data-preparation-outlasted-timeout"), nullptr) << "a finished map is no stall";
}

// Frameworks print save and evaluation markers on the main process only: a
// marker without a rank was rank 0's, unless rank 0 itself waited.
TEST(Stall, ASaveMarkerWithoutARankWasTheMainProcesssUnlessRankZeroWaited) {
  const std::string save = "2026-02-18 10:28:25,496 - root - INFO - Saving model checkpoint to /ckpt/checkpoint-500\n";
  auto saving = diagnose_log(save + old_watchdog(3) + old_watchdog(5));
  ASSERT_TRUE(saving.has_root_cause());
  EXPECT_EQ(saving.findings.front().category, "save_phase_stall");
  EXPECT_EQ(saving.findings.front().culprit_ranks, std::vector<int>{0});
  EXPECT_NE(saving.findings.front().summary.find("Rank 0 is inferred"), std::string::npos)
      << saving.findings.front().summary;

  auto waited = diagnose_log(save + old_watchdog(0) + old_watchdog(5));
  ASSERT_TRUE(waited.has_root_cause());
  EXPECT_EQ(waited.findings.front().category, "save_phase_stall");
  EXPECT_TRUE(waited.findings.front().culprit_ranks.empty()) << "rank 0 waited in the collective: not its save";
}

TEST(Stall, AFinishedPreparationIsNoStraggler) {
  auto d = diagnose_log(
      "Map: 100%|##########| 1000/1000 [00:01<00:00]\n"
      "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
      "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800520 milliseconds before timing out.\n");
  EXPECT_EQ(find_rule(d, "data-preparation-outlasted-timeout"), nullptr);
}

const std::string kRank1Timeout =
    "[rank1]:[E709 17:05:38.162814866 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=2778, OpType=_ALLGATHER_BASE, NumelIn=10, NumelOut=20, Timeout(ms)=1800000) ran for "
    "1801649 milliseconds before timing out.\n";

TEST(Stall, AFileThatWentQuietTellsWhatItWasDoingWhenTheOthersTimedOut) {
  auto d = diagnose_files({
      {"console.log", kRank1Timeout},
      {"prints.log", "step 5 done\nSaved model to /ckpt/step_5/model.pt\n"},
  });
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "checkpoint-save-stall");
  EXPECT_EQ(d.findings.front().evidence.front().file, "prints.log");
}

TEST(Stall, AHangAfterTrainingFinishedIsTheFinalSaveUnlessTheSaveItselfShows) {
  std::string summary =
      "{'train_runtime': 119.8187, 'train_samples_per_second': 2.504, 'train_steps_per_second': 0.075, "
      "'train_loss': 1.2388, 'epoch': 2.57}\n";
  auto after = diagnose_log(summary + kRank1Timeout);
  ASSERT_TRUE(after.has_root_cause());
  EXPECT_EQ(after.findings.front().rule, "hang-after-training-finished");
  EXPECT_EQ(after.findings.front().category, "save_phase_stall");

  auto saving = diagnose_log(summary + "Saving model checkpoint to /out\n" + kRank1Timeout);
  EXPECT_NE(find_rule(saving, "checkpoint-save-stall"), nullptr);
  EXPECT_EQ(find_rule(saving, "hang-after-training-finished"), nullptr) << "absent: the save says it more directly";

  auto training = diagnose_log("{'loss': 2.1, 'grad_norm': 1.8, 'learning_rate': 4.5e-05, 'epoch': 0.12}\n" +
                               kRank1Timeout);
  EXPECT_EQ(find_rule(training, "hang-after-training-finished"), nullptr);
}

TEST(Stall, ThePhaseIsTheOneRootCauseAndTheNeverIssuedAnalysisItsSymptom) {
  auto d = diagnose_files({
      {"rank0.log", "[rank0]: step 5\n[rank0]: Saving model checkpoint to /out/checkpoint-5\n"},
      {"rank1.log", kRank1Timeout},
  });
  const diagnose::Finding* save = find_rule(d, "checkpoint-save-stall");
  const diagnose::Finding* never = find_rule(d, "rank-never-issued-collective");
  ASSERT_NE(save, nullptr);
  ASSERT_NE(never, nullptr);
  EXPECT_TRUE(save->root_cause);
  EXPECT_EQ(save->culprit_ranks, std::vector<int>{0});
  EXPECT_FALSE(never->root_cause);
  EXPECT_NE(never->summary.find("not a second cause"), std::string::npos) << never->summary;
  EXPECT_EQ(std::count_if(d.findings.begin(), d.findings.end(), [](const auto& f) { return f.root_cause; }), 1);
}

// A hang nothing reported (no error, no timeout: killed by hand, or still
// hanging) is told by where the logs stop: an evaluation or generation that
// never finished, a save that began.
TEST(SilentHang, LogsThatStopInsideAnUnfinishedPhaseSayWhichWithLowConfidence) {
  struct Case {
    const char* last;
    const char* category;
  };
  for (const Case& c : {Case{"Generating samples...:   0%|          | 0/1 [00:00<?, ?it/s]", "eval_generate_stall"},
                        Case{"Evaluating:  12%|#2        | 30/250 [00:10<01:10,  3.1it/s]", "eval_generate_stall"},
                        Case{"[INFO|trainer.py:3639] 2025-02-11 03:12:09,554 >> Saving model checkpoint to out/checkpoint-500",
                             "save_phase_stall"},
                        Case{"I0510 07:28:04.428285 140051304576832 distributed_c10d.py:337] Waiting in store based "
                             "barrier to initialize process group for rank: 7, key: store_based_barrier_key:2 "
                             "(world_size=8, worker_count=7, timeout=0:30:00)",
                             "init_failure"}}) {
    auto d = diagnose_log(std::string("step 1 loss 2.0\nstep 2 loss 1.9\n") + c.last + "\n");
    ASSERT_TRUE(d.has_root_cause()) << c.last;
    const diagnose::Finding& top = d.findings.front();
    EXPECT_EQ(top.rule, "logs-end-in-phase") << c.last;
    EXPECT_EQ(top.category, c.category) << c.last;
    EXPECT_LT(top.confidence, 0.5);
    ASSERT_EQ(top.evidence.size(), 1u);
    EXPECT_EQ(top.evidence[0].line, 3);
  }
}

TEST(SilentHang, AFinishedPhaseOrOneTheJobWentOnFromSaysNothing) {
  for (const char* log : {
           "step 1 loss 2.0\nEvaluating: 100%|##########| 250/250 [01:20<00:00,  3.1it/s]\n",
           "Generating samples...:   0%|          | 0/1 [00:00<?, ?it/s]\nstep 3 loss 1.8\n",
           "{'train_runtime': 119.8187, 'train_samples_per_second': 2.504, 'train_loss': 1.2388, 'epoch': 2.57}\n",
           "INFO:torch.distributed.distributed_c10d:Waiting in store based barrier to initialize process group for "
           "rank: 0, key: store_based_barrier_key:1 (world_size=16, num_workers_joined=8, timeout=0:30:00)\n"
           "INFO:torch.distributed.distributed_c10d:Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 "
           "with 16 nodes.\n",
       }) {
    auto d = diagnose_log(log);
    EXPECT_FALSE(d.has_root_cause()) << log;
  }
  auto error = diagnose_log("[rank1]: FrobnicatorError: broke\nGenerating samples...:   0%|  | 0/1 [00:00<?, ?it/s]\n");
  ASSERT_TRUE(error.has_root_cause());
  EXPECT_EQ(error.findings.front().rule, "earliest-error-line") << "an error line says more than where the logs stop";
  EXPECT_EQ(find_rule(error, "logs-end-in-phase"), nullptr);
}

// Ctrl-C at the terminal (torchrun's agent gets SIGINT, in either spelling of
// the signal) is the user stopping the job, most often because it hung: the
// lines before the interrupt say where; what the processes print after it is
// their shutdown.
TEST(SilentHang, AJobTheUserInterruptedIsReadUpToTheInterrupt) {
  const std::string shutdown =
      "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1894649 closing signal SIGINT\n"
      "WARNING:torch.distributed.elastic.multiprocessing.api:Unable to shutdown process 1894649 via 2, forcefully "
      "exitting via 9\n";
  for (const char* interrupt :
       {"WARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down workers\n",
        "W0823 16:54:02.337000 139733055988160 torch/distributed/elastic/agent/server/api.py:688] Received "
        "Signals.SIGINT death signal, shutting down workers\n"}) {
    auto d = diagnose_log("step 1 loss 2.0\n[INFO|trainer.py:3639] 2025-02-11 03:12:09,554 >> Saving model checkpoint "
                          "to out/checkpoint-500\n" +
                          std::string(interrupt) + shutdown);
    ASSERT_TRUE(d.has_root_cause()) << interrupt;
    const diagnose::Finding& top = d.findings.front();
    EXPECT_EQ(top.rule, "logs-end-in-phase") << interrupt;
    EXPECT_EQ(top.category, "save_phase_stall");
    ASSERT_EQ(top.evidence.size(), 1u);
    EXPECT_EQ(top.evidence[0].line, 2) << "the last line before the interrupt on line 3";
    EXPECT_NE(top.summary.find("interrupted at the terminal (job.log:3)"), std::string::npos) << top.summary;
    const diagnose::Finding* by_user = find_rule(d, "job-interrupted-by-user");
    ASSERT_NE(by_user, nullptr);
    EXPECT_FALSE(by_user->root_cause) << "the interrupt is what the user did about the hang";
    EXPECT_EQ(find_rule(d, "job-stopped-from-outside"), nullptr) << "Ctrl-C is no scheduler's stop";
  }
  // Interrupted while training went on: the interrupt is all there is to say.
  auto training = diagnose_log(
      "step 1 loss 2.0\nWARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down "
      "workers\n" + shutdown);
  ASSERT_TRUE(training.has_root_cause());
  EXPECT_EQ(training.findings.front().rule, "job-interrupted-by-user");
  EXPECT_EQ(find_rule(training, "logs-end-in-phase"), nullptr);
  // Another signal is still a stop from outside.
  auto sigterm = diagnose_log("Saving model checkpoint to out/checkpoint-500\n"
                              "W0409 07:28:49.530000 1359 torch/distributed/elastic/agent/server/api.py:719] Received "
                              "15 death signal, shutting down workers\n");
  ASSERT_TRUE(sigterm.has_root_cause());
  EXPECT_EQ(sigterm.findings.front().rule, "job-stopped-from-outside");
}
// Slurm's own report that it killed a task for memory is the cause; the
// step's cancellation it printed next is the cascade, not a stop from outside.
TEST(Crash, ALaunchersOwnOutOfMemoryKillIsTheCauseAndTheCancelItsCascade) {
  auto d = diagnose_log(
      "srun: error: as01r3b17: task 3: Out Of Memory\n"
      "srun: Terminating StepId=4777403.0\n"
      "slurmstepd: error: *** STEP 4777403.0 ON as01r3b17 CANCELLED AT 2024-08-16T19:36:54 ***\n"
      "slurmstepd: error: Detected 1 oom_kill event in StepId=4777403.0. Some of the step tasks have been OOM "
      "Killed.\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "launcher-killed-for-memory");
  EXPECT_EQ(d.findings.front().category, "rank_crash_oom");
  EXPECT_EQ(d.findings.front().culprit_ranks, std::vector<int>{3});
  const diagnose::Finding* stop = find_rule(d, "job-stopped-from-outside");
  ASSERT_NE(stop, nullptr) << "the cancel is still shown";
  EXPECT_FALSE(stop->root_cause) << "the cancel followed the kill";

  auto terminated = diagnose_log("srun: error: node024: tasks 0-7: Terminated\n");
  EXPECT_EQ(find_rule(terminated, "launcher-killed-for-memory"), nullptr);
}

// NCCL's word that its build or the driver cannot be captured in a CUDA graph
// is the versions, and the 'invalid usage' the capture then returns follows
// from it; the same error without that word is no version finding.
TEST(Versions, NcclThatCannotBeCapturedInAGraphIsABuildThatDoesNotFitTheDriver) {
  const std::string usage =
      "[rank0]: RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\n";
  auto d = diagnose_log(
      "iZ1pp06qu51oiorg7t0nrwZ:3615176:3615176 [0] misc/strongstream.cc:53 NCCL WARN NCCL cannot be captured in a "
      "graph if either it wasn't built with CUDA runtime >= 11.3 or if the installed CUDA driver < R465.\n" + usage);
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "cuda-build-does-not-fit-driver-or-gpu");
  EXPECT_EQ(d.findings.front().category, "version_mismatch");

  auto bare = diagnose_log(usage);
  EXPECT_EQ(find_rule(bare, "cuda-build-does-not-fit-driver-or-gpu"), nullptr);
}

TEST(Crash, ABusErrorInsideNcclIsSharedMemoryAndTheCrashItsSymptom) {
  std::string sigbus = "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)\n"
                       "==== backtrace (tid:   3095) ====\n";
  auto in_nccl = diagnose_log(sigbus + " 2 0x000000000007587d ncclGroupEnd()  ???:0\n");
  ASSERT_TRUE(in_nccl.has_root_cause());
  EXPECT_EQ(in_nccl.findings.front().rule, "bus-error-inside-nccl");
  const diagnose::Finding* crash = find_rule(in_nccl, "crash-signal");
  ASSERT_NE(crash, nullptr) << "the crash is still reported";
  EXPECT_FALSE(crash->root_cause) << "its only evidence is the bus error the shared-memory finding explains";

  // Without NCCL's frames the kernel's reason still tells: a mapped page with
  // nothing behind it (a data loader's shared tensor in /dev/shm, here).
  auto elsewhere = diagnose_log(sigbus + " 2 0x000000000007587d at::native::copy_()  ???:0\n");
  ASSERT_TRUE(elsewhere.has_root_cause());
  EXPECT_EQ(elsewhere.findings.front().rule, "bus-error-unbacked-page");
  EXPECT_EQ(elsewhere.findings.front().category, "nccl_setup_error");
  EXPECT_EQ(find_rule(elsewhere, "bus-error-inside-nccl"), nullptr);
  EXPECT_EQ(find_rule(in_nccl, "bus-error-unbacked-page"), nullptr) << "one reading of the shared memory, not two";

  // A bus error of another kind (a misaligned access) is a crash like any other.
  auto misaligned = diagnose_log(
      "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: invalid address alignment)\n"
      "==== backtrace (tid:   3095) ====\n 2 0x000000000007587d at::native::copy_()  ???:0\n");
  ASSERT_TRUE(misaligned.has_root_cause());
  EXPECT_EQ(misaligned.findings.front().rule, "crash-signal");
  EXPECT_EQ(find_rule(misaligned, "bus-error-unbacked-page"), nullptr);
}

// A crash printed without a rank belongs to the worker the launcher says
// failed first: mpirun's "noticed that process rank N", srun's failed task.
// Two ranks the launcher saw fail, in no order, name none.
TEST(Crash, ACrashWithoutARankIsTheRankItsLauncherSawFailFirst) {
  auto mpirun = diagnose_log(
      "2021-07-24 11:06:12.450522: I tensorflow/stream_executor/cuda/cuda_driver.cc:745] failed to allocate 373.25M "
      "(391379200 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
      "mpirun noticed that process rank 2 with PID 4711 on node gpu07 exited on signal 9 (Killed).\n");
  ASSERT_TRUE(mpirun.has_root_cause());
  EXPECT_EQ(mpirun.findings.front().category, "rank_crash_oom");
  EXPECT_EQ(mpirun.findings.front().culprit_ranks, std::vector<int>{2});
  EXPECT_EQ(mpirun.findings.front().culprit_hosts, std::vector<std::string>{"gpu07"});

  auto srun = diagnose_log(
      "RuntimeError: CUDA error: an illegal memory access was encountered\n"
      "srun: error: node-b: task 9: Exited with exit code 1\n");
  ASSERT_TRUE(srun.has_root_cause());
  EXPECT_EQ(srun.findings.front().category, "cuda_error");
  EXPECT_EQ(srun.findings.front().culprit_ranks, std::vector<int>{9});

  auto two = diagnose_log(
      "RuntimeError: CUDA error: an illegal memory access was encountered\n"
      "srun: error: node-b: task 9: Exited with exit code 1\n"
      "srun: error: node-a: task 3: Exited with exit code 1\n");
  ASSERT_TRUE(two.has_root_cause());
  EXPECT_TRUE(two.findings.front().culprit_ranks.empty());
}

// PyTorch prints a failed CUDA call as "CUDA error: " and the runtime's own
// string; the CUDA catalogue (rules/catalog/cuda.tsv, from libcudart) names
// every one, also inside the watchdog's exception, whose own words are only
// the report of it.
TEST(Crash, EveryCudaRuntimeErrorStringIsNamedByItsCatalogue) {
  auto capture = diagnose_log(
      "[E ProcessGroupNCCL.cpp:830] [Rank 10] NCCL watchdog thread terminated with exception: CUDA error: operation "
      "not permitted when stream is capturing\n");
  ASSERT_TRUE(capture.has_root_cause());
  EXPECT_EQ(capture.findings.front().category, "cuda_error");

  auto ordinal = diagnose_log("RuntimeError: CUDA error: no CUDA-capable device is detected\n");
  ASSERT_TRUE(ordinal.has_root_cause());
  EXPECT_EQ(ordinal.findings.front().category, "init_failure");
}

// A file cut inside its last line ends, whole, at the line before: the wait
// PyTorch's store-based barrier repeats is where the job stopped, not "INFO:r".
TEST(Stall, ALastLineCutShortIsReadAsTheLineBefore) {
  const std::string wait =
      "INFO:root:Waiting in store based barrier to initialize process group for rank: 5, key: "
      "store_based_barrier_key:1 (world_size=8, worker_count=7, timeout=0:30:00)\n";
  auto cut = diagnose_log(wait + wait + "INFO:r\n");
  ASSERT_TRUE(cut.has_root_cause());
  EXPECT_EQ(cut.findings.front().rule, "logs-end-in-phase");
  EXPECT_EQ(cut.findings.front().category, "init_failure");
  // A last line with words of its own is a line, and says nothing of a phase.
  auto moved_on = diagnose_log(wait + "INFO:root:Rank 5: Completed store-based barrier for key:store_based_barrier_key:1 with 8 nodes.\n");
  EXPECT_EQ(find_rule(moved_on, "logs-end-in-phase"), nullptr);
}

// c10d's own words raised as a plain Python exception are what the
// catalogue names them: "host not found" from the store's address lookup is
// a start-up failure, and the exception is how the rank died of it.
TEST(Lead, AnExceptionWhoseMessageTheCatalogueNamesIsThatFailure) {
  auto d = diagnose_log(
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3.7/site-packages/torch/distributed/rendezvous.py\", line 143, in "
      "_env_rendezvous_handler\n"
      "    store = TCPStore(master_addr, master_port, start_daemon)\n"
      "ValueError: host not found: Name or service not known\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "exception-catalogued");
  EXPECT_EQ(d.findings.front().category, "init_failure");
  const diagnose::Finding* crash = find_rule(d, "python-exception");
  ASSERT_NE(crash, nullptr) << "the exception is still shown";
  EXPECT_FALSE(crash->root_cause);
  // An exception the catalogue does not name stays a crash.
  auto plain = diagnose_log("Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n"
                            "KeyError: 'labels'\n");
  ASSERT_TRUE(plain.has_root_cause());
  EXPECT_EQ(plain.findings.front().rule, "python-exception");
}

// A line without a letter names no error, whatever its level: the "{" that
// opens the JSON torchelastic's error handler prints is not the lead, the
// exception inside it is.
TEST(Lead, ALineWithoutALetterIsNoErrorLine) {
  auto d = diagnose_log(
      "ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{\n"
      "  \"message\": {\n"
      "    \"message\": \"RendezvousClosedError: \",\n");
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().category, "init_failure");
  ASSERT_FALSE(d.findings.front().evidence.empty());
  EXPECT_NE(d.findings.front().evidence.front().text, "{");
  // torchelastic's own format ("[ERROR] <time> error_handler: {"): the brace
  // after its module's name is still nothing.
  auto elastic = diagnose_log(
      "[ERROR] 2021-09-13 22:18:26,678 error_handler: {\n"
      "  \"message\": {\n"
      "    \"message\": \"RendezvousConnectionError: The connection to the C10d store has failed.\",\n");
  ASSERT_TRUE(elastic.has_root_cause());
  ASSERT_FALSE(elastic.findings.front().evidence.empty());
  EXPECT_EQ(elastic.findings.front().evidence.front().text.find('{'), std::string::npos);
  // An NCCL error trace's file:line is no logger's name: the trace is an error line.
  auto trace = diagnose_log("node1:1234:1290 [0] NCCL INFO init.cc:1295 -> 2\n");
  ASSERT_TRUE(trace.has_root_cause());
  EXPECT_EQ(trace.findings.front().rule, "earliest-error-line");
}

}  // namespace
}  // namespace ncclpm

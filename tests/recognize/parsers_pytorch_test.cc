// tests/recognize/parsers_pytorch_test.cc
//
// PyTorch ProcessGroupNCCL, c10d and launcher parsers (log-formats.md B, C,
// D, F) on message bodies: every era's wording, and near-misses.
#include <gtest/gtest.h>

#include "ncclpm/recognize/parsers.h"

namespace ncclpm::recognize {
namespace {

// --- WorkNCCL (B.3, F "WorkNCCL + timeout") ---------------------------------

TEST(ParsersPytorch, ParsesWorkNcclOf1xWithTensorShapeAndNoSeq) {
  auto w = parse_work_record(
      "Watchdog caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE, TensorShape=[1024, "
      "1024], "
      "Timeout(ms)=1800000) ran for 1800567 milliseconds before timing out.");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->context, "watchdog_timeout");
  EXPECT_EQ(w->seq, -1);
  EXPECT_EQ(w->op_type, "ALLREDUCE");
  EXPECT_EQ(w->tensor_shape, "1024, 1024");
  EXPECT_EQ(w->numel_in, -1);
  EXPECT_EQ(w->numel_out, -1);
  EXPECT_EQ(w->timeout_ms, 1800000);
  EXPECT_EQ(w->ran_for_ms, 1800567);
}

// A paste cut inside the WorkNCCL(...) and never rejoined: what came before
// the cut is read, the field the cut went through is not; a mention cut so is
// not a timeout.
TEST(ParsersPytorch, ReadsAWatchdogTimeoutCutInsideItsWorkNccl) {
  auto w = parse_cut_watchdog_timeout(
      "[Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=59709, OpType=_ALLGATHER_BASE, "
      "NumelIn=29171");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->context, "watchdog_timeout");
  EXPECT_EQ(w->seq, 59709);
  EXPECT_EQ(w->op_type, "_ALLGATHER_BASE");
  EXPECT_EQ(w->numel_in, -1) << "its number may be cut short";
  EXPECT_EQ(w->timeout_ms, -1);

  auto early = parse_cut_watchdog_timeout("[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1573");
  ASSERT_TRUE(early);
  EXPECT_EQ(early->seq, -1);
  EXPECT_EQ(early->op_type, "");

  auto op = parse_cut_watchdog_timeout("[Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=28956, OpType=ALLREDUCE,");
  ASSERT_TRUE(op);
  EXPECT_EQ(op->seq, 28956);
  EXPECT_EQ(op->op_type, "ALLREDUCE");

  EXPECT_FALSE(parse_cut_watchdog_timeout("Work WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=4"));

  // Cut before its record: a timeout whose collective is not named.
  for (std::string_view cut : {"[Rank 62] Watchdog caught collective oper", "[Rank 62] Watchdog caught collective",
                               "[Rank 62] Watchdog caught collective operation timeout: WorkN"}) {
    auto none = parse_cut_watchdog_timeout(cut);
    ASSERT_TRUE(none) << cut;
    EXPECT_EQ(none->context, "watchdog_timeout");
    EXPECT_EQ(none->seq, -1);
    EXPECT_EQ(none->op_type, "");
    EXPECT_EQ(none->timeout_ms, -1);
  }
  EXPECT_FALSE(parse_cut_watchdog_timeout("[Rank 62] Watchdog caught collective operation timeout: see above"))
      << "words after the sentence that are not its record: not a cut";
  EXPECT_FALSE(parse_cut_watchdog_timeout("the Watchdog caught collectives twice")) << "not the sentence";
  // On ProcessGroupNCCL's own [Rank N] line, a cut after "Watchdog c" is still
  // the sentence: its only other "Watchdog ..." message is the store write.
  for (std::string_view cut : {"Watchdog c", "Watchdog caught coll", "Watchdog caught collective operation tim"}) {
    auto short_cut = parse_cut_watchdog_timeout(cut, true);
    ASSERT_TRUE(short_cut) << cut;
    EXPECT_EQ(short_cut->context, "watchdog_timeout");
    EXPECT_EQ(short_cut->seq, -1);
  }
  EXPECT_FALSE(parse_cut_watchdog_timeout("Watchdog c")) << "a short cut anywhere else is no timeout";
  EXPECT_FALSE(parse_cut_watchdog_timeout("Watchdog ", true)) << "too short to tell the sentence";
  EXPECT_FALSE(parse_cut_watchdog_timeout("Watchdog wrote aborted communicator id to store: 5", true));
  EXPECT_FALSE(parse_cut_watchdog_timeout("Watchdog closed the store", true)) << "not the sentence's start";
  EXPECT_FALSE(parse_work_record("[Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=28956,"))
      << "the strict reading still refuses it, so that a wrapped line is joined first";
}

TEST(ParsersPytorch, ParsesWorkNcclWithoutSeqOrShape) {
  auto w = parse_work_record(
      "Watchdog caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE, "
      "Timeout(ms)=1800000) ran for "
      "1800083 milliseconds before timing out.");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->seq, -1);
  EXPECT_EQ(w->op_type, "ALLREDUCE");
  EXPECT_EQ(w->tensor_shape, "");
  EXPECT_EQ(w->timeout_ms, 1800000);
  EXPECT_EQ(w->ran_for_ms, 1800083);
}

TEST(ParsersPytorch, ParsesWorkNcclOf111To113WithSeqAndShape) {
  auto w = parse_work_record(
      "Caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=BROADCAST, TensorShape=[10], "
      "Timeout(ms)=600000) ran for 600345 milliseconds before timing out.");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->context, "watchdog_timeout");
  EXPECT_EQ(w->seq, 5);
  EXPECT_EQ(w->op_type, "BROADCAST");
  EXPECT_EQ(w->tensor_shape, "10");
  EXPECT_EQ(w->timeout_ms, 600000);
  EXPECT_EQ(w->ran_for_ms, 600345);
}

TEST(ParsersPytorch, ParsesWorkNcclOf20WithSeqOnly) {
  auto w = parse_work_record(
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, "
      "Timeout(ms)=1800000) "
      "ran for 1800069 milliseconds before timing out.");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->seq, 7);
  EXPECT_EQ(w->numel_in, -1);
  EXPECT_EQ(w->timeout_ms, 1800000);
  EXPECT_EQ(w->ran_for_ms, 1800069);
}

TEST(ParsersPytorch, ParsesWorkNcclOf21WithNumel) {
  auto w = parse_work_record(
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=241, OpType=_ALLGATHER_BASE, "
      "NumelIn=1052672, NumelOut=8421376, Timeout(ms)=600000) ran for 600005 milliseconds before "
      "timing out.");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->context, "watchdog_timeout");
  EXPECT_EQ(w->seq, 241);
  EXPECT_EQ(w->op_type, "_ALLGATHER_BASE");
  EXPECT_EQ(w->numel_in, 1052672);
  EXPECT_EQ(w->numel_out, 8421376);
  EXPECT_EQ(w->timeout_ms, 600000);
  EXPECT_EQ(w->ran_for_ms, 600005);
}

TEST(ParsersPytorch, TellsTheContextOfAWorkRecord) {
  auto blocking = parse_work_record(
      "Work WorkNCCL(SeqNum=3, OpType=BARRIER, NumelIn=1, NumelOut=1, Timeout(ms)=60000) timed out "
      "in blocking "
      "wait (NCCL_BLOCKING_WAIT=1).");
  ASSERT_TRUE(blocking);
  EXPECT_EQ(blocking->context, "blocking_wait");
  EXPECT_EQ(blocking->ran_for_ms, -1);

  auto async = parse_work_record(
      "Collective WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=4, NumelOut=4, Timeout(ms)=600000) "
      "raised the "
      "following async exception: NCCL error: remote process exited or there was a network error");
  ASSERT_TRUE(async);
  EXPECT_EQ(async->context, "async_exception");
  EXPECT_EQ(async->seq, 12);

  auto mention = parse_work_record(
      "Some work: WorkNCCL(SeqNum=1, OpType=SEND, NumelIn=8, NumelOut=8, Timeout(ms)=600000)");
  ASSERT_TRUE(mention);
  EXPECT_EQ(mention->context, "mention");
  EXPECT_EQ(mention->op_type, "SEND");
}

TEST(ParsersPytorch, TellsTheWatchdogTerminationFromTheTimeoutItRepeats) {
  // The terminate line and its what() copy embed the original timeout message.
  auto w = parse_work_record(
      "Process group watchdog thread terminated with exception: [Rank 1] Watchdog caught "
      "collective operation "
      "timeout: WorkNCCL(SeqNum=241, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
      "ran for "
      "600002 milliseconds before timing out.");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->context, "terminate_exception");
  EXPECT_EQ(w->seq, 241);
  EXPECT_EQ(w->ran_for_ms, 600002);

  auto old = parse_work_record(
      "[Rank 1] NCCL watchdog thread terminated with exception: [Rank 1] Watchdog caught "
      "collective operation "
      "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800069 "
      "milliseconds before "
      "timing out.");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->context, "terminate_exception");
}

TEST(ParsersPytorch, RejectsWorkNcclWithoutTimeout) {
  EXPECT_FALSE(parse_work_record("WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=5, NumelOut=5)"));
  // Hard-wrapped in the middle of a token.
  EXPECT_FALSE(
      parse_work_record("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=241, OpT"));
  EXPECT_FALSE(parse_work_record(
      "c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<...>) + 0x1d2"));
}

// --- watchdog status family (B.4, F) ----------------------------------------

TEST(ParsersPytorch, ParsesTimeoutAtStatusAndDropsGarbageCounter) {
  auto s = parse_pg_status(
      "Timeout at NCCL work: 4523, last enqueued NCCL work: 4523, last completed NCCL work: "
      "76280750235782912.");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->wording, "timeout_at");
  EXPECT_EQ(s->seq, 4523);
  EXPECT_EQ(s->last_enqueued, 4523);
  EXPECT_EQ(s->last_completed, -1);
}

TEST(ParsersPytorch, ParsesExceptionDetectedStatusWithNothingCompleted) {
  auto s = parse_pg_status(
      "Exception (either an error or timeout) detected by watchdog at work: 1, last enqueued NCCL "
      "work: 1, last "
      "completed NCCL work: -1.");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->wording, "exception_detected");
  EXPECT_EQ(s->seq, 1);
  EXPECT_EQ(s->last_enqueued, 1);
  EXPECT_EQ(s->last_completed, -1);
}

TEST(ParsersPytorch, ParsesSplitWordingsOf26Dev) {
  auto e = parse_pg_status(
      "NCCL error is detected by watchdog at work: 12, last enqueued NCCL work: 13, last completed "
      "NCCL work: 11.");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->wording, "error_detected");
  EXPECT_EQ(e->seq, 12);
  auto t = parse_pg_status(
      "Work timeout is detected by watchdog at work: 12, last enqueued NCCL work: 13, last "
      "completed NCCL work: 11.");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->wording, "timeout_detected");
  EXPECT_EQ(t->last_enqueued, 13);
  EXPECT_EQ(t->last_completed, 11);
}

TEST(ParsersPytorch, ParsesFailureDetectedStatusOf27) {
  auto s = parse_pg_status(
      " failure detected by watchdog at work sequence id: 241 PG status: last enqueued work: 241, "
      "last completed "
      "work: 240");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->wording, "failure_detected");
  EXPECT_EQ(s->seq, 241);
  EXPECT_EQ(s->last_enqueued, 241);
  EXPECT_EQ(s->last_completed, 240);
}

TEST(ParsersPytorch, ParsesDumpSignalFromThisRankAndFromAnother) {
  auto local = parse_pg_status(
      "Received a dump signal due to a collective timeout from this local rank and we will try our "
      "best to dump "
      "the debug info. Last enqueued NCCL work: 241, last completed NCCL work: 240.This is most "
      "likely caused by "
      "incorrect usages of collectives, e.g., wrong sizes used across ranks.");
  ASSERT_TRUE(local);
  EXPECT_EQ(local->wording, "dump_signal");
  EXPECT_EQ(local->source_rank, "this local rank");
  EXPECT_EQ(local->seq, -1);
  EXPECT_EQ(local->last_enqueued, 241);
  EXPECT_EQ(local->last_completed, 240);

  auto remote = parse_pg_status(
      "Received a dump signal due to a collective timeout from  rank 7 and we will try our best to "
      "dump the debug "
      "info. Last enqueued NCCL work: 310, last completed NCCL work: 309.This is most likely "
      "caused by ...");
  ASSERT_TRUE(remote);
  EXPECT_EQ(remote->source_rank, "rank 7");
  EXPECT_EQ(remote->last_enqueued, 310);
  EXPECT_EQ(remote->last_completed, 309);
}

TEST(ParsersPytorch, ParsesEarlyTimeoutSignalWording) {
  // torch 2.3-dev (pytorch#122850 test output).
  auto s = parse_pg_status(
      "Received a timeout signal from this local rank and will start to dump the debug info. Last "
      "enqueued NCCL "
      "work: 2, last completed NCCL work: 1.");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->wording, "dump_signal");
  EXPECT_EQ(s->source_rank, "this local rank");
  EXPECT_EQ(s->last_enqueued, 2);
  EXPECT_EQ(s->last_completed, 1);
}

TEST(ParsersPytorch, ParsesPeriodicWorkUpdate) {
  auto s = parse_pg_status(
      "NCCL Work update periodically: last enqueued NCCL work: 1200, last completed NCCL work: "
      "1199.");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->wording, "periodic");
  EXPECT_EQ(s->last_enqueued, 1200);
  EXPECT_EQ(s->last_completed, 1199);
}

TEST(ParsersPytorch, RejectsTruncatedStatusLines) {
  EXPECT_FALSE(parse_pg_status("Timeout at NCCL work: 4523, last enqueued NCCL work: 4523"));
  EXPECT_FALSE(parse_pg_status(
      "failure detected by watchdog at work sequence id: 241 PG status: last enqueued work:"));
  EXPECT_FALSE(parse_pg_status("Watchdog caught collective operation timeout"));
  EXPECT_FALSE(
      parse_pg_status("Received a dump signal due to a collective timeout from  rank 7 and we will "
                      "try our best to dump the "
                      "debug info. Last enqueued NCCL work: 310"));
}

// --- desync report (B.8) ----------------------------------------------------

TEST(ParsersPytorch, ParsesDesyncReportBullets) {
  auto head = parse_desync_line("\t - [0] Timeout at collective: ALLREDUCE, #315");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->kind, "timeout_at");
  EXPECT_EQ(head->reporter_rank, 0);
  EXPECT_EQ(head->op_type, "ALLREDUCE");
  EXPECT_EQ(head->seq, 315);

  auto never = parse_desync_line(
      "\t - To our best knowledge, ranks [1, 5] are the lagging ranks that caused this timeout. "
      "They never joined "
      "any collectives");
  ASSERT_TRUE(never);
  EXPECT_EQ(never->kind, "never_joined");
  EXPECT_EQ(never->lagging_ranks, "[1, 5]");

  auto not_finished =
      parse_desync_line("\t   - [7] joined but didn't finish collective #183 (count from 1)");
  ASSERT_TRUE(not_finished);
  EXPECT_EQ(not_finished->kind, "joined_not_finished");
  EXPECT_EQ(not_finished->lagging_ranks, "[7]");
  EXPECT_EQ(not_finished->seq, 183);

  auto not_joined = parse_desync_line(
      "[7] finished collective #182, but didn't join collective #183 (count from 1)");
  ASSERT_TRUE(not_joined);
  EXPECT_EQ(not_joined->kind, "finished_not_joined");
  EXPECT_EQ(not_joined->lagging_ranks, "[7]");
  EXPECT_EQ(not_joined->seq, 183);
}

TEST(ParsersPytorch, RejectsDesyncLookalikes) {
  EXPECT_FALSE(parse_desync_line("\t - Snapshot of ranks' latest states:"));
  EXPECT_FALSE(parse_desync_line("\t   #183 started ranks:"));
  EXPECT_FALSE(parse_desync_line("Timeout at collective: ALLREDUCE"));
}

// --- mismatch (B.8 DETAIL) --------------------------------------------------

TEST(ParsersPytorch, ParsesCollectiveMismatch) {
  auto m = parse_collective_mismatch(
      "Detected mismatch between collectives on ranks. Rank 0 is running collective: "
      "CollectiveFingerPrint(SequenceNumber=12, OpType=ALLREDUCE, TensorShape=[10], "
      "TensorDtypes=Float, "
      "TensorDeviceTypes=TensorOptions(dtype=float, device=cuda)), but Rank 1 is running "
      "collective: "
      "CollectiveFingerPrint(SequenceNumber=12, OpType=BROADCAST, TensorShape=[10], "
      "TensorDtypes=Float, "
      "TensorDeviceTypes=TensorOptions(dtype=float, device=cuda)).Collectives differ in the "
      "following aspects: "
      "\t Op type: ALLREDUCEvs BROADCAST");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->rank_a, 0);
  EXPECT_EQ(m->rank_b, 1);
  EXPECT_EQ(m->seq, 12);
  EXPECT_EQ(m->op_a, "ALLREDUCE");
  EXPECT_EQ(m->op_b, "BROADCAST");

  auto old = parse_collective_mismatch(
      "Detected mismatch between collectives on ranks. Rank 0 is running inconsistent collective: "
      "CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[20, 10]), but Rank 1 is running "
      "inconsistent "
      "collective: CollectiveFingerPrint(OpType=REDUCE)");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->rank_a, 0);
  EXPECT_EQ(old->rank_b, 1);
  EXPECT_EQ(old->seq, -1);
  EXPECT_EQ(old->op_a, "ALLREDUCE");
  EXPECT_EQ(old->op_b, "REDUCE");

  EXPECT_FALSE(parse_collective_mismatch("Rank 0 is running collective: ALLREDUCE"));
}

// --- other ProcessGroupNCCL / c10d messages (B.4-B.9) -----------------------

TEST(ParsersPytorch, ClassifiesPytorchMessages) {
  struct Case {
    const char* body;
    EventKind kind;
  };
  const Case cases[] = {
      {"ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in "
       "monitoring enqueued "
       "collectives.",
       EventKind::kWatchdogStuck},
      {"Heartbeat monitor timed out! Process will be terminated after dumping debug info. "
       "workMetaList_.size()=1",
       EventKind::kWatchdogStuck},
      {"NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system "
       "error (run with "
       "NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
       EventKind::kNcclErrorSurfaced},
      {"NCCL error: remote process exited or there was a network error, NCCL version 2.20.5",
       EventKind::kNcclErrorSurfaced},
      {"ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
       "prematurely.",
       EventKind::kNcclErrorSurfaced},
      {"NCCL communicator was aborted on rank 3.  Original reason for failure was: timeout",
       EventKind::kNcclErrorSurfaced},
      {"Process group watchdog thread terminated with exception: CUDA error: an illegal memory "
       "access",
       EventKind::kPgTerminate},
      {"To avoid data inconsistency, we are taking the entire process down.",
       EventKind::kPgTerminate},
      {"Terminating the process after attempting to dump debug info, due to collective timeout or "
       "exception.",
       EventKind::kPgTerminate},
      {"Broadcasting flight-recorder dump signal to other processes via TCPStore.",
       EventKind::kDumpSignal},
      {"ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1",
       EventKind::kDumpSignal},
      {"Stack trace of the failed collective not found, potentially because FlightRecorder is "
       "disabled.",
       EventKind::kDumpSignal},
      {"[c10d] recvValue failed on SocketImpl(fd=77, addr=[::ffff:127.0.0.1]:39732, "
       "remote=[::ffff:127.0.0.1]:29600): failed to recv, got 0 bytes",
       EventKind::kStoreError},
      {"terminate called after throwing an instance of 'c10::DistBackendError'",
       EventKind::kCppException},
      {"Fatal Python error: Aborted", EventKind::kCppException},
  };
  for (const Case& c : cases) {
    auto kind = classify_pytorch_message(c.body);
    ASSERT_TRUE(kind) << c.body;
    EXPECT_EQ(*kind, c.kind) << c.body;
  }
  EXPECT_FALSE(classify_pytorch_message("epoch 3 loss 0.25"));
  EXPECT_FALSE(classify_pytorch_message("retrying after transient NCCL errors"));
  EXPECT_FALSE(
      classify_pytorch_message("ProcessGroupNCCL initialization options: size: 8, global rank: 0"));
  // A traceback's source line that raises or catches one is not the message.
  EXPECT_FALSE(classify_pytorch_message("raise RendezvousConnectionError("));
  EXPECT_FALSE(classify_pytorch_message("except DistStoreError as e:"));
}

// --- launchers (C.2, D, F "Elastic") ---------------------------------------

TEST(ParsersPytorch, ParsesElasticFailedLine) {
  auto e = parse_process_exit(
      "failed (exitcode: -6) local_rank: 3 (pid: 12345) of binary: /usr/bin/python3");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->source, "elastic_failed");
  EXPECT_EQ(e->exit_code, -6);
  EXPECT_EQ(e->signal, "SIGABRT");
  EXPECT_EQ(e->local_rank, 3);
  EXPECT_EQ(e->pid, 12345);

  auto one = parse_process_exit(
      "failed (exitcode: 1) local_rank: 0 (pid: 13670) of binary: /data/envs/x/bin/python");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->exit_code, 1);
  EXPECT_EQ(one->signal, "");
}

TEST(ParsersPytorch, RejectsElasticFailedLineCutBeforePid) {
  EXPECT_FALSE(parse_process_exit("failed (exitcode: 1) local_rank: 0"));
}

TEST(ParsersPytorch, ParsesOpenMpisReportOfARankKilledBySignal) {
  auto e = parse_process_exit(
      "mpirun noticed that process rank 0 with PID 0 on node localhost exited on signal 9 (Killed).");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->source, "mpirun");
  EXPECT_EQ(e->rank, 0);
  EXPECT_EQ(e->pid, 0);
  EXPECT_EQ(e->host, "localhost");
  EXPECT_EQ(e->exit_code, -9);
  EXPECT_EQ(e->signal, "SIGKILL");
  // PRRTE wraps the line before "signal": the rank is known, the signal not.
  auto wrapped = parse_process_exit("prterun noticed that process rank 3 with PID 812 on node n2 exited on");
  ASSERT_TRUE(wrapped);
  EXPECT_EQ(wrapped->rank, 3);
  EXPECT_EQ(wrapped->exit_code, INT64_MIN);
}

TEST(ParsersPytorch, ParsesSrunTaskExits) {
  auto e = parse_process_exit("srun: error: node-b: task 9: Exited with exit code 1");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->source, "srun");
  EXPECT_EQ(e->host, "node-b");
  EXPECT_EQ(e->rank, 9);
  EXPECT_EQ(e->exit_code, 1);

  auto killed = parse_process_exit("srun: error: gpu-node3: tasks 4-7: Killed");
  ASSERT_TRUE(killed);
  EXPECT_EQ(killed->host, "gpu-node3");
  EXPECT_EQ(killed->rank, 4);
  EXPECT_EQ(killed->exit_code, INT64_MIN);
  EXPECT_EQ(killed->signal, "Killed");

  EXPECT_FALSE(parse_process_exit(
      "srun: error: Unable to allocate resources: Invalid partition name specified"));
}

// A banner in which a process names its machine (RETURNN's, a job script's).
TEST(ParsersPytorch, ReadsTheHostAProcessDeclaresInItsBanner) {
  auto plain = parse_declared_host("Hostname: cn-251");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->host, "cn-251");
  EXPECT_EQ(plain->pid, -1);
  auto returnn = parse_declared_host("Torch: Hostname cn-229, pid 116429, using GPU 2.");
  ASSERT_TRUE(returnn);
  EXPECT_EQ(returnn->host, "cn-229");
  EXPECT_EQ(returnn->pid, 116429);
  ASSERT_TRUE(parse_declared_host("hostname=gpu-node-07.cluster"));
  // nccl-tests' own lines start with the host (common.h, common.cu).
  auto failure = parse_declared_host("test: Test CUDA failure common.cu:941 'system not yet initialized'");
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->host, "test");
  auto with_pid = parse_declared_host(" .. node7 pid 54340: Test failure common.cu:891");
  ASSERT_TRUE(with_pid);
  EXPECT_EQ(with_pid->host, "node7");
  EXPECT_EQ(with_pid->pid, 54340);
  auto device = parse_declared_host("#  Rank  3 Group  0 Pid  54340 on      node7 device  3 [0x18] NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(device);
  EXPECT_EQ(device->host, "node7");
  EXPECT_EQ(device->pid, 54340);
  EXPECT_EQ(device->rank, 3);
  // The device list and the failure line of earlier nccl-tests: without the
  // group, without the pid (2017), and the failure without its pid.
  auto no_group = parse_declared_host("#   Rank  1 Pid  20611 on     node03 device  1 [0x04] Tesla P100-PCIE-16GB");
  ASSERT_TRUE(no_group);
  EXPECT_EQ(no_group->host, "node03");
  EXPECT_EQ(no_group->pid, 20611);
  EXPECT_EQ(no_group->rank, 1);
  auto first_era = parse_declared_host("#   Rank  7 on     node03 device  7 [0x00] Tesla P100-PCIE-16GB");
  ASSERT_TRUE(first_era);
  EXPECT_EQ(first_era->host, "node03");
  EXPECT_EQ(first_era->pid, -1);
  EXPECT_EQ(first_era->rank, 7);
  auto bare_failure = parse_declared_host(" .. node03: Test failure common.cu:391");
  ASSERT_TRUE(bare_failure);
  EXPECT_EQ(bare_failure->host, "node03");
  EXPECT_EQ(bare_failure->pid, -1);
  EXPECT_FALSE(parse_declared_host("Test failure rate: 3 of 10"));
  EXPECT_FALSE(parse_declared_host("# Using devices"));
  EXPECT_FALSE(parse_declared_host("moved the tensor on device 0 to device 1"));
  for (const char* other : {"hostname resolution failed for master", "Could not resolve hostname: node3 (retrying)",
                            "the hostname is too long", "MASTER_ADDR hostname: 10.0.0.1 port 29500"})
    EXPECT_FALSE(parse_declared_host(other)) << other;
}

// Ray names the node of an OOM kill or a version check by IP in the message.
TEST(ParsersPytorch, ReadsTheNodeRayNamesInItsMessages) {
  for (const auto& [line, ip] : std::vector<std::pair<std::string, std::string>>{
           {"[2025-04-02 15:02:00,117 E 135782 135782] (raylet) node_manager.cc:3069: 1 Workers (tasks / actors) "
            "killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 351e406b19, "
            "IP: 10.95.143.76) over the last time period.",
            "10.95.143.76"},
           {"Memory on the node (IP: 10.20.49.141, ID: 4748aa6d1b) where the task (actor ID: 9e43ace6, "
            "pid=4100606, memory used=56.57GB) was run exceeded the threshold",
            "10.20.49.141"},
           {"This process on node 10.123.3.87 was started with:", "10.123.3.87"},
       }) {
    auto d = parse_declared_host(line);
    ASSERT_TRUE(d) << line;
    EXPECT_EQ(d->host, ip) << line;
  }
  // The autoscaler lists nodes it acts on: no one node of this line.
  EXPECT_FALSE(parse_declared_host("(autoscaler) The following nodes (node IP: 10.1.140.199) will be terminated"));
}

// slurmstepd names the host it stopped the step on (req.c); the reason is kept.
TEST(ParsersPytorch, ParsesSlurmCancellations) {
  auto step = parse_process_exit(
      "slurmstepd: error: *** STEP 55595933.0 ON maestro-3017 CANCELLED AT 2025-01-10T15:27:25 DUE TO TIME LIMIT ***");
  ASSERT_TRUE(step);
  EXPECT_EQ(step->source, "slurmstepd");
  EXPECT_EQ(step->host, "maestro-3017");
  EXPECT_EQ(step->exit_code, INT64_MIN);
  EXPECT_EQ(step->message, "CANCELLED AT 2025-01-10T15:27:25 DUE TO TIME LIMIT");

  auto job = parse_process_exit("slurmstepd: error: *** JOB 37361369 ON learnfair5146 CANCELLED AT 2021-03-15T18:00:46 ***");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->host, "learnfair5146");
  EXPECT_EQ(job->message, "CANCELLED AT 2021-03-15T18:00:46");

  auto signal = parse_process_exit(
      "slurmstepd: error: *** STEP 12.0 ON gpu-a1 CANCELLED AT 2025-06-01T01:02:03 DUE to SIGNAL Terminated ***");
  ASSERT_TRUE(signal);
  EXPECT_EQ(signal->host, "gpu-a1");

  EXPECT_FALSE(parse_process_exit("the order was CANCELLED AT noon"));
}

// Ray's raylet names the dead worker's address and pid (node_manager.cc).
TEST(ParsersPytorch, ParsesRayWorkerDeaths) {
  auto e = parse_process_exit(
      "A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, "
      "check the logs for the dead worker. RayTask ID: ffff Worker ID: d893 Node ID: 8440 Worker IP address: "
      "172.19.24.110 Worker port: 10185 Worker PID: 90738 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
      "unexpectedly exits with a connection error code 2. End of file.");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->source, "ray");
  EXPECT_EQ(e->host, "172.19.24.110");
  EXPECT_EQ(e->pid, 90738);
  EXPECT_EQ(e->exit_code, INT64_MIN);
  EXPECT_EQ(e->message, "SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2");

  auto old = parse_process_exit(
      "A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, "
      "check the logs for the dead worker. RayTask ID: 082653e5 Worker ID: 3f6649cf");
  ASSERT_TRUE(old) << "Ray 1.x names neither address nor pid";
  EXPECT_EQ(old->host, "");
  EXPECT_EQ(old->pid, -1);
}

TEST(ParsersPytorch, ParsesDeepSpeedLauncherExit) {
  auto e = parse_process_exit(
      "['/usr/bin/python', '-u', 'train.py', '--local_rank=7', '--deepspeed'] exits with return "
      "code = -6");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->source, "deepspeed");
  EXPECT_EQ(e->exit_code, -6);
  EXPECT_EQ(e->signal, "SIGABRT");
  EXPECT_EQ(e->local_rank, 7);

  auto bare = parse_process_exit("exits with return code = 1");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->exit_code, 1);
  EXPECT_EQ(bare->local_rank, -1);
}

TEST(ParsersPytorch, ParsesClosingSignal) {
  auto s = parse_signal_sent("Sending process 1245 closing signal SIGTERM");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->pid, 1245);
  EXPECT_EQ(s->signal, "SIGTERM");
  EXPECT_FALSE(parse_signal_sent("Sending process 1245 closing signal"));
  EXPECT_FALSE(parse_signal_sent("Received SIGTERM death signal, shutting down workers"));
}

TEST(ParsersPytorch, ReadsOneSidedMismatchReportsOfThe1xEra) {
  auto m = parse_collective_mismatch(
      "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent collective: "
      "CollectiveFingerPrint(OpType=ALLGATHER, TensorShape");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->rank_a, 0);
  EXPECT_EQ(m->op_a, "ALLGATHER");
  EXPECT_EQ(m->rank_b, -1);
  EXPECT_TRUE(m->op_b.empty());
}

}  // namespace
}  // namespace ncclpm::recognize

// tests/recognize/file_recognizer_test.cc
//
// Whole files through a Framer and a FileRecognizer: multi-line blocks
// (tracebacks, torchrun's failure summary, C++ backtraces, desync reports)
// become one event each, and every line is accounted for.
#include "ncclpm/recognize/file_recognizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ncclpm/frame/framer.h"

namespace ncclpm::recognize {
namespace {

struct Recognized {
  Rows rows;
  LineCounts counts;
};

// Frames and recognizes `lines` as one file, the way ingest does: learn the
// launcher from the lines, feed them in order, finish, drain everything.
Recognized recognize(const std::vector<std::string>& lines, const discover::PathHints& hints = {},
                     FileRecognizer::ProgressSink progress_sink = {},
                     FileRecognizer::SetupLineSink setup_line_sink = {}) {
  frame::Framer framer;
  std::vector<std::string_view> sample(lines.begin(), lines.end());
  framer.learn_launcher(sample);
  FileRecognizer recognizer(hints);
  if (progress_sink) recognizer.set_progress_sink(std::move(progress_sink));
  if (setup_line_sink) recognizer.set_setup_line_sink(std::move(setup_line_sink));
  int64_t offset = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    read::PhysicalLine line;
    line.text = lines[i];
    line.line_no = static_cast<int64_t>(i) + 1;
    line.byte_offset = offset;
    line.full_bytes = static_cast<int64_t>(lines[i].size());
    offset += line.full_bytes + 1;
    recognizer.feed(line, framer.frame(line.text));
  }
  recognizer.finish();
  Recognized out;
  recognizer.drain(out.rows, /*final=*/true);
  out.counts = recognizer.counts();
  const LineCounts& c = out.counts;
  EXPECT_EQ(c.read, static_cast<int64_t>(lines.size()));
  EXPECT_EQ(c.read, c.blank + c.recognized + c.unparsed)
      << "blank " << c.blank << " recognized " << c.recognized << " unparsed " << c.unparsed;
  EXPECT_EQ(c.unparsed, static_cast<int64_t>(out.rows.unparsed.size()));
  return out;
}

std::vector<const Event*> events_of(const Rows& rows, EventKind kind) {
  std::vector<const Event*> out;
  for (const Event& e : rows.events)
    if (e.kind == kind) out.push_back(&e);
  return out;
}

std::string unparsed_texts(const Rows& rows) {
  std::string s;
  for (const UnparsedLine& u : rows.unparsed) s += std::to_string(u.line_no) + ": " + u.text + "\n";
  return s;
}

TEST(FileRecognizer, TurnsRankPrefixedTracebackIntoOneEvent) {
  Recognized r = recognize({
      "[rank9]: Traceback (most recent call last):",
      "[rank9]:   File \"/workspace/train.py\", line 412, in <module>",
      "[rank9]:     main()",
      "[rank9]:   File \"/workspace/train.py\", line 398, in main",
      "[rank9]:     loss.backward()",
      "[rank9]:   File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 525, in backward",
      "[rank9]:     torch.autograd.backward(",
      "[rank9]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has "
      "a total "
      "capacity of 79.15 GiB of which 1.02 GiB is free.",
  });
  EXPECT_EQ(r.counts.recognized, 8);
  ASSERT_EQ(r.rows.events.size(), 1u) << unparsed_texts(r.rows);
  const Event& e = r.rows.events[0];
  EXPECT_EQ(e.kind, EventKind::kTraceback);
  EXPECT_EQ(e.rank, 9);
  EXPECT_EQ(e.line_no, 1);
  EXPECT_EQ(e.end_line, 8);
  const auto& tb = std::get<Traceback>(e.detail);
  EXPECT_EQ(tb.exc_type, "torch.OutOfMemoryError");
  EXPECT_EQ(tb.exc_message,
            "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 "
            "GiB of which "
            "1.02 GiB is free.");
  EXPECT_EQ(tb.last_file, "/usr/lib/python3/dist-packages/torch/_tensor.py");
  EXPECT_EQ(tb.last_line, 525);
  EXPECT_EQ(tb.last_func, "backward");
  EXPECT_EQ(tb.frames, 3);
}

// The `rich` library's traceback box (Accelerate's CLI), whole or pasted
// from inside the box: one traceback event ending in its exception.
TEST(FileRecognizer, ReadsATracebackRichDrewInABox) {
  const std::vector<std::string> box = {
      "╭───── Traceback (most recent call last) ─────╮",
      "│ /opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py:989 in convert  │",
      "│                                                                                   │",
      "│ ❱  989 │   │   return self._apply(convert)                                   │",
      "╰─────────────────╯",
      "RuntimeError: CUDA error: uncorrectable ECC error encountered",
      "CUDA kernel errors might be asynchronously reported at some other API call.",
  };
  for (size_t first : {0u, 4u}) {
    std::vector<std::string> lines(box.begin() + static_cast<long>(first), box.end());
    Recognized r = recognize(lines);
    ASSERT_EQ(r.rows.events.size(), 1u) << unparsed_texts(r.rows);
    const Event& e = r.rows.events[0];
    EXPECT_EQ(e.kind, EventKind::kTraceback);
    EXPECT_EQ(e.end_line, static_cast<int64_t>(lines.size()));
    const auto& tb = std::get<Traceback>(e.detail);
    EXPECT_EQ(tb.exc_type, "RuntimeError");
    EXPECT_EQ(tb.exc_message.substr(0, 52), "CUDA error: uncorrectable ECC error encountered\nCUDA");
    if (first == 0) {
      EXPECT_EQ(tb.last_file, "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py");
      EXPECT_EQ(tb.last_line, 989);
      EXPECT_EQ(tb.last_func, "convert");
    }
  }
  Recognized table = recognize({"│ name │ value │", "│ lr   │ 1e-4  │"});
  EXPECT_TRUE(table.rows.events.empty()) << "a table's rows open no traceback";
}

TEST(FileRecognizer, KeepsTracebacksOfInterleavedRanksApart) {
  Recognized r = recognize({
      "[rank0]: Traceback (most recent call last):",
      "[rank1]: Traceback (most recent call last):",
      "[rank0]:   File \"a.py\", line 1, in <module>",
      "[rank1]:   File \"b.py\", line 2, in <module>",
      "[rank0]: KeyError: 'x'",
      "[rank1]: ValueError: bad",
  });
  auto tbs = events_of(r.rows, EventKind::kTraceback);
  ASSERT_EQ(tbs.size(), 2u);
  for (const Event* e : tbs) {
    const auto& tb = std::get<Traceback>(e->detail);
    if (e->rank == 0) {
      EXPECT_EQ(tb.exc_type, "KeyError");
      EXPECT_EQ(tb.last_file, "a.py");
    } else {
      EXPECT_EQ(e->rank, 1);
      EXPECT_EQ(tb.exc_type, "ValueError");
      EXPECT_EQ(tb.last_file, "b.py");
    }
  }
}

// torch.multiprocessing.spawn re-raises a worker's death in the parent with
// the worker's own traceback under "-- Process N terminated ...": both blocks
// are that worker's (its local rank), and so is the exit-code report.
TEST(FileRecognizer, GivesTheWorkerTorchSpawnNamesItsTracebacks) {
  Recognized r = recognize({
      "Traceback (most recent call last):",
      "  File \"tools/train_net.py\", line 161, in <module>",
      "    args=(args,),",
      "  File \"/opt/torch/multiprocessing/spawn.py\", line 118, in join",
      "    raise Exception(msg)",
      "Exception: ",
      "",
      "-- Process 3 terminated with the following error:",
      "Traceback (most recent call last):",
      "  File \"/opt/torch/multiprocessing/spawn.py\", line 19, in _wrap",
      "    fn(i, *args)",
      "RuntimeError: CUDA error: an illegal memory access was encountered",
  });
  auto tbs = events_of(r.rows, EventKind::kTraceback);
  ASSERT_EQ(tbs.size(), 2u) << unparsed_texts(r.rows);
  EXPECT_EQ(tbs[0]->local_rank, 3) << "the parent's report names the worker";
  EXPECT_EQ(tbs[1]->local_rank, 3);
  EXPECT_EQ(std::get<Traceback>(tbs[1]->detail).exc_type, "RuntimeError");
  EXPECT_EQ(tbs[0]->rank, -1) << "a local rank is not a global one";

  Recognized exited = recognize({
      "Traceback (most recent call last):",
      "  File \"/opt/torch/multiprocessing/spawn.py\", line 160, in join",
      "torch.multiprocessing.spawn.ProcessExitedException: process 5 terminated with signal SIGKILL",
  });
  auto killed = events_of(exited.rows, EventKind::kTraceback);
  ASSERT_EQ(killed.size(), 1u);
  EXPECT_EQ(killed[0]->local_rank, 5);
}

TEST(FileRecognizer, KeepsAChainedTracebackAsOneEventEndingInTheLastException) {
  Recognized r = recognize({
      "Traceback (most recent call last):",
      "  File \"a.py\", line 3, in f",
      "    g()",
      "KeyError: 'x'",
      "",
      "During handling of the above exception, another exception occurred:",
      "",
      "Traceback (most recent call last):",
      "  File \"a.py\", line 5, in <module>",
      "    f()",
      "RuntimeError: boom",
  });
  EXPECT_EQ(r.counts.blank, 2);
  EXPECT_EQ(r.counts.unparsed, 0) << unparsed_texts(r.rows);
  ASSERT_EQ(r.rows.events.size(), 1u);
  const Event& e = r.rows.events[0];
  EXPECT_EQ(e.kind, EventKind::kTraceback);
  EXPECT_EQ(e.line_no, 1);
  EXPECT_EQ(e.end_line, 11);
  const auto& tb = std::get<Traceback>(e.detail);
  EXPECT_EQ(tb.exc_type, "RuntimeError");
  EXPECT_EQ(tb.exc_message, "boom");
  EXPECT_EQ(tb.last_file, "a.py");
  EXPECT_EQ(tb.last_line, 5);
  EXPECT_EQ(tb.last_func, "<module>");
  EXPECT_EQ(tb.frames, 2);
  EXPECT_NE(e.text.find("KeyError: 'x'"), std::string::npos);
}

// A paste that begins below a traceback's header: its frames stay lines of
// their own, and the exception line right under them is the traceback, with
// what the frames said. Frames with no exception under them (a stack printed
// on purpose, a paste cut there) are no traceback, nor is an exception-like
// line after something else.
TEST(FileRecognizer, ReadsATracebackWhosePasteBeganBelowItsHeader) {
  Recognized r = recognize({
      "  File \"/opt/accelerate/utils/operations.py\", line 567, in pad_across_processes",
      "    return recursively_apply(",
      "           ^^^^^^^^^^^^^^^^^^",
      "  File \"/opt/accelerate/utils/operations.py\", line 557, in _pad_across_processes",
      "    new_tensor = tensor.new_zeros(tuple(new_size)) + pad_index",
      "RuntimeError: Storage size calculation overflowed with sizes=[128, 4647976594785319098]",
      "[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed out.",
  });
  auto tracebacks = events_of(r.rows, EventKind::kTraceback);
  ASSERT_EQ(tracebacks.size(), 1u);
  EXPECT_EQ(tracebacks[0]->line_no, 6);
  const auto& tb = std::get<Traceback>(tracebacks[0]->detail);
  EXPECT_EQ(tb.exc_type, "RuntimeError");
  EXPECT_EQ(tb.exc_message, "Storage size calculation overflowed with sizes=[128, 4647976594785319098]");
  EXPECT_EQ(tb.frames, 2);
  EXPECT_EQ(tb.last_func, "_pad_across_processes");
  EXPECT_EQ(r.counts.unparsed, 5) << "the frames stay lines of their own\n" << unparsed_texts(r.rows);

  for (const std::vector<std::string>& other : std::vector<std::vector<std::string>>{
           {"  File \"/opt/app/loader.py\", line 88, in wait", "    self.cv.wait()"},
           {"  File \"/opt/app/loader.py\", line 88, in wait", "step 10 loss 1.2", "KeyError: 'labels'"},
           {"File \"/opt/app/loader.py\", line 88, in wait", "KeyError: 'labels'"},
       }) {
    Recognized o = recognize(other);
    EXPECT_TRUE(events_of(o.rows, EventKind::kTraceback).empty()) << other[0] << " / " << other.back();
  }
}

// torchrun's own traceback pasted below its header still ends in its summary.
TEST(FileRecognizer, ReadsTheSummaryUnderAHeadlessTorchrunTraceback) {
  Recognized r = recognize({
      "  File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py\", line 135, in __call__",
      "    return launch_agent(self._config, self._entrypoint, list(args))",
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
      "============================================================",
      "train.py FAILED",
      "------------------------------------------------------------",
      "Failures:",
      "  <NO_OTHER_FAILURES>",
      "------------------------------------------------------------",
      "Root Cause (first observed failure):",
      "[0]:",
      "  time      : 2024-06-01_12:34:50",
      "  host      : node07.cluster.local",
      "  rank      : 8 (local_rank: 0)",
      "  exitcode  : -6 (pid: 1235)",
      "  error_file: <N/A>",
      "  traceback : Signal 6 (SIGABRT) received by PID 1235",
      "============================================================",
  });
  auto exits = events_of(r.rows, EventKind::kProcessExit);
  ASSERT_EQ(exits.size(), 1u) << unparsed_texts(r.rows);
  EXPECT_EQ(exits[0]->rank, 8);
  EXPECT_EQ(exits[0]->host, "node07.cluster.local");
  EXPECT_EQ(std::get<ProcessExit>(exits[0]->detail).exit_code, -6);
}

TEST(FileRecognizer, KeepsNcclErrorDetailAndLastErrorInTheTracebackMessage) {

  Recognized r = recognize({
      "[rank1]: Traceback (most recent call last):",
      "[rank1]:   File \"train.py\", line 10, in <module>",
      "[rank1]:     dist.barrier()",
      "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
      "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), "
      "NCCL version 2.20.5",
      "[rank1]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed "
      "or device error. ",
      "[rank1]: Last error:",
      "[rank1]: socketStartConnect: Connect to 10.0.0.2<45074> failed : Connection refused",
  });
  EXPECT_EQ(r.counts.unparsed, 0) << unparsed_texts(r.rows);
  ASSERT_EQ(r.rows.events.size(), 1u);
  const Event& e = r.rows.events[0];
  EXPECT_EQ(e.kind, EventKind::kTraceback);
  EXPECT_EQ(e.end_line, 7);
  const auto& tb = std::get<Traceback>(e.detail);
  EXPECT_EQ(tb.exc_type, "torch.distributed.DistBackendError");
  EXPECT_NE(tb.exc_message.find("ncclSystemError: System call"), std::string::npos);
  EXPECT_NE(tb.exc_message.find(
                "socketStartConnect: Connect to 10.0.0.2<45074> failed : Connection refused"),
            std::string::npos);
  // The version inside the error text is no banner.
  EXPECT_TRUE(events_of(r.rows, EventKind::kNcclVersion).empty());
}

TEST(FileRecognizer, DoesNotTakeNcclVersionInsideAPyTorchErrorForABanner) {
  Recognized r = recognize({
      "NCCL version 2.21.5+cuda12.4",
      "[rank0]:[E ProcessGroupNCCL.cpp:1537] NCCL error: remote process exited or there was a "
      "network error, "
      "NCCL version 2.20.5",
  });
  auto banners = events_of(r.rows, EventKind::kNcclVersion);
  ASSERT_EQ(banners.size(), 1u);
  EXPECT_EQ(banners[0]->line_no, 1);
  EXPECT_EQ(std::get<NcclVersion>(banners[0]->detail).version, "2.21.5");
  auto surfaced = events_of(r.rows, EventKind::kNcclErrorSurfaced);
  ASSERT_EQ(surfaced.size(), 1u);
  EXPECT_EQ(surfaced[0]->rank, 0);
}

TEST(FileRecognizer, EmitsOneProcessExitPerTorchrunFailureEntry) {
  Recognized r = recognize({
      "Traceback (most recent call last):",
      "  File \"/usr/local/bin/torchrun\", line 8, in <module>",
      "    sys.exit(main())",
      "  File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py\", line 135, in "
      "__call__",
      "    return launch_agent(self._config, self._entrypoint, list(args))",
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
      "============================================================",
      "train.py FAILED",
      "------------------------------------------------------------",
      "Failures:",
      "[1]:",
      "  time      : 2024-06-01_12:34:56",
      "  host      : node07.cluster.local",
      "  rank      : 9 (local_rank: 1)",
      "  exitcode  : -15 (pid: 1236)",
      "  error_file: <N/A>",
      "  traceback : Signal 15 (SIGTERM) received by PID 1236",
      "------------------------------------------------------------",
      "Root Cause (first observed failure):",
      "[0]:",
      "  time      : 2024-06-01_12:34:50",
      "  host      : node07.cluster.local",
      "  rank      : 8 (local_rank: 0)",
      "  exitcode  : -6 (pid: 1235)",
      "  error_file: <N/A>",
      "  traceback : Signal 6 (SIGABRT) received by PID 1235",
      "============================================================",
      "after the summary",
  });
  auto tbs = events_of(r.rows, EventKind::kTraceback);
  ASSERT_EQ(tbs.size(), 1u);
  EXPECT_EQ(std::get<Traceback>(tbs[0]->detail).exc_type,
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError");

  auto exits = events_of(r.rows, EventKind::kProcessExit);
  ASSERT_EQ(exits.size(), 2u);
  const Event& other = *exits[0];
  const auto& o = std::get<ProcessExit>(other.detail);
  EXPECT_EQ(o.source, "elastic_summary");
  EXPECT_EQ(other.rank, 9);
  EXPECT_EQ(other.local_rank, 1);
  EXPECT_EQ(other.pid, 1236);
  EXPECT_EQ(other.host, "node07.cluster.local");
  EXPECT_EQ(other.line_no, 11);
  EXPECT_EQ(other.end_line, 17);
  EXPECT_EQ(o.rank, 9);
  EXPECT_EQ(o.local_rank, 1);
  EXPECT_EQ(o.exit_code, -15);
  EXPECT_EQ(o.pid, 1236);
  EXPECT_EQ(o.signal, "SIGTERM");
  EXPECT_EQ(o.host, "node07.cluster.local");
  EXPECT_EQ(o.time, "2024-06-01_12:34:56");
  EXPECT_FALSE(o.root_cause_block);

  const auto& root = std::get<ProcessExit>(exits[1]->detail);
  EXPECT_EQ(exits[1]->rank, 8);
  EXPECT_EQ(root.local_rank, 0);
  EXPECT_EQ(root.exit_code, -6);
  EXPECT_EQ(root.pid, 1235);
  EXPECT_EQ(root.signal, "SIGABRT");
  EXPECT_EQ(root.message, "Signal 6 (SIGABRT) received by PID 1235");
  EXPECT_TRUE(root.root_cause_block);

  // The line after the closing border is no longer part of the summary.
  ASSERT_EQ(r.rows.unparsed.size(), 1u);
  EXPECT_EQ(r.rows.unparsed[0].line_no, 28);
  EXPECT_EQ(r.counts.recognized, 27);
}

TEST(FileRecognizer, ReadsATracebackThatStartsRightAfterAProgressBar) {
  Recognized r = recognize({
      "Running tokenizer on dataset:  47%|####7     | 3169000/6811963 [30:11<38:27, 1578.58 examples/s]Traceback "
      "(most recent call last):",
      "  File \"train.py\", line 10, in main",
      "    dataset = preprocess(dataset)",
      "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients.",
  });
  auto tbs = events_of(r.rows, EventKind::kTraceback);
  ASSERT_EQ(tbs.size(), 1u);
  EXPECT_EQ(tbs[0]->line_no, 1);
  // The bar before it is a line of its own: the line mender emits it (see
  // LineMender.TextGluedAfterAProgressBarIsALineOfItsOwn); the frame is the rest.
  EXPECT_TRUE(tbs[0]->text.starts_with("Traceback (most recent call last):")) << tbs[0]->text;
  EXPECT_EQ(r.counts.unparsed, 0) << unparsed_texts(r.rows);
}

TEST(FileRecognizer, KeepsTheHeaderOfATorchrunSummaryCutBeforeItsEntries) {
  Recognized r = recognize({"torch.distributed.elastic.multiprocessing.errors.ChildFailedError:"});
  ASSERT_EQ(r.counts.unparsed, 1);
  EXPECT_EQ(r.rows.unparsed[0].text, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:");
}

TEST(FileRecognizer, ReadsTorchrunFailureEntriesThatCarryAPythonCallstack) {
  Recognized r = recognize({
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
      "============================================================",
      "train.py FAILED",
      "------------------------------------------------------------",
      "Failures:",
      "  <NO_OTHER_FAILURES>",
      "------------------------------------------------------------",
      "Root Cause (first observed failure):",
      "[0]:",
      "  time      : 2024-06-01_12:34:50",
      "  host      : node07",
      "  rank      : 3 (local_rank: 3)",
      "  exitcode  : 1 (pid: 4242)",
      "  error_file: /tmp/torchelastic_abc/none_x/attempt_0/3/error.json",
      "  traceback : Traceback (most recent call last):",
      "    File "
      "\"/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/errors/"
      "__init__.py\", "
      "line 346, in wrapper",
      "      return f(*args, **kwargs)",
      "    File \"train.py\", line 10, in main",
      "      raise RuntimeError(\"loss is nan\")",
      "  RuntimeError: loss is nan",
      "  ",
      "============================================================",
  });
  // Only the header is kept as a line of its own (a paste cut after it still shows it).
  ASSERT_EQ(r.counts.unparsed, 1) << unparsed_texts(r.rows);
  EXPECT_EQ(r.rows.unparsed[0].line_no, 1);
  auto exits = events_of(r.rows, EventKind::kProcessExit);
  ASSERT_EQ(exits.size(), 1u);
  const auto& x = std::get<ProcessExit>(exits[0]->detail);
  EXPECT_EQ(exits[0]->rank, 3);
  EXPECT_EQ(x.exit_code, 1);
  EXPECT_EQ(x.pid, 4242);
  EXPECT_TRUE(x.root_cause_block);
  EXPECT_EQ(x.signal, "");
  EXPECT_EQ(x.message, "RuntimeError: loss is nan");
}

// Pastes are cut anywhere: an entry whose header and index were cut off is
// still torchrun's, by the shape of its fields.
TEST(FileRecognizer, ReadsATorchrunSummaryEntryCutAboveItsFields) {
  Recognized r = recognize({
      "  rank      : 0 (local_rank: 0)",
      "  exitcode  : -11 (pid: 6421)",
      "  error_file: <N/A>",
      "  traceback : Signal 11 (SIGSEGV) received by PID 6421",
      "======================================================",
  });
  auto exits = events_of(r.rows, EventKind::kProcessExit);
  ASSERT_EQ(exits.size(), 1u) << unparsed_texts(r.rows);
  const auto& x = std::get<ProcessExit>(exits[0]->detail);
  EXPECT_EQ(exits[0]->rank, 0);
  EXPECT_EQ(exits[0]->line_no, 1);
  EXPECT_EQ(x.exit_code, -11);
  EXPECT_EQ(x.pid, 6421);
  EXPECT_EQ(x.signal, "SIGSEGV");
  EXPECT_EQ(x.source, "elastic_summary");
  EXPECT_EQ(r.counts.unparsed, 0) << unparsed_texts(r.rows);

  Recognized root = recognize({
      "Root Cause (first observed failure):",
      "[0]:",
      "  time      : 2022-02-26_22:02:07",
      "  host      : jean-zay-iam39-ib0",
      "  rank      : 304 (local_rank: 0)",
      "  exitcode  : 1 (pid: 181845)",
      "  error_file: /tmp/torchelastic_78rus22c/none_h9w4ezyp/attempt_0/0/error.json",
      "  traceback : Traceback (most recent call last):",
      "    File \"pretrain_gpt.py\", line 241, in main",
      "      die",
      "  NameError: name 'die' is not defined",
  });
  auto root_exits = events_of(root.rows, EventKind::kProcessExit);
  ASSERT_EQ(root_exits.size(), 1u) << unparsed_texts(root.rows);
  EXPECT_EQ(root_exits[0]->rank, 304);
  EXPECT_EQ(root_exits[0]->host, "jean-zay-iam39-ib0");
  EXPECT_TRUE(std::get<ProcessExit>(root_exits[0]->detail).root_cause_block);
  EXPECT_EQ(std::get<ProcessExit>(root_exits[0]->detail).message, "NameError: name 'die' is not defined");
}

TEST(FileRecognizer, IgnoresSummaryLikeFieldsOfOtherShapes) {
  Recognized r = recognize({
      "[0]:",
      "  rank      : 3",
      "  host      : node07",
      "  exitcode  : -6",
      "  time      : 12:34:56",
  });
  EXPECT_TRUE(events_of(r.rows, EventKind::kProcessExit).empty());
  EXPECT_EQ(r.counts.unparsed, 5);
}

TEST(FileRecognizer, ReadsNcclVersionBannersOfEveryEra) {
  Recognized r = recognize({
      "NCCL version 2.18.6+cuda12.1",
      "node1:4242:4242 [0] NCCL INFO NCCL version 2.22.3+cuda12.4",
      "[2025-04-08 08:39:40] NCCL version 2.26.2+cuda12.8",
  });
  auto banners = events_of(r.rows, EventKind::kNcclVersion);
  ASSERT_EQ(banners.size(), 3u);
  EXPECT_EQ(std::get<NcclVersion>(banners[0]->detail).version, "2.18.6");
  EXPECT_EQ(std::get<NcclVersion>(banners[1]->detail).version, "2.22.3");
  EXPECT_EQ(banners[1]->host, "node1");
  EXPECT_EQ(std::get<NcclVersion>(banners[2]->detail).version, "2.26.2");
  EXPECT_EQ(std::get<NcclVersion>(banners[2]->detail).cuda, "12.8");
  EXPECT_NE(banners[2]->ts_us, 0);
}

TEST(FileRecognizer, ReadsTheNcclVersionAServingFrameworksWrapperLoaded) {
  Recognized r = recognize({
      "(Worker pid=960) INFO 08-12 20:26:09 [pynccl.py:113] vLLM is using nccl==2.28.9",
      "INFO 03-14 10:02:11 pynccl.py:58] vLLM is using nccl==2.18.1",
      "[2025-01-20 08:01:02 TP0] sglang is using nccl==2.21.5",
      "INFO: we are using nccl==2.20.5 here",
  });
  auto banners = events_of(r.rows, EventKind::kNcclVersion);
  ASSERT_EQ(banners.size(), 3u) << unparsed_texts(r.rows);
  EXPECT_EQ(std::get<NcclVersion>(banners[0]->detail).version, "2.28.9");
  EXPECT_EQ(banners[0]->pid, 960);
  EXPECT_EQ(std::get<NcclVersion>(banners[1]->detail).version, "2.18.1");
  EXPECT_EQ(std::get<NcclVersion>(banners[2]->detail).version, "2.21.5");
  EXPECT_EQ(r.rows.unparsed.size(), 1u);
}

TEST(FileRecognizer, AttachesCppBacktraceToThePrecedingEvent) {
  Recognized r = recognize({
      "[rank0]:[E1003 18:37:01.832146912 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught "
      "collective operation "
      "timeout: WorkNCCL(SeqNum=241, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
      "ran for 600002 "
      "milliseconds before timing out.",
      "Exception raised from checkTimeout at "
      "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most "
      "recent call first):",
      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f83f296c1b6 in "
      "/venv/lib/python3.11/site-packages/torch/lib/libc10.so)",
      "frame #1: "
      "c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
      "std::ratio<1l, 1000l> > >) + 0x2b4 (0x7f83a09fec74 in "
      "/venv/lib/python3.11/site-packages/torch/lib/"
      "libtorch_cuda.so)",
      "frame #2: <unknown function> + 0xd3b75 (0x7f94ddbd3b75 in "
      "/lib/x86_64-linux-gnu/libstdc++.so.6)",
  });
  EXPECT_EQ(r.counts.recognized, 5) << unparsed_texts(r.rows);
  ASSERT_EQ(r.rows.events.size(), 1u);
  const Event& e = r.rows.events[0];
  EXPECT_EQ(e.kind, EventKind::kWorkRecord);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.pg_rank, 0);
  EXPECT_EQ(e.line_no, 1);
  EXPECT_EQ(e.end_line, 5);
  EXPECT_NE(e.text.find("\nException raised from checkTimeout"), std::string::npos);
  EXPECT_NE(e.text.find("\nframe #2: <unknown function>"), std::string::npos);
  const auto& w = std::get<WorkRecord>(e.detail);
  EXPECT_EQ(w.context, "watchdog_timeout");
  EXPECT_EQ(w.seq, 241);
}

// A progress bar is one line: a C++ exception's trace printed after it is a
// failure of its own, not the bar's continuation (it was glued to the bar,
// then stored with the progress lines, where no rule read it).
TEST(FileRecognizer, ACppBacktraceAfterAProgressBarIsAnEventOfItsOwn) {
  Recognized r = recognize({
      "Evaluating:  12%|#2        | 30/250 [01:02<07:40,  2.09s/it]",
      "Exception raised from doWait at ../torch/csrc/distributed/c10d/TCPStore.cpp:445 (most recent call first):",
      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x757e97d92617 in libc10.so)",
  });
  ASSERT_EQ(r.rows.events.size(), 2u) << unparsed_texts(r.rows);
  EXPECT_EQ(r.rows.events[0].kind, EventKind::kTrainingProgress);
  EXPECT_EQ(r.rows.events[0].end_line, 1);
  EXPECT_EQ(r.rows.events[0].text.find('\n'), std::string::npos);
  EXPECT_EQ(r.rows.events[1].kind, EventKind::kCppException);
  EXPECT_EQ(r.rows.events[1].line_no, 2);
  EXPECT_EQ(r.rows.events[1].end_line, 3);
}

// A trace printed under a launcher's prefix only ("[default0]:") belongs to
// the watchdog's record just above it in the file, even when that stream's
// last event is a progress bar further up; its frames follow it.
TEST(FileRecognizer, ATraceUnderALauncherPrefixGoesToTheFilesLastEventNotToABar) {
  Recognized r = recognize({
      "[default0]: 12%|#2        | 37/312 [1:37:21<12:04:26, 158.06s/it]",
      "[default0]:[rank0]:[E408 08:40:46.832000565 ProcessGroupNCCL.cpp:2115] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
      "Process group watchdog thread terminated with exception: [Rank 0] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=21, OpType=_ALLGATHER_BASE, NumelIn=1, NumelOut=8, Timeout(ms)=600000) ran for 600010 "
      "milliseconds before timing out.",
      "[default0]:Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:635 "
      "(most recent call first):",
      "[default0]:frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f8b9f840f96 in libc10.so)",
      "[default0]:frame #1: <unknown function> + 0xdc253 (0x7f4c84b12253 in /lib/x86_64-linux-gnu/libstdc++.so.6)",
  });
  EXPECT_TRUE(r.rows.unparsed.empty()) << unparsed_texts(r.rows);
  ASSERT_EQ(r.rows.events.size(), 2u);
  EXPECT_EQ(r.rows.events[0].kind, EventKind::kTrainingProgress);
  EXPECT_EQ(r.rows.events[0].end_line, 1);
  EXPECT_EQ(r.rows.events[1].kind, EventKind::kWorkRecord);
  EXPECT_EQ(r.rows.events[1].end_line, 5);
}

// Ingest hands progress lines to a sink instead of making events of them:
// the same lines, the same attribution, and still nothing attaches to them.
TEST(FileRecognizer, AProgressSinkTakesTheProgressEventsAsLines) {
  std::vector<std::string> lines = {
      "[default0]: 12%|#2        | 37/312 [1:37:21<12:04:26, 158.06s/it]",
      "[W408 08:40:46.832000565 Utils.cpp:12] [PG ID 0 PG GUID 0(default_pg) Rank 3] {'loss': 1.25, 'epoch': 0.5}",
      "Evaluating:  12%|#2        | 30/250 [01:02<07:40,  2.09s/it]",
      "Exception raised from doWait at ../torch/csrc/distributed/c10d/TCPStore.cpp:445 (most recent call first):",
      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x757e97d92617 in libc10.so)",
      " [2025-03-01 10:11:12] iteration      100/  500000 | consumed samples: 25600 | lm loss: 2.104E+00 |",
  };
  Recognized as_events = recognize(lines);
  std::vector<std::pair<UnparsedLine, TrainingProgress>> sunk;
  Recognized as_lines = recognize(lines, {}, [&](const UnparsedLine& u, const TrainingProgress& p) {
    sunk.emplace_back(u, p);
  });
  auto progress = events_of(as_events.rows, EventKind::kTrainingProgress);
  ASSERT_EQ(progress.size(), 4u);
  ASSERT_EQ(sunk.size(), progress.size());
  for (size_t i = 0; i < sunk.size(); ++i) {
    const auto& [u, p] = sunk[i];
    const Event& e = *progress[i];
    EXPECT_EQ(u.line_no, e.line_no);
    EXPECT_EQ(u.byte_offset, e.byte_offset);
    EXPECT_EQ(u.host, e.host);
    EXPECT_EQ(u.pid, e.pid);
    EXPECT_EQ(u.local_rank, e.local_rank);
    EXPECT_EQ(u.text, e.text);
    EXPECT_EQ(p.source, std::get<TrainingProgress>(e.detail).source);
    EXPECT_EQ(p.step, std::get<TrainingProgress>(e.detail).step);
  }
  EXPECT_EQ(sunk[0].first.local_rank, 0);
  EXPECT_EQ(sunk[1].first.rank, 3) << "the default group's rank, as inference gives an event's";
  EXPECT_EQ(sunk[2].first.rank, -1);
  ASSERT_EQ(as_lines.rows.events.size(), as_events.rows.events.size() - progress.size());
  ASSERT_EQ(as_lines.rows.events.size(), 1u);
  EXPECT_EQ(as_lines.rows.events[0].kind, EventKind::kCppException);
  EXPECT_EQ(as_lines.rows.events[0].line_no, 4);
  EXPECT_EQ(as_lines.rows.events[0].end_line, 5);
  EXPECT_EQ(as_lines.counts.recognized, as_events.counts.recognized);
}

TEST(FileRecognizer, ASetupLineSinkTakesTheChannelAndTransportEventsAsLines) {
  std::vector<std::string> lines = {
      "[rank2]:node1:100:200 [2] NCCL INFO Channel 00/02 :    0   1   2   3",
      "node1:100:201 [2] NCCL INFO Trees [0] 3/-1/-1->2->1 [1] 3/-1/-1->2->1",
      "ncclInternalError: Internal check failed.",
      "[2025-03-01 10:11:12] node1:100:202 [2] NCCL INFO Channel 00/0 : 2[2] -> 3[3] via P2P/CUMEM/read",
      "node1:100:200 [2] NCCL INFO comm 0x5581 rank 2 nranks 4 cudaDev 2 busId 41000 - Init COMPLETE",
      "node1:100:202 [2] NCCL INFO Connected all rings",
      "node1:100:200 [2] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>",
  };
  Recognized as_events = recognize(lines);
  std::vector<std::pair<EventKind, UnparsedLine>> sunk;
  Recognized as_lines =
      recognize(lines, {}, {}, [&](EventKind kind, const UnparsedLine& u) { sunk.emplace_back(kind, u); });
  std::vector<const Event*> setup;
  for (const Event& e : as_events.rows.events)
    if (e.kind == EventKind::kNcclChannel || e.kind == EventKind::kNcclNetwork) setup.push_back(&e);
  ASSERT_EQ(setup.size(), 5u);
  ASSERT_EQ(sunk.size(), setup.size());
  for (size_t i = 0; i < sunk.size(); ++i) {
    const Event& e = *setup[i];
    EXPECT_EQ(sunk[i].first, e.kind);
    const UnparsedLine& u = sunk[i].second;
    EXPECT_EQ(u.line_no, e.line_no);
    EXPECT_EQ(u.byte_offset, e.byte_offset);
    EXPECT_EQ(u.host, e.host);
    EXPECT_EQ(u.pid, e.pid);
    EXPECT_EQ(u.rank, e.rank);
    EXPECT_EQ(u.local_rank, e.local_rank);
    EXPECT_EQ(u.ts_us, e.ts_us);
    EXPECT_EQ(u.severity, e.severity);
    EXPECT_EQ(u.text, e.text);
  }
  EXPECT_EQ(sunk[0].second.rank, 2);
  EXPECT_EQ(sunk[1].second.host, "node1");
  EXPECT_EQ(sunk[3].second.text, "Connected all rings");
  EXPECT_EQ(sunk[4].first, EventKind::kNcclNetwork);
  // The other lines are the same events either way: the error after the
  // trees line is its own, as it is after the event the line stands for.
  ASSERT_EQ(as_lines.rows.events.size(), as_events.rows.events.size() - setup.size());
  ASSERT_EQ(as_lines.rows.events.size(), 2u);
  EXPECT_EQ(as_lines.rows.events[0].kind, EventKind::kNcclErrorSurfaced);
  EXPECT_EQ(as_lines.rows.events[0].line_no, 3);
  EXPECT_EQ(as_lines.rows.events[0].end_line, 3);
  EXPECT_EQ(as_lines.rows.events[1].kind, EventKind::kNcclComm);
  EXPECT_EQ(as_lines.counts.recognized, as_events.counts.recognized);
}

// NCCL's setup reports are one line each: an error that follows one without
// a prefix of its own is kept as its own line, not folded into the report.
TEST(FileRecognizer, AttachesNothingToAnNcclSetupReport) {
  Recognized r = recognize({
      "hostA:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth2",
      "ncclInternalError: Internal check failed.",
      "Last error:",
  });
  ASSERT_EQ(r.rows.events.size(), 2u) << unparsed_texts(r.rows);
  EXPECT_EQ(r.rows.events[0].kind, EventKind::kNcclEnv);
  EXPECT_EQ(r.rows.events[0].end_line, 1);
  EXPECT_EQ(r.rows.events[0].text, "NCCL_SOCKET_IFNAME set by environment to eth2");
  EXPECT_EQ(r.rows.events[1].kind, EventKind::kNcclErrorSurfaced);
  EXPECT_EQ(r.rows.events[1].line_no, 2);
}

TEST(FileRecognizer, RecordsTheWatchdogSequenceOnce) {
  Recognized r = recognize({
      "[rank3]:[E1003 18:37:01.832146912 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught "
      "collective operation "
      "timeout: WorkNCCL(SeqNum=241, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
      "ran for 600002 "
      "milliseconds before timing out.",
      "[rank3]:[E1003 18:37:01.833000000 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) "
      "Rank 3]  "
      "failure detected by watchdog at work sequence id: 241 PG status: last enqueued work: 241, "
      "last completed "
      "work: 240",
      "[rank3]:[E1003 18:38:01.900000000 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) "
      "Rank 3] "
      "Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught "
      "collective operation "
      "timeout: WorkNCCL(SeqNum=241, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
      "ran for 600002 "
      "milliseconds before timing out.",
      "terminate called after throwing an instance of 'c10::DistBackendError'",
      "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated "
      "with exception: "
      "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=241, "
      "OpType=ALLREDUCE, NumelIn=1, "
      "NumelOut=1, Timeout(ms)=600000) ran for 600002 milliseconds before timing out.",
  });
  EXPECT_EQ(r.counts.unparsed, 0) << unparsed_texts(r.rows);
  auto works = events_of(r.rows, EventKind::kWorkRecord);
  int timeouts = 0;
  for (const Event* e : works)
    if (std::get<WorkRecord>(e->detail).context == "watchdog_timeout") ++timeouts;
  EXPECT_EQ(timeouts, 1);
  ASSERT_GE(works.size(), 2u);
  EXPECT_EQ(std::get<WorkRecord>(works[1]->detail).context, "terminate_exception");

  auto statuses = events_of(r.rows, EventKind::kPgStatus);
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0]->pg_id, "0");
  EXPECT_EQ(statuses[0]->pg_desc, "default_pg");
  EXPECT_EQ(std::get<PgStatus>(statuses[0]->detail).last_completed, 240);
  EXPECT_EQ(events_of(r.rows, EventKind::kCppException).size(), 1u);
}

TEST(FileRecognizer, AttachesDesyncBulletsToTheReport) {
  Recognized r = recognize({
      "[rank0]:[E327 17:04:16.986381360 ProcessGroupNCCL.cpp:1176] [PG 0 Rank 0] ",
      "\t - [0] Timeout at collective: ALLREDUCE, #315",
      "\t - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:",
      "\t   - [7] joined but didn't finish collective #183 (count from 1)",
      "\t     [7] finished collective #182, but didn't join collective #183 (count from 1)",
      "\t - Snapshot of ranks' latest states:",
      "\t   #183 started ranks:",
      "\t     [0, 1, 2, 3, 4, 5, 6] started ALLREDUCE",
      "\t   #182 finished ranks:",
      "\t     [7] finished ALLREDUCE",
  });
  EXPECT_EQ(r.counts.blank, 1);
  EXPECT_EQ(r.counts.recognized, 9) << unparsed_texts(r.rows);
  ASSERT_EQ(r.rows.events.size(), 1u);
  const Event& e = r.rows.events[0];
  EXPECT_EQ(e.kind, EventKind::kDesyncReport);
  EXPECT_EQ(e.line_no, 2);
  EXPECT_EQ(e.end_line, 10);
  // The report's first line has no prefix: its writer is the header line above.
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.pg_rank, 0);
  EXPECT_EQ(e.pg_id, "0");
  const auto& d = std::get<DesyncReport>(e.detail);
  EXPECT_EQ(d.seq, 315);
  EXPECT_EQ(d.op_type, "ALLREDUCE");
  EXPECT_EQ(d.reporter_rank, 0);
  EXPECT_EQ(d.kind, "joined_not_finished");
  EXPECT_EQ(d.lagging_ranks, "[7]");
  EXPECT_NE(e.text.find("[0, 1, 2, 3, 4, 5, 6] started ALLREDUCE"), std::string::npos);
}

TEST(FileRecognizer, TurnsNcclCollLinesIntoCollectiveRowsWithRankFromThePath) {
  discover::PathHints hints;
  hints.rank = 3;
  Recognized r = recognize(
      {
          "node1:4242:4242 [3] NCCL INFO AllReduce: opCount 1a sendbuff 0x7f3c2e000000 recvbuff "
          "0x7f3c30000000 "
          "count 4096 datatype 9 op 0 root 0 comm 0x55d5a8b3c2d0 [nranks=8] stream 0x55d5a8b3e4f0",
          "[2025-04-08 08:39:46] node1:4242:4242 [3] NCCL INFO Broadcast: opCount 1b sendbuff "
          "0x7f3c2e000000 "
          "recvbuff 0x7f3c2e000000 count 10 datatype 4 op 0 root 0 comm 0x55d5a8b3c2d0 [nranks=8] "
          "stream "
          "0x55d5a8b3e4f0",
      },
      hints);
  EXPECT_TRUE(r.rows.events.empty());
  ASSERT_EQ(r.rows.collectives.size(), 2u);
  const CollectiveCall& c = r.rows.collectives[0];
  EXPECT_EQ(c.line_no, 1);
  EXPECT_EQ(c.host, "node1");
  EXPECT_EQ(c.pid, 4242);
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.device, 3);
  EXPECT_EQ(c.op, "AllReduce");
  EXPECT_EQ(c.op_count, 0x1au);
  EXPECT_EQ(c.count, 4096);
  EXPECT_EQ(c.datatype, 9);
  EXPECT_EQ(c.ts_us, 0);
  EXPECT_NE(r.rows.collectives[1].ts_us, 0);
  EXPECT_EQ(r.rows.collectives[1].op_count, 0x1bu);
}

TEST(FileRecognizer, ACollectiveSinkGetsEveryCollLineAsItIsReadAndRowsKeepNone) {
  // The world communicator's init line gives the COLL lines' process its rank.
  std::vector<std::string> lines = {
      "node1:4242:4242 [3] NCCL INFO comm 0x55d5a8b3c2d0 rank 11 nRanks 16 nNodes 2 localRanks 8 "
      "localRank 3 MNNVL 0 - Init COMPLETE",
      "node1:4242:4242 [3] NCCL INFO AllGather: opCount 1c sendbuff 0x7f3c2e000000 recvbuff 0x7f3c30000000 "
      "count 131072 datatype 9 op 0 root 0 comm 0x55d5a8b3c2d0 [nranks=16] stream 0x55d5a8b3e4f0",
      "node1:4242:4242 [3] NCCL INFO ReduceScatter: opCount 1d sendbuff 0x7f3c2e000000 recvbuff "
      "0x7f3c30000000 count 8 datatype 7 op 4 root 0 comm 0x55d5a8b3c2d0 [nranks=16] stream 0x55d5a8b3e4f0",
  };
  Recognized kept = recognize(lines);
  ASSERT_EQ(kept.rows.collectives.size(), 2u);

  frame::Framer framer;
  FileRecognizer recognizer({});
  std::vector<CollectiveCall> sunk;
  recognizer.set_collective_sink([&](const CollectiveLine& c) { sunk.push_back(c.as<std::string>()); });
  for (size_t i = 0; i < lines.size(); ++i) {
    read::PhysicalLine line;
    line.text = lines[i];
    line.line_no = static_cast<int64_t>(i) + 1;
    line.full_bytes = static_cast<int64_t>(lines[i].size());
    recognizer.feed(line, framer.frame(line.text));
    EXPECT_EQ(sunk.size(), i) << "a COLL line reaches the sink when it is fed";
  }
  recognizer.finish();
  Rows rows;
  recognizer.drain(rows, true);
  EXPECT_TRUE(rows.collectives.empty());
  EXPECT_EQ(rows.events.size(), 1u);
  EXPECT_EQ(recognizer.counts().recognized, 3);
  ASSERT_EQ(sunk.size(), 2u);
  for (size_t i = 0; i < sunk.size(); ++i) {
    const CollectiveCall& a = kept.rows.collectives[i];
    const CollectiveCall& b = sunk[i];
    EXPECT_EQ(std::tie(a.line_no, a.host, a.pid, a.rank, a.device, a.comm_rank, a.op, a.op_count, a.count,
                       a.datatype, a.redop, a.root, a.nranks, a.comm),
              std::tie(b.line_no, b.host, b.pid, b.rank, b.device, b.comm_rank, b.op, b.op_count, b.count,
                       b.datatype, b.redop, b.root, b.nranks, b.comm));
  }
  EXPECT_EQ(sunk[0].rank, 11);
  EXPECT_EQ(sunk[0].comm_rank, 11);
  EXPECT_EQ(sunk[1].op, "ReduceScatter");
  EXPECT_EQ(sunk[1].redop, 4);
}

TEST(FileRecognizer, DecodesNcclWarningsAndErrorTraces) {
  Recognized r = recognize({
      "",
      "gpu-a17:59709:59840 [3] transport/net_ib.cc:1034 NCCL WARN NET/IB : Got completion from "
      "peer "
      "10.0.0.2<45074> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid "
      "::ffff:10.1.1.1 "
      "remoteGids::ffff:10.1.1.2",
      "gpu-a17:59709:59840 [3] NCCL INFO transport/net_ib.cc:1246 -> 6",
      "gpu-a17:59709:59840 [3] NCCL INFO init.cc:1234 (initTransportsRank) -> 3",
  });
  EXPECT_EQ(r.counts.blank, 1);
  auto warns = events_of(r.rows, EventKind::kNcclWarn);
  ASSERT_EQ(warns.size(), 1u);
  EXPECT_EQ(warns[0]->host, "gpu-a17");
  EXPECT_EQ(warns[0]->device, 3);
  EXPECT_EQ(warns[0]->severity, 'W');
  const auto& w = std::get<NcclWarning>(warns[0]->detail);
  EXPECT_EQ(w.category, "ib_completion");
  EXPECT_EQ(w.ib_status, 12);
  EXPECT_EQ(w.peer, "10.0.0.2<45074>");
  auto traces = events_of(r.rows, EventKind::kNcclErrorTrace);
  ASSERT_EQ(traces.size(), 2u);
  EXPECT_EQ(std::get<ErrorTrace>(traces[0]->detail).result, 6);
  EXPECT_EQ(std::get<ErrorTrace>(traces[1]->detail).src_file, "init.cc");
  EXPECT_EQ(std::get<ErrorTrace>(traces[1]->detail).result, 3);
}

TEST(FileRecognizer, RecognizesLauncherExitsAndSignals) {
  Recognized r = recognize({
      "W0616 20:34:34.710000 140609446490112 torch/distributed/elastic/multiprocessing/api.py:851] "
      "Sending "
      "process 76627 closing signal SIGTERM",
      "E0616 20:34:35.100000 140609446490112 torch/distributed/elastic/multiprocessing/api.py:826] "
      "failed "
      "(exitcode: -6) local_rank: 0 (pid: 76626) of binary: /usr/bin/python3",
      "srun: error: node-b: task 9: Exited with exit code 1",
      "[2024-05-01 10:05:00,456] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', "
      "'train.py', "
      "'--local_rank=7'] exits with return code = -6",
  });
  EXPECT_EQ(r.counts.recognized, 4) << unparsed_texts(r.rows);
  auto signals = events_of(r.rows, EventKind::kSignalSent);
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(std::get<SignalSent>(signals[0]->detail).pid, 76627);
  auto exits = events_of(r.rows, EventKind::kProcessExit);
  ASSERT_EQ(exits.size(), 3u);
  EXPECT_EQ(exits[0]->local_rank, 0);
  EXPECT_EQ(std::get<ProcessExit>(exits[0]->detail).signal, "SIGABRT");
  EXPECT_EQ(exits[1]->rank, 9);
  EXPECT_EQ(exits[1]->host, "node-b");
  // DeepSpeed names the last-spawned rank's command, not the failed one's.
  EXPECT_EQ(exits[2]->local_rank, -1);
  EXPECT_EQ(std::get<ProcessExit>(exits[2]->detail).exit_code, -6);
}

TEST(FileRecognizer, KeepsUnknownLinesWithTheirAttribution) {
  Recognized r = recognize({
      "[default2]:[rank10]:epoch 3 step 100 loss 2.31",
      "node1:4242:4242 [0] NCCL INFO cudaDriverVersion 12040",
  });
  ASSERT_EQ(r.rows.unparsed.size(), 2u);
  const UnparsedLine& a = r.rows.unparsed[0];
  EXPECT_EQ(a.line_no, 1);
  EXPECT_EQ(a.byte_offset, 0);
  EXPECT_EQ(a.rank, 10);
  EXPECT_EQ(a.local_rank, 2);
  EXPECT_EQ(a.producer, "plain");
  EXPECT_EQ(a.text, "epoch 3 step 100 loss 2.31");
  const UnparsedLine& b = r.rows.unparsed[1];
  EXPECT_EQ(b.byte_offset, 47);
  EXPECT_EQ(b.host, "node1");
  EXPECT_EQ(b.pid, 4242);
  EXPECT_EQ(b.producer, "nccl");
  EXPECT_EQ(b.text, "cudaDriverVersion 12040");
}

TEST(FileRecognizer, HoldsBackRecentEventsUntilTheFinalDrain) {
  frame::Framer framer;
  FileRecognizer recognizer({});
  std::string lines[] = {
      "node1:4242:4242 [0] NCCL INFO Using network IB",
      "hello",
  };
  for (int i = 0; i < 2; ++i) {
    read::PhysicalLine line;
    line.text = lines[i];
    line.line_no = i + 1;
    recognizer.feed(line, framer.frame(line.text));
  }
  Rows early;
  recognizer.drain(early, /*final=*/false);
  EXPECT_TRUE(early.events.empty());     // a later line may still continue it
  EXPECT_EQ(early.unparsed.size(), 1u);  // unparsed lines are final at once
  recognizer.finish();
  Rows rest;
  recognizer.drain(rest, /*final=*/true);
  ASSERT_EQ(rest.events.size(), 1u);
  EXPECT_EQ(rest.events[0].kind, EventKind::kNcclNetwork);
  EXPECT_TRUE(rest.unparsed.empty());
}

}  // namespace
}  // namespace ncclpm::recognize

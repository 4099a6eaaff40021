// bench/gen/story.cc
#include "gen/story.h"

#include <algorithm>
#include <map>

#include "gen/nccl_lines.h"
#include "gen/torch_lines.h"

namespace ncclpm::bench {
namespace {

constexpr uint64_t kPhaseSalt = 0x5707;

// "0,2-7,9" (srun's task lists).
std::string ranges(const std::vector<int>& v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(v[i]);
    if (j > i) out += '-' + std::to_string(v[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

Story::Story(const Job& job, Launcher launcher, bool nccl_own_file)
    : job_(job), launcher_(launcher), nccl_own_file_(nccl_own_file) {}

Story::Fate Story::fate(int rank) const {
  const Job& j = job_;
  const RankInfo& r = j.ranks[static_cast<size_t>(rank)];
  // torchrun tears down a node's other workers after the first failure;
  // srun --kill-on-bad-exit=1 tears down the whole step.
  auto killed_by_launcher = [&](int culprit_host) {
    return launcher_ == Launcher::kSrun || r.host == culprit_host;
  };
  switch (j.opt.fail) {
    case Failure::kNone:
      return Fate::kFinished;
    case Failure::kSaveStall:
      return rank == 0 ? Fate::kSaving : Fate::kTimeout;
    case Failure::kHang:
      return Fate::kTimeout;
    case Failure::kOom:
      if (rank == j.culprit) return Fate::kOom;
      return killed_by_launcher(j.ranks[static_cast<size_t>(j.culprit)].host) ? Fate::kKilled
                                                                              : Fate::kTimeout;
    case Failure::kIb: {
      if (rank == j.culprit) return Fate::kIbError;
      if (rank == j.ib_peer) return Fate::kIbFlush;
      int ph = j.ranks[static_cast<size_t>(j.ib_peer)].host;
      if (launcher_ == Launcher::kTorchrun && r.host == ph) return Fate::kKilled;
      return killed_by_launcher(j.ranks[static_cast<size_t>(j.culprit)].host) ? Fate::kKilled
                                                                              : Fate::kTimeout;
    }
  }
  return Fate::kFinished;
}

Time Story::exit_time(int rank) const {
  Rng rng = Rng::for_part(job_.opt.seed, 0xe817, static_cast<uint64_t>(rank));
  switch (fate(rank)) {
    case Fate::kTimeout:
      return job_.t_watchdog.plus_ms(1300 + rng.range(0, 40));
    case Fate::kOom:
      return job_.t_hang.plus_ms(200);
    case Fate::kIbError:
      return job_.t_hang.plus_ms(900);
    case Fate::kIbFlush:
      return job_.t_hang.plus_ms(1400);
    default:
      break;
  }
  return job_.t_watchdog;
}

int Story::exit_code(int rank) const { return fate(rank) == Fate::kOom ? 1 : -6; }

void Story::emit(int rank, int phase, RankText& t) const {
  const RankInfo& r = job_.ranks[static_cast<size_t>(rank)];
  Rng rng = Rng::for_part(job_.opt.seed, kPhaseSalt, static_cast<uint64_t>(rank),
                          static_cast<uint64_t>(phase));
  if (phase == 0)
    startup(r, t, rng);
  else if (phase <= job_.opt.steps)
    step(r, phase, t, rng);
  else
    ending(r, t, rng);
}

void Story::startup(const RankInfo& r, RankText& t, Rng& rng) const {
  const Job& j = job_;
  line(
      t.err, j.site,
      "/transformers/training_args.py:1545: FutureWarning: `evaluation_strategy` is deprecated and "
      "will be removed in version 4.46 of \xf0\x9f\xa4\x97 Transformers. Use `eval_strategy` "
      "instead");
  line(t.err, "  warnings.warn(");
  std::string when;
  put_date_time(when, j.t0.plus_s(25 + static_cast<double>(rng.range(0, 1))));
  if (r.rank == 0) {
    line(t.out, when,
         " - INFO - __main__ - Model parameters "
         "ModelConfig(model_name_or_path='meta-llama/Meta-Llama-3-8B', "
         "torch_dtype='bfloat16', attn_implementation='flash_attention_2', use_peft=False)");
    line(t.out, when,
         " - INFO - __main__ - Training/evaluation parameters TrainingArguments(output_dir='",
         j.out_dir,
         "', per_device_train_batch_size=2, gradient_accumulation_steps=1, learning_rate=2e-05, "
         "bf16=True, "
         "fsdp='full_shard auto_wrap', save_steps=",
         j.opt.save_every, ", logging_steps=", j.opt.log_every, ", ddp_timeout=1800, ...)");
  }
  line(t.out, when, " - WARNING - __main__ - Process rank: ", r.rank, ", device: cuda:", r.local,
       ", n_gpu: 1 distributed training: True, 16-bits training: False");
  if (r.rank == 0) {
    Time th = j.t0.plus_s(31.2);
    torch::hf_line(t.err, th, "configuration_utils.py:733",
                   "loading configuration file config.json from cache at /data/hf_cache/hub/"
                   "models--meta-llama--Meta-Llama-3-8B/snapshots/"
                   "8cde5ca8380496c9a6cc7ef3a8b46a0372a1d920/config.json");
    torch::hf_line(
        t.err, th.plus_ms(412), "modeling_utils.py:3641",
        "loading weights file model.safetensors from cache at /data/hf_cache/hub/"
        "models--meta-llama--Meta-Llama-3-8B/snapshots/8cde5ca8380496c9a6cc7ef3a8b46a0372a1d920/"
        "model.safetensors.index.json");
    torch::hf_line(t.err, th.plus_ms(9021), "modeling_utils.py:4507",
                   "All model checkpoint weights were used when initializing LlamaForCausalLM.\n");
  }
  nccl::init_block(nccl_out(t), t.out, j, r, rng, nccl_own_file_);
  if (j.opt.coll) nccl::coll_line(nccl_out(t), j, r, j.barrier, 0, 0);
  if (r.rank == 0) {
    Time tt = j.t_train.plus_ms(-600);
    const std::string total = std::to_string(j.opt.steps);
    torch::hf_line(t.err, tt, "trainer.py:2134", "***** Running training *****");
    torch::hf_line(t.err, tt, "trainer.py:2135", "  Num examples = 2,417,664");
    torch::hf_line(t.err, tt, "trainer.py:2136", "  Num Epochs = 1");
    torch::hf_line(t.err, tt, "trainer.py:2137", "  Instantaneous batch size per device = 2");
    torch::hf_line(t.err, tt, "trainer.py:2142", "  Total optimization steps = " + total);
    torch::hf_line(t.err, tt, "trainer.py:2143",
                   "  Number of trainable parameters = 8,030,261,248");
    torch::tqdm_redraw(t.err, 0, j.opt.steps, 0, 0);
  }
}

void Story::step(const RankInfo& r, int s, RankText& t, Rng& rng) const {
  const Job& j = job_;
  if (j.opt.coll) {
    uint64_t op = j.first_seq_of_step(s) - 1;
    std::string& n = nccl_out(t);
    size_t last = j.step_colls.size() - 1;
    for (size_t i = 0; i < j.step_colls.size(); ++i) {
      nccl::coll_line(n, j, r, j.step_colls[i], s, op++);
      if (i == last && j.is_log_step(s)) nccl::coll_line(n, j, r, j.loss_allreduce, s, op++);
    }
  }
  for (int i = 0; i < j.opt.app_lines; ++i) app_line(r, s, i, t, rng);
  if (r.rank != 0) return;
  double elapsed = static_cast<double>(j.step_time(s).us - j.t_train.us) / 1e6;
  torch::tqdm_redraw(t.err, s, j.opt.steps, elapsed, j.step_s);
  if (j.is_log_step(s)) {
    double frac = static_cast<double>(s) / j.opt.steps;
    line(t.out, "{'loss': ", Fixed{1.92 - 0.6 * frac + rng.unit() * 0.05, 4},
         ", 'grad_norm': ", Fixed{0.3 + rng.unit() * 0.25, 6},
         ", 'learning_rate': ", Fixed{2e-5 * (1 - frac), 9}, ", 'epoch': ", Fixed{frac, 2}, '}');
  }
  if (s % j.opt.save_every == 0 && s < j.opt.steps) {
    // A log line written while tqdm's bar is open is glued to the last redraw.
    Time ts = j.step_time(s);
    std::string ck = j.out_dir + "/checkpoint-" + std::to_string(s);
    torch::hf_line(t.err, ts, "trainer.py:3503", "Saving model checkpoint to " + ck);
    torch::hf_line(t.err, ts.plus_ms(19), "configuration_utils.py:472",
                   "Configuration saved in " + ck + "/config.json");
    torch::hf_line(t.err, ts.plus_ms(41212), "modeling_utils.py:2648",
                   "Model weights saved in " + ck + "/model.safetensors");
  }
}

// What a training loop prints on every rank besides NCCL and PyTorch (most of
// a real console): the i-th line of step `s` cycles through a Megatron-LM
// iteration line, a loss dict, a progress bar ended by a newline and a
// throughput print.
void Story::app_line(const RankInfo& r, int s, int i, RankText& t, Rng& rng) const {
  const Job& j = job_;
  double frac = static_cast<double>(s) / j.opt.steps;
  double loss = 1.92 - 0.6 * frac + rng.unit() * 0.05;
  double step_ms = j.step_s * 1000 * (0.97 + rng.unit() * 0.06);
  switch (i % 4) {
    case 0:
      t.out += " [";
      put_date_time(t.out, j.step_time(s));
      line(t.out, "] iteration ", Pad{s, 8}, '/', Pad{j.opt.steps, 8}, " | consumed samples: ",
           Pad{static_cast<int64_t>(s) * 512, 12}, " | elapsed time per iteration (ms): ", Fixed{step_ms, 1},
           " | learning rate: ", Fixed{2.0 - frac, 6}, "E-05 | global batch size: ", Pad{512, 5},
           " | lm loss: ", Fixed{loss, 6}, "E+00 | loss scale: 1.0 | grad norm: ", Fixed{0.3 + rng.unit() * 0.25, 3},
           " | number of skipped iterations: ", Pad{0, 3}, " | number of nan iterations: ", Pad{0, 3}, " |");
      break;
    case 1:
      line(t.out, "{'loss': ", Fixed{loss, 4}, ", 'grad_norm': ", Fixed{0.3 + rng.unit() * 0.25, 6},
           ", 'learning_rate': ", Fixed{2e-5 * (1 - frac), 9}, ", 'epoch': ", Fixed{frac, 2}, '}');
      break;
    case 2: {
      std::string bar;
      torch::tqdm_redraw(bar, s, j.opt.steps, static_cast<double>(j.step_time(s).us - j.t_train.us) / 1e6,
                         j.step_s);
      bar.erase(0, 1);  // the '\r' of a redraw: this bar prints a line per update
      if (!bar.empty() && bar.back() == ']') bar.pop_back();
      line(t.out, "Epoch 0: ", bar, ", loss=", Fixed{loss, 3}, ", v_num=0]");
      break;
    }
    default:
      line(t.out, "[rank ", r.rank, "] step ", s, " | tokens/s ", Fixed{3400 + rng.unit() * 200, 1}, " | mfu ",
           Fixed{40 + rng.unit() * 3, 1}, "% | mem ", Fixed{61 + rng.unit() * 2, 1}, " GiB");
  }
}

void Story::rank0_finish(RankText& t, Rng& rng, bool clean) const {
  const Job& j = job_;
  t.err += '\n';  // tqdm.close() ends the bar's line
  Time te = j.t_end.plus_s(3.1);
  torch::hf_line(
      t.err, te, "trainer.py:2394",
      "\n\nTraining completed. Do not forget to share your model on huggingface.co/models =)\n\n");
  line(t.out, "{'train_runtime': ", Fixed{static_cast<double>(j.t_end.us - j.t_train.us) / 1e6, 4},
       ", 'train_samples_per_second': ", Fixed{0.8 + rng.unit(), 3},
       ", 'train_steps_per_second': ", Fixed{1.0 / j.step_s, 3},
       ", 'train_loss': ", Fixed{1.5 + rng.unit() * 0.1, 16}, ", 'epoch': 1.0}");
  Time ts = te.plus_s(9.4);
  torch::hf_line(t.err, ts, "trainer.py:3503", "Saving model checkpoint to " + j.out_dir);
  torch::hf_line(t.err, ts.plus_ms(18), "configuration_utils.py:472",
                 "Configuration saved in " + j.out_dir + "/config.json");
  torch::hf_line(t.err, ts.plus_ms(25), "configuration_utils.py:807",
                 "Configuration saved in " + j.out_dir + "/generation_config.json");
  if (clean)
    torch::hf_line(t.err, ts.plus_ms(48731), "modeling_utils.py:2648",
                   "Model weights saved in " + j.out_dir + "/model.safetensors");
}

void Story::ending(const RankInfo& r, RankText& t, Rng& rng) const {
  const Job& j = job_;
  Fate f = fate(r.rank);
  if (f == Fate::kFinished) {
    if (r.rank == 0) rank0_finish(t, rng, true);
    nccl::destroy_line(nccl_out(t), j, r);
    return;
  }
  // The collectives of the unfinished step (or evaluate()) this rank enqueued.
  int step = j.opt.steps + 1;
  size_t upto = static_cast<size_t>(j.hang_index) + 1;
  if (f == Fate::kSaving) upto = 0;
  if (f == Fate::kOom) upto = static_cast<size_t>(j.hang_index);
  if (j.opt.coll) {
    uint64_t op = j.first_seq_of_step(step) - 1;
    for (size_t i = 0; i < upto; ++i)
      nccl::coll_line(nccl_out(t), j, r, j.step_colls[i], step, op++);
  }
  const CollSpec& hung = j.step_colls[static_cast<size_t>(j.hang_index)];
  torch::Work w =
      torch::work_of(j, hung, j.first_seq_of_step(step) + static_cast<uint64_t>(j.hang_index));
  switch (f) {
    case Fate::kSaving:
      rank0_finish(t, rng, false);
      break;
    case Fate::kTimeout: {
      int64_t ran = j.timeout_ms + rng.range(60, 140);
      torch::watchdog_timeout_block(t.err, j, r, w, j.t_hang.plus_ms(ran), ran, rng);
      break;
    }
    case Fate::kOom:
      torch::oom_traceback(t.err, j, r, rng);
      break;
    case Fate::kIbError:
    case Fate::kIbFlush: {
      bool flush = f == Fate::kIbFlush;
      const RankInfo& peer = j.ranks[static_cast<size_t>(flush ? j.culprit : j.ib_peer)];
      Time te = j.t_hang.plus_ms(flush ? 520 : 0);
      std::string warn = nccl::ib_completion_text(j, r, peer, flush ? 5 : 12, rng);
      nccl::ib_completion_error(nccl_out(t), j, r, warn, te);
      torch::async_error_block(t.err, j, r, w, te.plus_ms(310), warn, rng);
      break;
    }
    case Fate::kKilled:
    case Fate::kFinished:
      break;
  }
}

void Story::agent_start(int h, std::string& s) const {
  torch::agent_banner(s, job_, job_.hosts[static_cast<size_t>(h)]);
}

void Story::agent_end(int h, std::string& s) const {
  if (job_.opt.fail == Failure::kNone) return;
  std::vector<torch::WorkerExit> failures;
  std::vector<int> sigterm;
  int first = h * job_.opt.ranks_per_host,
      last = std::min(job_.rank_count(), first + job_.opt.ranks_per_host);
  for (int rank = first; rank < last; ++rank) {
    const RankInfo& r = job_.ranks[static_cast<size_t>(rank)];
    Fate f = fate(rank);
    if (f == Fate::kSaving || f == Fate::kKilled) {
      sigterm.push_back(r.pid);
      continue;
    }
    std::string tb =
        f == Fate::kOom
            ? "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
            : torch::signal_traceback(6, r.pid);
    failures.push_back(
        torch::WorkerExit{rank, r.local, r.pid, exit_code(rank), exit_time(rank), tb});
  }
  if (failures.empty()) return;
  // The summary lists the failures by local rank, the earliest one first as
  // the root cause.
  auto root = std::min_element(failures.begin(), failures.end(),
                               [](const auto& a, const auto& b) { return a.time.us < b.time.us; });
  std::rotate(failures.begin(), root, root + 1);
  torch::agent_failure(s, job_, job_.hosts[static_cast<size_t>(h)], failures, sigterm,
                       failures.front().time.plus_ms(80));
}

void Story::slurm_header(std::string& s) const {
  const Job& j = job_;
  std::string start;
  put_date_time(start, j.t0);
  line(s, "Job ", j.slurm_job, " on ", j.hosts.front().name, ",...,", j.hosts.back().name, " (",
       j.rank_count(), " tasks, ", j.opt.ranks_per_host, " per node) started ", start);
  line(s, "MASTER_ADDR=", j.hosts.front().name, " MASTER_PORT=29500 WORLD_SIZE=", j.rank_count());
  line(s, "NCCL_DEBUG=INFO",
       j.opt.coll ? (j.nccl_new ? " NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP,ENV,COLL"
                                : " NCCL_DEBUG_SUBSYS=INIT,COLL")
                  : "",
       " NCCL_SOCKET_IFNAME=eth0 NCCL_IB_HCA=mlx5",
       nccl_own_file_ ? " NCCL_DEBUG_FILE=logs/nccl/nccl.%h.%p.log" : "");
  line(s, "+ srun ", nccl_own_file_ ? "--output=logs/train-rank%t.log" : "--label",
       " --kill-on-bad-exit=1 python -u ", j.script, " --config configs/llama3-8b-fsdp.yaml");
}

void Story::srun_end(std::string& s) const {
  if (job_.opt.fail == Failure::kNone) return;
  // Failed tasks per host and exit status, in the order they ended.
  std::map<std::pair<int64_t, int>, std::vector<int>> failed;  // (time, host) -> tasks
  std::map<int, std::vector<int>> killed;
  for (int rank = 0; rank < job_.rank_count(); ++rank) {
    int h = job_.ranks[static_cast<size_t>(rank)].host;
    Fate f = fate(rank);
    if (f == Fate::kSaving || f == Fate::kKilled)
      killed[h].push_back(rank);
    else
      failed[{f == Fate::kTimeout ? job_.t_watchdog.us : exit_time(rank).us, h}].push_back(rank);
  }
  for (const auto& [key, tasks] : failed) {
    const std::string& host = job_.hosts[static_cast<size_t>(key.second)].name;
    bool oom = tasks.size() == 1 && fate(tasks.front()) == Fate::kOom;
    line(s, "srun: error: ", host, ": task", tasks.size() > 1 ? "s " : " ", ranges(tasks), ": ",
         oom ? "Exited with exit code 1" : "Aborted (core dumped)");
  }
  if (killed.empty()) return;
  Time first = job_.t_watchdog;
  for (const auto& [key, tasks] : failed) first = Time{std::min(first.us, key.first)};
  std::string when;
  put_date_time(when, first.plus_ms(2100), 'T');
  line(s, "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.");
  line(s, "slurmstepd: error: *** STEP ", job_.slurm_job, ".0 ON ", job_.hosts.front().name,
       " CANCELLED AT ", when, " ***");
  for (const auto& [h, tasks] : killed)
    line(s, "srun: error: ", job_.hosts[static_cast<size_t>(h)].name, ": task",
         tasks.size() > 1 ? "s " : " ", ranges(tasks), ": Terminated");
}

}  // namespace ncclpm::bench

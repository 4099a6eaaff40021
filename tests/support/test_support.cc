// tests/support/test_support.cc
#include "support/test_support.h"

#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "ncclpm/ingest/ingest.h"
#include "ncclpm/store/schema.h"

namespace fs = std::filesystem;

namespace ncclpm::testing {

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path p = fs::temp_directory_path() / ("ncclpm-test-" + std::to_string(rd()));
    if (fs::create_directory(p)) {
      path_ = p;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

void write_file(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << content;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_gzip(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, content.data(), static_cast<unsigned>(content.size()));
  gzclose(f);
}

int start_ncclpm(const std::vector<std::string>& args, const fs::path& out, const fs::path& err) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    std::string bin = NCCLPM_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(127);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

RunResult run_ncclpm(const std::vector<std::string>& args) {
  TempDir io;
  fs::path out = io / "out", err = io / "err";
  pid_t pid = start_ncclpm(args, out, err);
  int status = 0;
  waitpid(pid, &status, 0);
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

std::string watchdog_line(int rank, int seq, const std::string& clock) {
  std::string r = std::to_string(rank);
  return "[rank" + r + "]:[E709 " + clock + " ProcessGroupNCCL.cpp:632] [Rank " + r +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" + std::to_string(seq) +
         ", OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) ran for 600102 milliseconds "
         "before timing out.\n";
}

const std::string kWatchdogLine = watchdog_line(1, 7);

// Ingests the files (name -> text) as one job and diagnoses it; a step that
// fails is a test failure and an empty diagnosis, never a crash.
fs::path ingest_files(const TempDir& dir, const std::map<std::string, std::string>& files) {
  for (const auto& [name, text] : files) write_file(dir / ("logs/" + name), text);
  ingest::Options o;
  o.paths = {dir / "logs"};
  o.db_path = dir / "j.db";
  auto ingested = ingest::run(o);
  if (!ingested) throw std::runtime_error("ingest: " + ingested.error().to_string());
  return o.db_path;
}

diagnose::Diagnosis diagnose_files(const std::map<std::string, std::string>& files) {
  TempDir t;
  auto db = store::open_for_update(ingest_files(t, files));
  if (!db) throw std::runtime_error("database: " + db.error().to_string());
  auto rules = rules::RuleSet::load({rules::RuleSet::default_dir()});
  if (!rules) throw std::runtime_error("rules: " + rules.error().front().to_string());
  auto job = diagnose::resolve_job(*db, "", nullptr);
  if (!job) throw std::runtime_error("job: " + job.error().to_string());
  auto d = diagnose::run(*db, *job, *rules);
  if (!d) throw std::runtime_error("diagnose: " + d.error().to_string());
  return std::move(d).value();
}

fs::path source_path(const std::string& rel) { return fs::path(NCCLPM_SOURCE_DIR) / rel; }

}  // namespace ncclpm::testing

// PTX -> cubin through ptxas, run as a child process on temporary files.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "codegen/codegen.h"

extern char** environ;

namespace argus::codegen {

namespace {

// A temporary directory that removes itself.
class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / "argus-ptxas-XXXXXX").string();
    if (mkdtemp(pattern.data())) path_ = pattern;
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  bool ok() const { return !path_.empty(); }
  std::string file(const char* name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

bool writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// ptxas's output without blank lines; the first line becomes the message, the
// rest (up to a handful) notes.
std::vector<std::string> meaningfulLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    // -v's reports (and their indented continuations) are not the failure.
    if (line.rfind("ptxas info", 0) == 0 || line.rfind("    ", 0) == 0) continue;
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// The number just before `unit` in `line` ("168 registers" -> 168), if any.
std::optional<int64_t> countBefore(std::string_view line, std::string_view unit) {
  size_t at = line.find(unit);
  if (at == std::string_view::npos) return std::nullopt;
  size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  if (begin == end || end - begin > 12) return std::nullopt;
  int64_t value = 0;
  for (size_t i = begin; i < end; ++i) value = value * 10 + (line[i] - '0');
  return value;
}

// The name quoted in "... for 'NAME'" (the first pair of single quotes).
std::string quoted(std::string_view line) {
  size_t open = line.find('\'');
  if (open == std::string_view::npos) return {};
  size_t close = line.find('\'', open + 1);
  if (close == std::string_view::npos) return {};
  return std::string(line.substr(open + 1, close - open - 1));
}

}  // namespace

std::vector<KernelResources> parsePtxasReport(std::string_view report) {
  // Per kernel, ptxas writes (CUDA 12 and 13):
  //   ptxas info    : Compiling entry function 'NAME' for 'sm_90a'
  //   ptxas info    : Function properties for NAME
  //       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 168 registers, used 1 barriers, ...
  // "Function properties" also appear for device functions, which have no
  // "Compiling entry function" line and are not kernels.
  std::vector<KernelResources> kernels;
  KernelResources* current = nullptr;
  size_t start = 0;
  while (start < report.size()) {
    size_t newline = report.find('\n', start);
    std::string_view line = report.substr(start, newline == std::string_view::npos ? std::string_view::npos
                                                                                  : newline - start);
    start = newline == std::string_view::npos ? report.size() : newline + 1;
    if (line.find("Compiling entry function") != std::string_view::npos) {
      kernels.push_back(KernelResources{quoted(line)});
      current = &kernels.back();
    } else if (line.find("Function properties for ") != std::string_view::npos) {
      std::string_view name = line.substr(line.find("Function properties for ") + 24);
      while (!name.empty() && (name.back() == '\r' || name.back() == ' ')) name.remove_suffix(1);
      current = !kernels.empty() && kernels.back().kernel == name ? &kernels.back() : nullptr;
    } else if (current && line.find("bytes stack frame") != std::string_view::npos) {
      current->stackBytes = countBefore(line, "bytes stack frame").value_or(0);
      current->spillStoreBytes = countBefore(line, "bytes spill stores").value_or(0);
      current->spillLoadBytes = countBefore(line, "bytes spill loads").value_or(0);
    } else if (current && line.find("Used ") != std::string_view::npos) {
      current->registers = static_cast<int>(countBefore(line, "registers").value_or(0));
      current = nullptr;
    }
  }
  return kernels;
}

std::optional<std::vector<uint8_t>> assembleCubin(const std::string& ptx, const std::string& arch,
                                                  const std::string& ptxasPath, DiagnosticSink& diags,
                                                  std::vector<KernelResources>* resources,
                                                  const std::function<bool()>& cancelled) {
  if (!isSupportedTarget(arch)) {
    diags.report(DiagId::UnsupportedTarget, {}, {arch});
    return std::nullopt;
  }
  struct stat info {};
  std::string why;
  if (ptxasPath.empty()) why = "no path given";
  else if (stat(ptxasPath.c_str(), &info) != 0) why = std::strerror(errno);
  else if (!S_ISREG(info.st_mode)) why = "not a regular file";
  else if (access(ptxasPath.c_str(), X_OK) != 0) why = "the file is not executable";
  if (!why.empty()) {
    diags.report(DiagId::PtxasNotFound, {}, {ptxasPath, why})
        .notes.push_back("install the CUDA toolkit (ptxas is in /usr/local/cuda/bin) or give the path to ptxas");
    return std::nullopt;
  }
  TempDir dir;
  if (!dir.ok()) {
    diags.report(DiagId::PtxasNotFound, {}, {ptxasPath, "cannot create a temporary directory"});
    return std::nullopt;
  }
  std::string input = dir.file("kernel.ptx"), output = dir.file("kernel.cubin"), log = dir.file("ptxas.log");
  if (!writeFile(input, ptx)) {
    diags.report(DiagId::PtxasNotFound, {}, {ptxasPath, "cannot write the PTX to a temporary file"});
    return std::nullopt;
  }
  std::string archFlag = "-arch=" + arch;
  std::vector<std::string> args = {ptxasPath, archFlag, "-o", output, input};
  if (resources) args.insert(args.begin() + 1, "-v");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  int spawnError = posix_spawn(&pid, ptxasPath.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawnError != 0) {
    diags.report(DiagId::PtxasNotFound, {}, {ptxasPath, std::strerror(spawnError)});
    return std::nullopt;
  }
  int status = 0;
  if (cancelled) {
    // Polled every 2 ms: an editor's next keystroke stops a measurement nobody waits for.
    for (;;) {
      pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid || (done < 0 && errno != EINTR)) break;
      if (cancelled()) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return std::nullopt;
      }
      usleep(2000);
    }
  } else {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  bool succeeded = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!succeeded) {
    std::vector<std::string> lines = meaningfulLines(readText(log));
    std::string first = lines.empty() ? (WIFSIGNALED(status) ? "ptxas was killed by a signal"
                                                             : "ptxas failed without a message")
                                      : lines.front();
    Diagnostic& d = diags.report(DiagId::PtxasFailed, {}, {arch, first});
    for (size_t i = 1; i < lines.size() && i < 8; ++i) d.notes.push_back(lines[i]);
    d.notes.push_back("this is a compiler bug unless the PTX was edited by hand; please report it");
    return std::nullopt;
  }
  std::string cubin = readText(output);
  if (cubin.empty()) {
    diags.report(DiagId::PtxasFailed, {}, {arch, "ptxas produced no cubin"});
    return std::nullopt;
  }
  if (resources) *resources = parsePtxasReport(readText(log));
  return std::vector<uint8_t>(cubin.begin(), cubin.end());
}

}  // namespace argus::codegen

// The argus-agent binary: usage errors (exit 2), help and version, a small
// offline run that writes its report (exit 0), delegation to `memory`.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Result agent(const std::string& args, const std::string& workdir = "") {
  // No LLM or memory from the environment of whoever runs the tests.
  std::string command = "env -u ARGUS_LLM_BASE_URL -u ARGUS_LLM_MODEL -u ARGUS_AGENT_MEMORY " +
                        std::string(ARGUS_BINARY_DIR) + "/argus-agent " + args + " 2>&1";
  if (!workdir.empty()) command = "cd '" + workdir + "' && " + command;
  Result result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string example(const std::string& name) { return std::string(ARGUS_SOURCE_DIR) + "/examples/agent/" + name; }

TEST(AgentCli, HelpAndVersion) {
  Result help = agent("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.output.find("usage: argus-agent run TASK.json"), std::string::npos);
  EXPECT_NE(help.output.find("--no-gpu"), std::string::npos);
  Result runHelp = agent("run --help");
  EXPECT_EQ(runHelp.status, 0);
  Result version = agent("--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.output.rfind("argus-agent ", 0), 0u) << version.output;
}

TEST(AgentCli, UsageErrorsExitTwoAndSayWhat) {
  struct Case {
    std::string args, says;
  };
  for (const Case& c : std::vector<Case>{
           {"", "no command"},
           {"optimize x.json", "unknown command 'optimize'"},
           {"run", "needs a task file"},
           {"run a.json b.json", "one task file at a time"},
           {"run a.json --bogus", "unknown option '--bogus'"},
           {"run a.json --budget", "--budget needs"},
           {"run a.json --budget zero", "--budget expects a whole number"},
           {"run a.json --budget 0", "--budget expects a whole number"},
           {"run a.json --seed -3", "--seed expects"},
           {"run a.json --out", "--out needs a path"},
           {"run a.json --llm c.json --no-llm", "contradict"},
       }) {
    Result r = agent(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find("argus-agent --help"), std::string::npos) << c.args;
  }
}

TEST(AgentCli, UnreadableInputsExitTwo) {
  Result missing = agent("run /nonexistent/task.json --memory :memory:");
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_NE(missing.output.find("/nonexistent/task.json"), std::string::npos) << missing.output;
  Result badLlm = agent("run " + example("gemm_small.task.json") + " --memory :memory: --llm /nonexistent/llm.json");
  EXPECT_EQ(badLlm.status, 2) << badLlm.output;
  EXPECT_NE(badLlm.output.find("/nonexistent/llm.json"), std::string::npos) << badLlm.output;
}

TEST(AgentCli, OfflineRunWritesTheReportAndRemembers) {
  fs::path dir = fs::temp_directory_path() / ("argus_agent_cli_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Result run = agent("run " + example("gemm_small.task.json") +
                         " --no-gpu --budget 3 --seed 5 --memory mem.db --out out",
                     dir.string());
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("#0 baseline"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("#2 "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("report in out/report.md"), std::string::npos) << run.output;
  for (const char* name : {"report.md", "report.json", "speed.png", "best.ag"})
    EXPECT_TRUE(fs::exists(dir / "out" / name)) << name;

  Result list = agent("memory list --db mem.db", dir.string());
  EXPECT_EQ(list.status, 0) << list.output;
  EXPECT_NE(list.output.find("baseline"), std::string::npos) << list.output;

  Result quiet = agent("run " + example("gemm_small.task.json") +
                           " --no-gpu --budget 1 --memory :memory: --out out2 --quiet",
                       dir.string());
  EXPECT_EQ(quiet.status, 0) << quiet.output;
  EXPECT_EQ(quiet.output.find("#0 baseline"), std::string::npos) << quiet.output;
  fs::remove_all(dir);
}

TEST(AgentCli, NothingValidExitsOne) {
  fs::path dir = fs::temp_directory_path() / ("argus_agent_cli_bad_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream kernel(dir / "broken.ag");
    kernel << "@kernel(grid=(1,))\ndef broken(A: Tensor[f32, (N,)]):\n    x = undefined_name + 1\n";
    std::ofstream task(dir / "broken.task.json");
    task << R"({"name": "broken", "kernel": "broken.ag", "validate": [{"N": 8}], "measure": {"N": 64},
               "budget": {"candidates": 2}})";
  }
  Result run = agent("run broken.task.json --no-gpu --memory :memory: --out out", dir.string());
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("no valid candidate"), std::string::npos) << run.output;
  EXPECT_TRUE(fs::exists(dir / "out" / "report.md"));
  fs::remove_all(dir);
}

}  // namespace

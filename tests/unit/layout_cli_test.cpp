// `argusc layout`: exit codes and output of the calculator.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace {

struct CliRun {
  int status = -1;
  std::string output;  // stdout and stderr
};

CliRun runLayout(const std::string& arguments) {
  std::string command = std::string(ARGUS_BINARY_DIR) + "/argusc layout " + arguments + " 2>&1";
  CliRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return run;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.output.append(buffer.data(), n);
  int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(LayoutCli, PrintsNotationAndTable) {
  CliRun run = runLayout("'(4,2):(1,4)'");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output.rfind("(4,2):(1,4)\n", 0), 0u) << run.output;
  EXPECT_NE(run.output.find(" 3  | 3 | 7 |"), std::string::npos) << run.output;
}

TEST(LayoutCli, DrawsTheCompilersRegisterLayouts) {
  // The IR's wgmma accumulator is the ISA's fragment (CuTe's SM90 64xN C layout).
  CliRun run = runLayout("--no-picture '#wgmma<[64, 64], warpgroups=1>'");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output, "#wgmma<[64, 64], warpgroups=1> over 4 warps: 128 threads x 32 values\n"
                        "((4,8,4),(2,2,8)):((128,1,16),(64,8,512))\n");
  run = runLayout("--no-picture '#mma<[16, 8], warps=[1, 1]>'");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("((4,8),(2,2)):((32,1),(16,8))"), std::string::npos) << run.output;
  run = runLayout("'#blocked<[8, 8]>' --warps=1");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find(" 0  |  T0V0 |  T1V0 |"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find(" 4  |  T0V1 |  T1V1 |"), std::string::npos) << run.output;
}

TEST(LayoutCli, RegisterLayoutErrorsNameTheProblem) {
  CliRun run = runLayout("'#mma<[40, 64], warps=[2, 2]>'");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("rows a multiple of 32"), std::string::npos) << run.output;
  run = runLayout("'#mma<[64, 64], warps=[2]>'");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("column 25: warps=[M, N] takes two numbers"), std::string::npos) << run.output;
  run = runLayout("'#blocked<[4611686018427387904, 4]>'");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("at most 2^31 elements"), std::string::npos) << run.output;
  run = runLayout("--warps=99 '#blocked<[64]>'");
  EXPECT_EQ(run.status, 2);
  run = runLayout("--warps=4 '(4,2):(1,4)'");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.output.find("--warps applies to a register layout"), std::string::npos) << run.output;
}

TEST(LayoutCli, EvaluatesAlgebra) {
  CliRun run = runLayout("--no-picture 'logical_product((2,2):(1,2), 3:1)'");
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.output, "((2,2),3):((1,2),4)\n");
  run = runLayout("'complement(4:2, 24)'");
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.output.rfind("(2,3):(1,8)\n", 0), 0u) << run.output;
  run = runLayout("'size((2,(3,4)):(1,(2,6)))'");
  EXPECT_EQ(run.output, "24\n");
}

TEST(LayoutCli, DrawsThreadValueLayouts) {
  CliRun run = runLayout("'mma_m16n8k16_a(bf16)'");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("T0V0"), std::string::npos);
  EXPECT_NE(run.output.find(" 8  |  T0V2 |  T0V3 |"), std::string::npos) << run.output;
}

TEST(LayoutCli, ErrorsHaveCaretsAndExitCodes) {
  CliRun run = runLayout("'composition((4,4):(1,10), 6:1)'");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("shape divisibility"), std::string::npos) << run.output;
  run = runLayout("'(2,3):(1,2'");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("  (2,3):(1,2\n            ^"), std::string::npos) << run.output;
  EXPECT_EQ(runLayout("").status, 2);
  EXPECT_EQ(runLayout("'8:1' '4:1'").status, 2);
  EXPECT_EQ(runLayout("--bogus '8:1'").status, 2);
  EXPECT_EQ(runLayout("--help").status, 0);
}

}  // namespace

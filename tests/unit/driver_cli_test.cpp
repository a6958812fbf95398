// argusc as a user runs it: exit codes, outputs, and one clear diagnostic for
// every kind of bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>

namespace fs = std::filesystem;

namespace {

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr together
  std::string out;     // stdout only
};

Result runArgusc(const std::string& arguments, bool separateStderr = false) {
  // ctest runs the cases of this file in parallel processes: one file each.
  std::string errFile = (fs::temp_directory_path() /
                         ("argusc_cli_stderr_" + std::to_string(getpid()) + ".txt")).string();
  std::string cmd = std::string(ARGUS_BINARY_DIR) + "/argusc " + arguments +
                    (separateStderr ? " 2>" + errFile : " 2>&1");
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, n);
  int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.output = r.out;
  if (separateStderr) {
    std::ifstream in(errFile);
    r.output = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return r;
}

std::string example(const std::string& name) {
  return std::string(ARGUS_SOURCE_DIR) + "/examples/" + name;
}

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("argusc_cli_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir / name;
}

void writeFile(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

TEST(Cli, VersionAndHelp) {
  Result v = runArgusc("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.output.find("argusc version"), std::string::npos);
  Result h = runArgusc("--help");
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.output.find("--emit=KIND"), std::string::npos);
}

TEST(Cli, BadUsageExitsWithTwo) {
  EXPECT_EQ(runArgusc("").status, 2);
  EXPECT_EQ(runArgusc("--frobnicate " + example("vadd.ag")).status, 2);
  EXPECT_EQ(runArgusc("--emit=exe " + example("vadd.ag")).status, 2);
  EXPECT_EQ(runArgusc("--arch=sm_70 " + example("vadd.ag")).status, 2);
  EXPECT_EQ(runArgusc("--diagnostics-format=xml " + example("vadd.ag")).status, 2);
  EXPECT_EQ(runArgusc("-o").status, 2);
  Result two = runArgusc(example("vadd.ag") + " " + example("gemm.ag"));
  EXPECT_EQ(two.status, 2);
  EXPECT_NE(two.output.find("one input file"), std::string::npos);
}

TEST(Cli, TheSourcesArchLineIsTheDefaultArchitecture) {
  // examples/gemm_persistent.ag says '# arch: sm_90a': it compiles without --arch, and
  // --arch still overrides the line (sm_90 has no wgmma: AG5020).
  fs::path out = scratch("persistent.ptx");
  Result r = runArgusc(example("gemm_persistent.ag") + " -o " + out.string());
  EXPECT_EQ(r.status, 0) << r.output;
  std::ifstream in(out);
  std::string ptx((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(ptx.find(".target sm_90a"), std::string::npos);
  Result overridden = runArgusc("--arch=sm_90 " + example("gemm_persistent.ag") + " -o " + out.string());
  EXPECT_EQ(overridden.status, 1);
  EXPECT_NE(overridden.output.find("AG5020"), std::string::npos) << overridden.output;
  // A line naming an architecture argusc does not know is not an option: the default stays,
  // and warning AG1015 says so (a typo would otherwise compile for sm_90 without a word).
  fs::path odd = scratch("odd_arch.ag");
  writeFile(odd, "# arch: sm_70\n" + std::string(std::istreambuf_iterator<char>(std::ifstream(example("vadd.ag")).rdbuf()), {}));
  Result kept = runArgusc(odd.string() + " -o " + scratch("odd.ptx").string());
  EXPECT_EQ(kept.status, 0) << kept.output;
  EXPECT_NE(kept.output.find("odd_arch.ag:1:9: warning[AG1015]: 'sm_70' is not a target argusc knows"), std::string::npos)
      << kept.output;
  EXPECT_NE(kept.output.find("compiles for sm_90"), std::string::npos) << kept.output;
}

TEST(Cli, OptRunsNamedPassesAndReadsItsOwnOutput) {
  Result list = runArgusc("opt --list-passes", true);
  EXPECT_EQ(list.status, 0);
  EXPECT_EQ(list.out.find("dot-layouts"), 0u) << list.out;
  EXPECT_LT(list.out.find("vector-layouts"), list.out.find("pipelining")) << "the compiler's order";

  // Only dot-layouts: the pipelined loop is still a loop with `stages 3`.
  Result before = runArgusc("opt --pass=dot-layouts " + example("gemm_pipelined.ag"), true);
  ASSERT_EQ(before.status, 0) << before.output;
  EXPECT_NE(before.out.find("stages 3"), std::string::npos) << before.out;
  EXPECT_EQ(before.out.find("wait_group"), std::string::npos);

  // That text, fed back with --pass=pipelining, gives what the compiler's passes give.
  fs::path ir = scratch("gemm_pipelined.ir");
  writeFile(ir, before.out);
  Result after = runArgusc("opt --pass=pipelining --print-after=pipelining " + ir.string(), true);
  ASSERT_EQ(after.status, 0) << after.output;
  EXPECT_EQ(after.out.rfind("// after pipelining\n", 0), 0u) << after.out;
  EXPECT_NE(after.out.find("wait_group 1"), std::string::npos) << after.out;
  Result compiler = runArgusc("--emit=ir -o - " + example("gemm_pipelined.ag"), true);
  auto withoutLocations = [](std::string text) {
    std::string out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (size_t at = line.find("  // "); at != std::string::npos) line.resize(at);
      out += line + "\n";
    }
    return out;
  };
  EXPECT_EQ("// after pipelining\n" + withoutLocations(compiler.out), after.out);

  // IR text is recognized by its first line, whatever the file is called.
  fs::path txt = scratch("gemm_pipelined.txt");
  writeFile(txt, "// saved from argusc opt\n" + before.out);
  Result named = runArgusc("opt --pass=pipelining " + txt.string(), true);
  EXPECT_EQ(named.status, 0) << named.output;
  EXPECT_NE(named.out.find("wait_group 1"), std::string::npos) << named.out;

  EXPECT_EQ(runArgusc("opt --pass=inline " + example("vadd.ag")).status, 2);
  Result unknown = runArgusc("opt --pass=inline " + example("vadd.ag"), true);
  EXPECT_NE(unknown.output.find("unknown pass 'inline' (the passes: dot-layouts, vector-layouts, clusters, pipelining)"),
            std::string::npos) << unknown.output;
  fs::path broken = scratch("broken.ir");
  writeFile(broken, "kernel @k(%N.0: i32 size)\n    grid (1, 1, 1) warps 4\n{\n  %1 = frobnicate : i32\n}\n");
  Result bad = runArgusc("opt " + broken.string(), true);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.output.find("line 4, column 8: unknown op 'frobnicate'"), std::string::npos) << bad.output;
}

TEST(Cli, CompilesToPtxFile) {
  fs::path out = scratch("vadd.ptx");
  fs::remove(out);
  Result r = runArgusc(example("vadd.ag") + " -o " + out.string());
  EXPECT_EQ(r.status, 0) << r.output;
  ASSERT_TRUE(fs::exists(out));
  std::ifstream in(out);
  std::string ptx((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(ptx.find(".entry vadd"), std::string::npos);
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
}

TEST(Cli, DefineOverridesConst) {
  Result r = runArgusc(example("gemm.ag") + " -D BM=32 -DBN=32 --emit=ir -o -");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("BM = 32"), std::string::npos) << r.output;
}

TEST(Cli, EmitsEveryStage) {
  for (const char* kind : {"tokens", "ast", "ir", "llvm"}) {
    Result r = runArgusc(std::string("--emit=") + kind + " " + example("vadd.ag"));
    EXPECT_EQ(r.status, 0) << kind << ": " << r.output;
    EXPECT_FALSE(r.output.empty()) << kind;
  }
  if (fs::exists("/usr/local/cuda/bin/ptxas")) {
    fs::path out = scratch("vadd.cubin");
    Result r = runArgusc("--emit=cubin " + example("vadd.ag") + " -o " + out.string());
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_GT(fs::file_size(out), 0u);
  }
}

TEST(Cli, MissingFileIsOneDiagnostic) {
  Result r = runArgusc("/nonexistent/kernel.ag");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("error[AG0001]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("No such file or directory"), std::string::npos) << r.output;
}

TEST(Cli, DirectoryIsOneDiagnostic) {
  Result r = runArgusc(fs::temp_directory_path().string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("error[AG0002]"), std::string::npos) << r.output;
}

TEST(Cli, BinaryFileIsOneDiagnostic) {
  fs::path p = scratch("binary.ag");
  writeFile(p, std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10));
  Result r = runArgusc(p.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("error[AG0003]"), std::string::npos) << r.output;
}

TEST(Cli, InvalidUtf8IsOneDiagnostic) {
  fs::path p = scratch("latin1.ag");
  writeFile(p, "# caf\xe9\n@kernel(grid=(1,))\ndef k():\n    pass\n");
  Result r = runArgusc(p.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("error[AG0004]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("offset 5"), std::string::npos) << r.output;
}

TEST(Cli, BrokenFileShowsClangStyleText) {
  Result r = runArgusc(example("broken/typo.ag") + " --color=never -o " + scratch("typo.ptx").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("typo.ag:7:9: error[AG3001]: unknown name 'laod'; did you mean 'load'?"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("^~~~"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("\x1b["), std::string::npos) << "no colour unless asked";
  EXPECT_FALSE(fs::exists(scratch("typo.ptx"))) << "no output for a broken program";
}

TEST(Cli, JsonDiagnosticsAreLspShaped) {
  Result r = runArgusc(example("broken/typo.ag") + " --diagnostics-format=json -o -", true);
  EXPECT_EQ(r.status, 1);
  nlohmann::json doc = nlohmann::json::parse(r.output);
  ASSERT_TRUE(doc.contains("diagnostics")) << r.output;
  bool sawTypo = false;
  for (const auto& d : doc["diagnostics"]) {
    EXPECT_TRUE(d.contains("range"));
    EXPECT_EQ(d["source"], "argus");
    if (d["code"] == "AG3001") {
      sawTypo = true;
      EXPECT_EQ(d["range"]["start"]["line"], 6);
      EXPECT_EQ(d["range"]["start"]["character"], 8);
      EXPECT_EQ(d["data"]["fixits"][0]["newText"], "load");
    }
  }
  EXPECT_TRUE(sawTypo) << r.output;
}

TEST(Cli, SarifDiagnostics) {
  Result r = runArgusc(example("broken/typo.ag") + " --diagnostics-format=sarif -o -", true);
  EXPECT_EQ(r.status, 1);
  nlohmann::json doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc["version"], "2.1.0");
  ASSERT_FALSE(doc["runs"][0]["results"].empty());
  EXPECT_EQ(doc["runs"][0]["tool"]["driver"]["name"], "argusc");
}

TEST(Cli, CleanFileInJsonModePrintsAnEmptyList) {
  Result r = runArgusc(example("vadd.ag") + " --diagnostics-format=json -o " + scratch("v.ptx").string(), true);
  EXPECT_EQ(r.status, 0);
  nlohmann::json doc = nlohmann::json::parse(r.output);
  EXPECT_TRUE(doc["diagnostics"].empty());
}

TEST(Cli, WerrorTurnsWarningsIntoErrors) {
  std::string args = example("vadd.ag") + " -D NOT_A_CONST=3 -o " + scratch("w.ptx").string();
  Result warn = runArgusc(args);
  EXPECT_EQ(warn.status, 0) << warn.output;
  EXPECT_NE(warn.output.find("warning[AG0006]"), std::string::npos) << warn.output;
  Result err = runArgusc(args + " -Werror");
  EXPECT_EQ(err.status, 1) << err.output;
  EXPECT_NE(err.output.find("error[AG0006]"), std::string::npos) << err.output;
}

TEST(Cli, RunOnTheCpu) {
  Result r = runArgusc("run --cpu " + example("vadd.ag") + " --size N=1000");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("ran vadd on the CPU interpreter"), std::string::npos) << r.output;
  EXPECT_EQ(runArgusc("run " + example("vadd.ag") + " --size N=10").status, 2);
  Result missing = runArgusc("run --cpu " + example("vadd.ag"));
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.output.find("--size N=VALUE"), std::string::npos) << missing.output;
  Result bad = runArgusc("run --cpu " + example("softmax.ag") + " --size M=2 --size N=5000");
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_NE(bad.output.find("AG6003"), std::string::npos) << bad.output;
  // Tensors past the machine's memory were an uncaught std::length_error (abort).
  Result huge = runArgusc("run --cpu " + example("gemm.ag") +
                          " --size M=2147483647 --size N=2147483647 --size K=2147483647");
  EXPECT_EQ(huge.status, 2) << huge.output;
  EXPECT_NE(huge.output.find("tensor 'A' is too large"), std::string::npos) << huge.output;
}

TEST(Cli, RunRejectsIntegerArgumentsOutOfRange) {
  // --arg k=1e30 for an integer scalar was cast double -> int64 (undefined behaviour).
  fs::path kernel = scratch("int_scalar.ag");
  writeFile(kernel,
            "@kernel(grid=(cdiv(N, BLOCK),), warps=4)\n"
            "def iscale(x: Tensor[i32, (N,)], out: Tensor[i32, (N,)], k: i32, BLOCK: const = 128):\n"
            "    i = program_id(0)\n"
            "    out.tile((BLOCK,))[i] = load(x.tile((BLOCK,))[i]) * k\n");
  EXPECT_EQ(runArgusc("run --cpu " + kernel.string() + " --size N=100 --arg k=3").status, 0);
  for (const char* value : {"1e30", "-1e30", "nan", "inf"}) {
    Result r = runArgusc("run --cpu " + kernel.string() + " --size N=100 --arg k=" + value);
    EXPECT_EQ(r.status, 2) << value << ": " << r.output;
    EXPECT_NE(r.output.find("is not an integer in the range of 64 bits"), std::string::npos) << r.output;
  }
}

}  // namespace

namespace {

TEST(Cli, FormatCheckPrintAndInPlace) {
  EXPECT_EQ(runArgusc("format --check " + example("vadd.ag") + " " + example("gemm.ag")).status, 0)
      << "the examples are canonical";
  fs::path messy = scratch("messy.ag");
  writeFile(messy, "@kernel(grid=( 1, ),warps=1)\ndef k(x:Tensor[f32,(16,)]):\n  t=load( x )\n  store(x,t*2)\n");
  Result check = runArgusc("format --check " + messy.string());
  EXPECT_EQ(check.status, 1);
  EXPECT_NE(check.output.find("messy.ag"), std::string::npos) << check.output;
  Result printed = runArgusc("format " + messy.string(), true);
  EXPECT_EQ(printed.status, 0) << printed.output;
  EXPECT_NE(printed.out.find("def k(x: Tensor[f32, (16,)]):\n    t = load(x)\n"), std::string::npos) << printed.out;
  EXPECT_EQ(runArgusc("format -i " + messy.string()).status, 0);
  EXPECT_EQ(runArgusc("format --check " + messy.string()).status, 0) << "-i rewrote the file";
  Result broken = runArgusc("format " + example("broken/typo.ag") + " > /dev/null");
  EXPECT_EQ(broken.status, 0) << "a file with only semantic errors still formats: " << broken.output;
  fs::path syntax = scratch("syntax.ag");
  writeFile(syntax, "def k(:\n    pass\n");
  Result refused = runArgusc("format " + syntax.string());
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.output.find("error[AG1"), std::string::npos) << refused.output;
  EXPECT_EQ(runArgusc("format").status, 2);
}

}  // namespace

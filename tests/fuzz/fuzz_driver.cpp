// A mutation fuzzer that needs no special compiler: takes the example kernels
// and golden files as seeds, mutates them (byte edits, token insertions,
// deletions, line duplication, splicing) and runs the target for a bounded
// time. A crash or a hang fails the test; the last input is written to
// fuzz-crash.ag first so it can be replayed.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_mutate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void collectSeeds(const std::filesystem::path& dir, std::vector<std::string>& seeds) {
  if (!std::filesystem::exists(dir)) return;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.path().extension() != ".ag") continue;
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    seeds.push_back(ss.str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 20;
  if (const char* v = std::getenv("ARGUS_FUZZ_SECONDS")) seconds = std::atof(v);
  std::filesystem::path root = argc > 1 ? argv[1] : ".";
  std::vector<std::string> seeds;
  collectSeeds(root / "examples", seeds);
  collectSeeds(root / "tests" / "golden", seeds);
  if (seeds.empty()) seeds.push_back("@kernel(grid=(1,), warps=1)\ndef k():\n    pass\n");
  std::mt19937_64 rng(12345);
  auto start = std::chrono::steady_clock::now();
  long runs = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    std::string input = argus::fuzz::mutate(seeds[rng() % seeds.size()], seeds, rng);
    {
      std::ofstream last("fuzz-crash.ag", std::ios::binary);
      last << input;
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
    ++runs;
  }
  std::filesystem::remove("fuzz-crash.ag");
  std::cout << "fuzz: " << runs << " inputs in " << seconds << " s, no crash\n";
  std::cout << runs << " passed, 0 failed\n";
  return 0;
}

// Replays fuzz inputs (files, or every file under directories) through a fuzz
// target once each: the bounded, compiler-independent form of a fuzzer that
// the test suite runs on the committed corpus (tests/fuzz/corpus/*). A crash
// fails the test; the input being replayed is printed first so it is known.
//
// With ARGUS_FUZZ_SECONDS=S it then keeps mutating the inputs for S seconds
// (tests/fuzz/fuzz_mutate.h), writing each input to ARGUS_FUZZ_CRASH_FILE
// (default fuzz-crash.input) before running it, so that a crash leaves it
// behind; progress goes to stderr once a minute.
#include <algorithm>
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

void run(const std::string& bytes) { LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()); }

long mutateFor(double seconds, const std::vector<std::string>& seeds) {
  const char* crashFile = std::getenv("ARGUS_FUZZ_CRASH_FILE");
  std::string crashPath = crashFile ? crashFile : "fuzz-crash.input";
  const char* seedText = std::getenv("ARGUS_FUZZ_SEED");
  std::mt19937_64 rng(seedText ? std::strtoull(seedText, nullptr, 10) : 12345);
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  double nextReport = 60;
  long runs = 0;
  while (elapsed() < seconds) {
    std::string input = argus::fuzz::mutate(seeds[rng() % seeds.size()], seeds, rng);
    {
      std::ofstream last(crashPath, std::ios::binary);
      last << input;
    }
    run(input);
    ++runs;
    if (elapsed() >= nextReport) {
      std::cerr << "fuzz: " << runs << " inputs in " << static_cast<long>(elapsed()) << " s\n";
      nextReport += 60;
    }
  }
  std::filesystem::remove(crashPath);
  return runs;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path p = argv[i];
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file()) inputs.push_back(e.path());
    } else {
      inputs.push_back(p);
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::cerr << "replay: no inputs found\n";
    return 1;
  }
  std::vector<std::string> seeds;
  for (const std::filesystem::path& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    seeds.push_back(ss.str());
    std::cerr << "replay: " << p.string() << "\n";
    run(seeds.back());
  }
  long mutated = 0;
  if (const char* s = std::getenv("ARGUS_FUZZ_SECONDS")) mutated = mutateFor(std::atof(s), seeds);
  if (mutated > 0) std::cout << "fuzz: " << mutated << " mutated inputs, no crash\n";
  std::cout << inputs.size() << " passed, 0 failed\n";
  return 0;
}

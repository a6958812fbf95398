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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

const char* const kDictionary[] = {
    "(", ")", "[", "]", ",", ":", "\n", "    ", "\t", "=", "+", "*", "//", "**", "@", ".",
    "def ", "for ", "in ", "if ", "else:", "elif ", "return ", "range(", "load(", "store(",
    "tile((", "shared(", "dot(", "sum(", "max(", "axis=1", "program_id(0)", "cdiv(", "const",
    "Tensor[f32, (N,)]", "f16", "bf16", "i32", "@kernel(grid=(1,), warps=4)\n", "@device\n",
    "1e309", "0x", "99999999999999999999", "'", "\"", "#", "\\", "barrier()", "where(",
    "cast(", "zeros(f32, (64, 64))", "-inf", "assert ", "tag(", "é", "\xe2\x82\xac"};

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

std::string mutate(std::string s, const std::vector<std::string>& seeds, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 6) {
      case 0:  // replace a byte with a printable character
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(32 + rng() % 95);
        break;
      case 1:  // insert a dictionary token
        s.insert(pick(s.size() + 1), kDictionary[pick(std::size(kDictionary))]);
        break;
      case 2: {  // delete a range
        size_t at = pick(s.size() + 1), len = pick(16) + 1;
        s.erase(at, len);
        break;
      }
      case 3: {  // duplicate a line
        size_t at = pick(s.size() + 1);
        size_t b = s.rfind('\n', at == 0 ? 0 : at - 1), en = s.find('\n', at);
        b = b == std::string::npos ? 0 : b + 1;
        if (en == std::string::npos) en = s.size();
        s.insert(b, s.substr(b, en - b) + "\n");
        break;
      }
      case 4: {  // splice with another seed
        const std::string& o = seeds[pick(seeds.size())];
        s = s.substr(0, pick(s.size() + 1)) + o.substr(pick(o.size() + 1));
        break;
      }
      default:  // change indentation of a line
        s.insert(pick(s.size() + 1), " ");
        break;
    }
  }
  if (s.size() > 20000) s.resize(20000);
  return s;
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
    std::string input = mutate(seeds[rng() % seeds.size()], seeds, rng);
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

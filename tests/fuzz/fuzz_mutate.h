// The mutations of the compiler-independent fuzz drivers (fuzz_driver.cpp,
// replay_main.cpp): byte edits, dictionary tokens, deletions, line
// duplication, splicing with another seed, indentation.
#pragma once

#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace argus::fuzz {

inline constexpr const char* kDictionary[] = {
    "(", ")", "[", "]", ",", ":", "\n", "    ", "\t", "=", "+", "*", "//", "**", "@", ".",
    "def ", "for ", "in ", "if ", "else:", "elif ", "return ", "range(", "load(", "store(",
    "tile((", "shared(", "dot(", "sum(", "max(", "axis=1", "program_id(0)", "cdiv(", "const",
    "Tensor[f32, (N,)]", "f16", "bf16", "i32", "@kernel(grid=(1,), warps=4)\n", "@device\n",
    "1e309", "0x", "99999999999999999999", "'", "\"", "#", "\\", "barrier()", "where(",
    "cast(", "zeros(f32, (64, 64))", "-inf", "assert ", "tag(", "é", "\xe2\x82\xac",
    // JSON-RPC, for the language server's inputs
    "{", "}", "\"", "\\u0000", "null", "[]", "{}", "\"id\":", "\"method\":", "\"params\":", "\"position\":",
    "{\"line\":0,\"character\":0}", "\"textDocument/didChange\"", "\"textDocument/hover\"", "-1", "1e400",
    "Content-Length: 10\r\n\r\n"};

inline std::string mutate(std::string s, const std::vector<std::string>& seeds, std::mt19937_64& rng) {
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

}  // namespace argus::fuzz

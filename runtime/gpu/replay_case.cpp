// The files of a saved run (DIR/run.json and what it names); see benchmark.h.
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "benchmark.h"

namespace argus::gpu {
namespace {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr int kReplayVersion = 1;

std::string hexOf(const std::vector<uint8_t>& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

bool bytesOfHex(const std::string& hex, std::vector<uint8_t>& out) {
  if (hex.size() % 2) return false;
  out.clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = std::isxdigit(static_cast<unsigned char>(hex[i])) ? std::stoi(hex.substr(i, 1), nullptr, 16) : -1;
    int lo = std::isxdigit(static_cast<unsigned char>(hex[i + 1])) ? std::stoi(hex.substr(i + 1, 1), nullptr, 16) : -1;
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<uint8_t>(hi * 16 + lo));
  }
  return true;
}

bool writeFile(const fs::path& path, const void* data, size_t size, std::string& error) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) {
    error = "cannot write '" + path.string() + "'";
    return false;
  }
  return true;
}

bool readBinary(const fs::path& path, size_t expectedBytes, std::vector<uint8_t>& out, std::string& error) {
  std::string data;
  if (!readFileBytes(path.string(), data, error)) return false;
  if (data.size() != expectedBytes) {
    error = "'" + path.string() + "' has " + std::to_string(data.size()) + " bytes; its dtype and shape need " +
            std::to_string(expectedBytes);
    return false;
  }
  out.assign(data.begin(), data.end());
  return true;
}

}  // namespace

std::map<std::string, std::vector<uint8_t>> ReplayCase::scalarBits() const {
  std::map<std::string, std::vector<uint8_t>> out;
  for (const Scalar& s : scalars) out[s.name] = s.bits;
  return out;
}

bool saveReplayCase(const std::string& dir, const ReplayCase& replay, std::string& error) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create the directory '" + dir + "': " + ec.message();
    return false;
  }
  fs::path root(dir);
  if (!writeFile(root / replay.ptxFile, replay.ptx.data(), replay.ptx.size(), error) ||
      !writeFile(root / replay.metaFile, replay.metaJson.data(), replay.metaJson.size(), error))
    return false;
  json tensors = json::array();
  for (const BenchTensor& t : replay.tensors) {
    json entry{{"name", t.name}, {"dtype", t.dtype.name}, {"shape", t.shape}, {"role", tensorRoleName(t.role)}};
    std::string inputFile = t.name + ".input.bin", expectedFile = t.name + ".expected.bin";
    if (!writeFile(root / inputFile, t.input.data(), t.input.size(), error)) return false;
    entry["input"] = inputFile;
    if (!t.expected.empty()) {
      if (!writeFile(root / expectedFile, t.expected.data(), t.expected.size(), error)) return false;
      entry["expected"] = expectedFile;
    }
    tensors.push_back(std::move(entry));
  }
  json scalars = json::array();
  for (const ReplayCase::Scalar& s : replay.scalars)
    scalars.push_back(json{{"name", s.name}, {"dtype", s.dtype}, {"value", s.value}, {"bits", hexOf(s.bits)}});
  json sizes = json::object();
  for (const auto& [name, value] : replay.sizes) sizes[name] = value;
  json doc{{"version", kReplayVersion}, {"kernel", replay.kernelName}, {"arch", replay.arch},
           {"ptx", replay.ptxFile},     {"meta", replay.metaFile},      {"seed", replay.seed},
           {"sizes", sizes},            {"scalars", scalars},           {"tensors", tensors}};
  std::string text = doc.dump(2) + "\n";
  return writeFile(root / "run.json", text.data(), text.size(), error);
}

bool loadReplayCase(const std::string& dir, ReplayCase& replay, std::string& error) {
  replay = ReplayCase{};
  fs::path root(dir);
  std::string text;
  if (!readFileBytes((root / "run.json").string(), text, error)) {
    error += " (is '" + dir + "' a directory written by `argusc run --cpu --save-io`?)";
    return false;
  }
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    error = "'" + (root / "run.json").string() + "' is not valid JSON";
    return false;
  }
  try {
    if (doc.value("version", 0) != kReplayVersion) {
      error = "run.json has version " + doc.value("version", json(0)).dump() + "; this tool reads version " +
              std::to_string(kReplayVersion);
      return false;
    }
    replay.kernelName = doc.at("kernel").get<std::string>();
    replay.arch = doc.value("arch", "");
    replay.ptxFile = doc.at("ptx").get<std::string>();
    replay.metaFile = doc.at("meta").get<std::string>();
    replay.seed = doc.value("seed", uint64_t{0});
    for (const auto& [name, value] : doc.at("sizes").items()) replay.sizes[name] = value.get<int64_t>();
    for (const json& s : doc.at("scalars")) {
      ReplayCase::Scalar scalar;
      scalar.name = s.at("name").get<std::string>();
      scalar.dtype = s.at("dtype").get<std::string>();
      scalar.value = s.value("value", 0.0);
      if (!bytesOfHex(s.at("bits").get<std::string>(), scalar.bits)) {
        error = "run.json: scalar '" + scalar.name + "' has malformed bits";
        return false;
      }
      replay.scalars.push_back(std::move(scalar));
    }
    for (const json& t : doc.at("tensors")) {
      BenchTensor tensor;
      tensor.name = t.at("name").get<std::string>();
      std::optional<HostDType> dtype = hostDTypeFromName(t.at("dtype").get<std::string>());
      std::optional<TensorRole> role = tensorRoleFromName(t.at("role").get<std::string>());
      if (!dtype || !role) {
        error = "run.json: tensor '" + tensor.name + "' has an unknown dtype or role";
        return false;
      }
      tensor.dtype = *dtype;
      tensor.role = *role;
      tensor.shape = t.at("shape").get<std::vector<int64_t>>();
      size_t bytes = static_cast<size_t>(tensor.dtype.bytes);
      for (int64_t extent : tensor.shape) {
        if (extent < 0 || __builtin_mul_overflow(bytes, static_cast<size_t>(extent), &bytes)) {
          error = "run.json: tensor '" + tensor.name + "' has an invalid shape";
          return false;
        }
      }
      if (!readBinary(root / t.at("input").get<std::string>(), bytes, tensor.input, error)) return false;
      if (t.contains("expected") && !readBinary(root / t.at("expected").get<std::string>(), bytes, tensor.expected, error))
        return false;
      replay.tensors.push_back(std::move(tensor));
    }
  } catch (const std::exception& e) {
    error = std::string("run.json is malformed: ") + e.what();
    return false;
  }
  return readFileBytes((root / replay.ptxFile).string(), replay.ptx, error) &&
         readFileBytes((root / replay.metaFile).string(), replay.metaJson, error);
}

}  // namespace argus::gpu

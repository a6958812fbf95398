// Task files (agent/task.h): strict JSON reading with errors that name the
// field, and the FLOP-count expression.
#include "agent/task.h"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "driver/compilation.h"

namespace argus::agent {
namespace {

using nlohmann::json;

const char* jsonTypeName(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

// Reads an object of sizes ({"M": 64, ...}); every value a positive integer
// that fits the kernels' i32 size parameters.
bool readSizes(const json& v, const std::string& field, Sizes& out, std::string& error) {
  if (!v.is_object() || v.empty()) {
    error = "field '" + field + "': expected an object of sizes such as {\"M\": 64}, got " +
            (v.is_object() ? std::string("an empty object") : jsonTypeName(v));
    return false;
  }
  for (const auto& [name, value] : v.items()) {
    bool integer = value.is_number_integer() || value.is_number_unsigned();
    int64_t n = integer ? value.get<int64_t>() : 0;
    if (!integer || n < 1 || n > (int64_t{1} << 31) - 1) {
      error = "field '" + field + "." + name + "': expected a positive integer below 2^31, got " +
              (integer ? std::to_string(n) : std::string(jsonTypeName(value)));
      return false;
    }
    out[name] = n;
  }
  return true;
}

std::string sizeNamesText(const Sizes& sizes) {
  std::string text;
  for (const auto& [name, value] : sizes) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// A recursive-descent evaluator of + - * / ( ) over integers and size names, in doubles.
class FlopsParser {
 public:
  FlopsParser(const std::string& text, const Sizes& sizes) : text_(text), sizes_(sizes) {}

  std::optional<double> parse(std::string& error) {
    std::optional<double> v = sum();
    skipSpace();
    if (v && pos_ != text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    if (!error_.empty()) {
      error = error_;
      return std::nullopt;
    }
    return v;
  }

 private:
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<double> fail(const std::string& message) {
    if (error_.empty()) error_ = message + " at column " + std::to_string(pos_ + 1);
    return std::nullopt;
  }
  std::optional<double> sum() {
    std::optional<double> v = product();
    while (v) {
      if (accept('+')) {
        std::optional<double> r = product();
        if (!r) return r;
        *v += *r;
      } else if (accept('-')) {
        std::optional<double> r = product();
        if (!r) return r;
        *v -= *r;
      } else {
        break;
      }
    }
    return v;
  }
  std::optional<double> product() {
    std::optional<double> v = unary();
    while (v) {
      if (accept('*')) {
        std::optional<double> r = unary();
        if (!r) return r;
        *v *= *r;
      } else if (accept('/')) {
        std::optional<double> r = unary();
        if (!r) return r;
        if (*r == 0) return fail("division by zero");
        *v /= *r;
      } else {
        break;
      }
    }
    return v;
  }
  std::optional<double> unary() {
    if (accept('-')) {
      std::optional<double> v = unary();
      if (v) *v = -*v;
      return v;
    }
    return primary();
  }
  std::optional<double> primary() {
    skipSpace();
    if (pos_ >= text_.size()) return fail("expression ends early");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      std::optional<double> v = sum();
      if (v && !accept(')')) return fail("missing ')'");
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      double v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
        v = v * 10 + (text_[pos_++] - '0');
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      std::string name = text_.substr(start, pos_ - start);
      auto it = sizes_.find(name);
      if (it == sizes_.end()) {
        pos_ = start;
        return fail("unknown size '" + name + "' (sizes: " + sizeNamesText(sizes_) + ")");
      }
      return static_cast<double>(it->second);
    }
    return fail("unexpected '" + std::string(1, c) + "'");
  }

  const std::string& text_;
  const Sizes& sizes_;
  size_t pos_ = 0;
  std::string error_;
};

bool readFile(const std::filesystem::path& path, std::string& out) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return static_cast<bool>(in) || in.eof();
}

bool readTaskJson(const json& doc, const std::filesystem::path& taskPath, Task& task, std::string& error) {
  if (!doc.is_object()) {
    error = std::string("expected a JSON object, got ") + jsonTypeName(doc);
    return false;
  }
  static const std::set<std::string> known = {"name", "kernel", "validate", "measure", "flops",
                                              "budget", "peer", "arch", "multiple_of"};
  for (const auto& [key, value] : doc.items()) {
    if (!known.count(key)) {
      error = "unknown field '" + key +
              "' (fields: name, kernel, validate, measure, flops, budget, peer, arch, multiple_of)";
      return false;
    }
  }
  auto stringField = [&](const char* key, std::string& out, bool required) {
    auto it = doc.find(key);
    if (it == doc.end()) {
      if (required) error = std::string("missing field '") + key + "'";
      return !required;
    }
    if (!it->is_string() || it->get<std::string>().empty()) {
      error = std::string("field '") + key + "': expected a non-empty string, got " +
              (it->is_string() ? std::string("an empty string") : jsonTypeName(*it));
      return false;
    }
    out = it->get<std::string>();
    return true;
  };

  task.name = taskPath.stem().string();
  if (task.name.size() > 5 && task.name.ends_with(".task")) task.name.resize(task.name.size() - 5);
  std::string kernel;
  if (!stringField("name", task.name, false) || !stringField("kernel", kernel, true) ||
      !stringField("arch", task.arch, false) || !stringField("flops", task.flopsExpr, false))
    return false;
  if (!isSupportedArch(task.arch)) {
    error = "field 'arch': '" + task.arch + "' is not a supported target (sm_80, sm_90, sm_90a)";
    return false;
  }

  std::filesystem::path kernelPath = kernel;
  if (kernelPath.is_relative()) kernelPath = taskPath.parent_path() / kernelPath;
  task.kernelPath = kernelPath.lexically_normal().string();
  if (!readFile(kernelPath, task.kernelSource)) {
    error = "field 'kernel': cannot read '" + task.kernelPath + "' (a path relative to the task file)";
    return false;
  }

  auto validate = doc.find("validate");
  if (validate == doc.end()) {
    error = "missing field 'validate' (an array of sizes such as [{\"M\": 64, \"N\": 48, \"K\": 40}])";
    return false;
  }
  if (!validate->is_array() || validate->empty()) {
    error = std::string("field 'validate': expected a non-empty array of sizes, got ") +
            (validate->is_array() ? std::string("an empty array") : jsonTypeName(*validate));
    return false;
  }
  for (size_t i = 0; i < validate->size(); ++i) {
    Sizes sizes;
    if (!readSizes((*validate)[i], "validate[" + std::to_string(i) + "]", sizes, error)) return false;
    task.validate.push_back(std::move(sizes));
  }
  auto measure = doc.find("measure");
  if (measure == doc.end()) {
    error = "missing field 'measure' (the sizes to time, such as {\"M\": 4096, \"N\": 4096, \"K\": 4096})";
    return false;
  }
  if (!readSizes(*measure, "measure", task.measure, error)) return false;
  // Every shape names the same sizes, or the kernel cannot run at all of them.
  for (size_t i = 0; i < task.validate.size(); ++i) {
    if (sizeNamesText(task.validate[i]) != sizeNamesText(task.measure)) {
      error = "field 'validate[" + std::to_string(i) + "]': names the sizes " + sizeNamesText(task.validate[i]) +
              " but 'measure' names " + sizeNamesText(task.measure) + "; every shape needs the same sizes";
      return false;
    }
  }

  if (auto multiple = doc.find("multiple_of"); multiple != doc.end()) {
    if (!readSizes(*multiple, "multiple_of", task.multipleOf, error)) return false;
    for (const auto& [name, m] : task.multipleOf) {
      if (!task.measure.count(name)) {
        error = "field 'multiple_of': '" + name + "' is not a size of 'measure' (" + sizeNamesText(task.measure) + ")";
        return false;
      }
      if (m < 1) {
        error = "field 'multiple_of." + name + "': expected a positive integer, got " + std::to_string(m);
        return false;
      }
    }
    auto keeps = [&](const Sizes& shape, const std::string& field) {
      for (const auto& [name, m] : task.multipleOf)
        if (shape.at(name) % m != 0) {
          error = "field '" + field + "': " + name + " = " + std::to_string(shape.at(name)) + " is not a multiple of " +
                  std::to_string(m) + ", which 'multiple_of' promises";
          return false;
        }
      return true;
    };
    for (size_t i = 0; i < task.validate.size(); ++i)
      if (!keeps(task.validate[i], "validate[" + std::to_string(i) + "]")) return false;
    if (!keeps(task.measure, "measure")) return false;
  }
  if (!task.flopsExpr.empty()) {
    std::string flopsError;
    FlopsParser parser(task.flopsExpr, task.measure);
    if (!parser.parse(flopsError)) {
      error = "field 'flops': '" + task.flopsExpr + "': " + flopsError;
      return false;
    }
  }
  if (auto budget = doc.find("budget"); budget != doc.end()) {
    if (!budget->is_object()) {
      error = std::string("field 'budget': expected an object such as {\"candidates\": 40}, got ") +
              jsonTypeName(*budget);
      return false;
    }
    for (const auto& [key, value] : budget->items()) {
      if (key != "candidates") {
        error = "unknown field 'budget." + key + "' (fields: candidates)";
        return false;
      }
      bool integer = value.is_number_integer() || value.is_number_unsigned();
      if (!integer || value.get<int64_t>() < 1 || value.get<int64_t>() > 1000000) {
        error = std::string("field 'budget.candidates': expected a positive integer, got ") +
                (integer ? std::to_string(value.get<int64_t>()) : std::string(jsonTypeName(value)));
        return false;
      }
      task.candidateBudget = static_cast<int>(value.get<int64_t>());
    }
  }
  if (auto peer = doc.find("peer"); peer != doc.end()) {
    if (!peer->is_object()) {
      error = std::string("field 'peer': expected an object such as {\"name\": \"cuBLAS\", \"tflops\": 788}, got ") +
              jsonTypeName(*peer);
      return false;
    }
    for (const auto& [key, value] : peer->items()) {
      if (key == "name" && value.is_string() && !value.get<std::string>().empty()) {
        task.peerName = value.get<std::string>();
      } else if (key == "tflops" && value.is_number() && value.get<double>() > 0) {
        task.peerTflops = value.get<double>();
      } else if (key == "name" || key == "tflops") {
        error = "field 'peer." + key + "': expected " +
                (key == "name" ? std::string("a non-empty string") : std::string("a positive number")) +
                ", got " + jsonTypeName(value);
        return false;
      } else {
        error = "unknown field 'peer." + key + "' (fields: name, tflops)";
        return false;
      }
    }
  }
  return true;
}

}  // namespace

std::optional<Task> loadTask(const std::string& path, std::string& error) {
  std::string text;
  if (!readFile(path, text)) {
    error = path + ": cannot read the task file";
    return std::nullopt;
  }
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    // Parse again for the parser's message (line and column); nothing escapes.
    std::string why = "invalid JSON";
    try {
      json again = json::parse(text);
      (void)again;
    } catch (const json::exception& e) {
      why = e.what();
    }
    error = path + ": " + why;
    return std::nullopt;
  }
  Task task;
  std::string fieldError;
  try {
    if (!readTaskJson(doc, std::filesystem::path(path), task, fieldError)) {
      error = path + ": " + fieldError;
      return std::nullopt;
    }
  } catch (const std::exception& e) {
    error = path + ": " + e.what();
    return std::nullopt;
  }
  return task;
}

std::optional<double> taskFlops(const Task& task, const Sizes& sizes) {
  if (task.flopsExpr.empty()) return std::nullopt;
  std::string error;
  return FlopsParser(task.flopsExpr, sizes).parse(error);
}

}  // namespace argus::agent

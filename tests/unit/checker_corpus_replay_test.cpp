// Replays the checker's counterexamples. Every corpus kernel with a race
// (AG2001-AG2003), a read before its copy_async completed (AG2005) or a shared
// view out of bounds (AG2030):
//  1. runs in the CPU interpreter at the launch sizes of its counterexample
//     (`# replay:` lines and small defaults for the rest), which must stop with
//     a race between the same two operations, or an out-of-bounds access by
//     the very thread the checker named (both take the lowest such thread);
//  2. for a race (not AG2005), the interpreter reports the first racing thread it meets,
//     which need not be the one the solver picked, so the named accesses are
//     also replayed exactly: the view offsets are evaluated at the named
//     iteration and launch, and ir::Distribution must place the named element
//     at the named thread and value of each side (a writer being the primary
//     owner), with two different threads.
#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <set>

#include "checker_corpus_util.h"
#include "driver/compilation.h"
#include "ir/async.h"
#include "ir/ir.h"
#include "ir/ops.h"
#include "runtime/interp/interpreter.h"

namespace argus::corpus {
namespace {

constexpr int64_t kDefaultSize = 64;

const std::set<std::string> kReplayedCodes = {"AG2001", "AG2002", "AG2003", "AG2005", "AG2030"};

std::string fact(const Diagnostic& d, const std::string& name) {
  for (const auto& [key, value] : d.counterexample->facts)
    if (key == name) return value;
  return "";
}

// Sizes named in the counterexample's launch fact ("K = 17, program_id(0) = 1").
std::map<std::string, int64_t> launchSizes(const Diagnostic& d) {
  std::map<std::string, int64_t> out;
  std::string launch = fact(d, "launch");
  std::regex pair(R"(([A-Za-z_][A-Za-z0-9_]*) = (-?[0-9]+))");
  for (auto it = std::sregex_iterator(launch.begin(), launch.end(), pair); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = std::stoll((*it)[2]);
  return out;
}

// Every thread the diagnostic names: the counterexample's, and those in its facts and labels.
std::set<int64_t> namedThreads(const Diagnostic& d) {
  std::set<int64_t> out;
  if (d.counterexample->thread) out.insert(*d.counterexample->thread);
  std::regex thread(R"(thread ([0-9]+))");
  auto scan = [&](const std::string& text) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), thread); it != std::sregex_iterator(); ++it)
      out.insert(std::stoll((*it)[1]));
  };
  for (const auto& [key, value] : d.counterexample->facts) scan(value);
  for (const Label& l : d.labels) scan(l.message);
  return out;
}

// ---- exact replay of a race's two accesses with ir::Distribution

using Env = std::map<std::string, int64_t>;

std::optional<int64_t> evaluate(const ir::Function& fn, ir::ValueId id, const Env& env) {
  const ir::Value& v = fn.values[id];
  const ir::Op* def = v.def;
  if (!def) {
    auto it = env.find(v.name);
    return it == env.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  switch (def->kind) {
    case ir::OpKind::Const: return ir::ConstOp(*def).intValue();
    case ir::OpKind::ProgramId: {
      auto it = env.find("program_id(" + std::to_string(ir::ProgramIdOp(*def).axis()) + ")");
      return it == env.end() ? 0 : it->second;
    }
    case ir::OpKind::Binary: {
      auto x = evaluate(fn, ir::BinaryOp(*def).lhs(), env);
      auto y = evaluate(fn, ir::BinaryOp(*def).rhs(), env);
      if (!x || !y) return std::nullopt;
      switch (ir::BinaryOp(*def).binaryKind()) {
        case ir::BinaryKind::Add: return *x + *y;
        case ir::BinaryKind::Sub: return *x - *y;
        case ir::BinaryKind::Mul: return *x * *y;
        case ir::BinaryKind::Div: return *y == 0 ? std::nullopt : std::optional<int64_t>(*x / *y);
        case ir::BinaryKind::Rem: return *y == 0 ? std::nullopt : std::optional<int64_t>(*x % *y);
        case ir::BinaryKind::Min: return std::min(*x, *y);
        case ir::BinaryKind::Max: return std::max(*x, *y);
        default: return std::nullopt;
      }
    }
    default: return std::nullopt;
  }
}

struct NamedAccess {
  int64_t thread = -1, value = 0;
  bool write = false;
  std::vector<int64_t> element;
  Env iteration;
};

// "thread 32 reads b_s[0, 0] in iteration kt = 0 (value 0)".
std::optional<NamedAccess> parseAccess(const std::string& text) {
  std::smatch m;
  static const std::regex re(R"(thread ([0-9]+) (reads|writes) \w+\[([-0-9, ]*)\](?: in iteration (.*?))? \(value ([0-9]+)\))");
  if (!std::regex_search(text, m, re)) return std::nullopt;
  NamedAccess a;
  a.thread = std::stoll(m[1]);
  a.write = m[2] == "writes";
  std::string element = m[3];
  std::regex number("-?[0-9]+");
  for (auto it = std::sregex_iterator(element.begin(), element.end(), number); it != std::sregex_iterator(); ++it)
    a.element.push_back(std::stoll(it->str()));
  std::string iteration = m[4];
  std::regex pair(R"(([A-Za-z_][A-Za-z0-9_]*) = (-?[0-9]+))");
  for (auto it = std::sregex_iterator(iteration.begin(), iteration.end(), pair); it != std::sregex_iterator(); ++it)
    a.iteration[(*it)[1]] = std::stoll((*it)[2]);
  a.value = std::stoll(m[5]);
  return a;
}

bool touchesBuffer(const ir::Function& fn, const ir::Op& op, const std::string& buffer) {
  for (size_t i = 0; i < op.operands.size() && i < 2; ++i) {
    const ir::Op* view = fn.values[op.operands[i]].def;
    if (view && view->kind == ir::OpKind::View && fn.values[ir::ViewOp(*view).base()].name == buffer) return true;
  }
  return false;
}

// The load, store or dot at `range` that accesses `buffer` (a copy is a global load and a shared store).
const ir::Op* memoryOpAt(const ir::Function& fn, const ir::Block& block, SourceRange range, const std::string& buffer) {
  for (const auto& op : block.ops) {
    if ((op->kind == ir::OpKind::Load || op->kind == ir::OpKind::Store || op->kind == ir::OpKind::Dot ||
         op->kind == ir::OpKind::CopyAsync) &&
        op->range == range && touchesBuffer(fn, *op, buffer))
      return op.get();
    for (const ir::Block& region : op->regions)
      if (const ir::Op* found = memoryOpAt(fn, region, range, buffer)) return found;
  }
  return nullptr;
}

// Empty when `op`, run by the named thread and value at the named iteration, touches the named element.
std::string replayAccess(const ir::Function& fn, const ir::Op& op, const NamedAccess& a, const Env& launch,
                         const std::string& buffer) {
  Env env = launch;
  for (const auto& [name, value] : a.iteration) env[name] = value;
  for (size_t i = 0; i < op.operands.size() && i < 2; ++i) {
    ir::ValueId view = op.operands[i];
    const ir::Op* viewOp = fn.values[view].def;
    if (!viewOp || viewOp->kind != ir::OpKind::View || fn.values[ir::ViewOp(*viewOp).base()].name != buffer) continue;
    if ((op.kind == ir::OpKind::Store || op.kind == ir::OpKind::CopyAsync) && i != 0) continue;
    const std::vector<int64_t>& shapeOfView = fn.values[view].type.shape;
    // A copy_async gives each thread chunks of `vec` elements along the last axis (ir/async.h).
    bool async = op.kind == ir::OpKind::CopyAsync;
    int64_t vec = async ? ir::asyncCopyVectorElements(fn.values[view].type.dtype, shapeOfView) : 1;
    ir::Layout layout = async ? ir::asyncCopyChunkLayout(fn.values[view].type.dtype, shapeOfView)
                        : op.kind == ir::OpKind::Load ? fn.typeOf(op.results[0]).layout
                        : op.kind == ir::OpKind::Store ? fn.typeOf(ir::StoreOp(op).value()).layout
                                                       : fn.typeOf(ir::DotOp(op).acc()).layout;
    ir::Distribution dist = ir::Distribution::of(layout, fn.numWarps);
    if (a.write && !dist.isPrimaryOwner(a.thread)) return "thread " + std::to_string(a.thread) + " does not store";
    std::vector<int64_t> c = dist.coordinate(a.thread, a.value);
    size_t rank = a.element.size();
    const std::vector<int64_t>& viewShape = fn.values[view].type.shape;
    size_t k = viewShape.size();
    std::vector<int64_t> offset;
    for (size_t d = 1; d < viewOp->operands.size(); ++d) {
      auto o = evaluate(fn, viewOp->operands[d], env);
      if (!o) return "cannot evaluate the view offset";
      offset.push_back(*o);
    }
    if (offset.size() != rank || k > rank) return "view rank mismatch";
    bool match = true;
    for (size_t d = 0; d < rank; ++d) {
      int64_t rel = a.element[d] - offset[d];
      if (d + k < rank) {
        match = match && rel == 0;
        continue;
      }
      size_t td = d + k - rank;
      bool reductionAxis = op.kind == ir::OpKind::Dot && ((i == 0 && td == 1) || (i == 1 && td == 0));
      if (reductionAxis) {
        match = match && rel >= 0 && rel < viewShape[td];  // dot reads every k
      } else if (async && td + 1 == k) {
        match = match && rel >= c[td] * vec && rel < (c[td] + 1) * vec;  // the thread's chunk
      } else {
        size_t cd = op.kind == ir::OpKind::Dot ? (i == 0 ? 0 : 1) : td;
        match = match && rel == c[cd];
      }
    }
    if (match) return "";
  }
  return "thread " + std::to_string(a.thread) + " value " + std::to_string(a.value) + " does not touch the element";
}

class CorpusReplay : public ::testing::TestWithParam<fs::path> {};

TEST_P(CorpusReplay, InterpreterMeetsTheCounterexample) {
  const fs::path& path = GetParam();
  std::string text = readFile(path);
  Compilation c(SourceFile(path.filename().string(), text), CompileOptions{});
  c.check();
  const Diagnostic* finding = nullptr;
  for (const Diagnostic& d : c.diagnostics())
    if (kReplayedCodes.count(d.code()) && d.counterexample) {
      finding = &d;
      break;
    }
  if (!finding) GTEST_SKIP() << "no race or out-of-bounds finding to replay";
  ASSERT_FALSE(c.ir().functions.empty());
  const ir::Function& fn = *c.ir().functions.front();

  std::map<std::string, int64_t> sizes = replaySizes(text);
  for (const auto& [name, value] : launchSizes(*finding)) sizes[name] = value;
  std::vector<interp::HostTensor> tensors;
  tensors.reserve(fn.params.size());
  for (const ir::Param& p : fn.params) {
    if (p.kind != ir::ParamKind::Tensor) continue;
    std::vector<int64_t> shape;
    for (const ir::DimRef& dim : p.dims) {
      if (dim.constant >= 0) {
        shape.push_back(dim.constant);
        continue;
      }
      const std::string& name = fn.sizeNames[static_cast<size_t>(dim.sizeIndex)];
      shape.push_back(sizes.count(name) ? sizes[name] : kDefaultSize);
    }
    tensors.push_back(interp::HostTensor::zeros(p.dtype, shape));
  }
  std::vector<interp::ArgValue> args;
  size_t nextTensor = 0;
  for (const ir::Param& p : fn.params) {
    if (p.kind == ir::ParamKind::Tensor) args.emplace_back(tensors[nextTensor++]);
    else if (p.kind == ir::ParamKind::Scalar)
      args.emplace_back(ir::isFloat(p.dtype) ? interp::ArgValue(1.0) : interp::ArgValue(int64_t{1}));
  }
  interp::RunOptions options;
  options.checkUninitializedShared = false;  // the buffers are zeros; only races and bounds matter here
  options.maxOpsPerBlock = 20'000'000;
  auto error = interp::run(fn, args, options);
  ASSERT_TRUE(error.has_value()) << path.filename() << ": the interpreter ran clean, but the checker said "
                                 << finding->code() << " " << finding->message;
  const bool outOfBounds = std::string(finding->code()) == "AG2030";
  if (outOfBounds)
    EXPECT_EQ(error->id, DiagId::RunSharedOutOfBounds) << path.filename() << ": " << error->message;
  else
    EXPECT_TRUE(interp::isSharedRace(error->id))
        << path.filename() << ": " << diagInfo(error->id).code << " is no race: " << error->message;
  std::set<int64_t> named = namedThreads(*finding);
  bool involved = (error->thread && named.count(*error->thread)) || (error->otherThread && named.count(*error->otherThread));
  std::string namedText;
  for (int64_t t : named) namedText += " " + std::to_string(t);
  if (outOfBounds) {
    EXPECT_TRUE(error->thread && *error->thread == *finding->counterexample->thread)
        << path.filename() << ": the interpreter reports " << error->message << "; the checker named thread "
        << *finding->counterexample->thread;
    return;
  }
  // A race: the interpreter meets it between the same two operations...
  SourceRange other = finding->labels.empty() ? SourceRange{} : finding->labels.front().range;
  bool sameOps = error->range == finding->range || error->range == other;
  EXPECT_TRUE(sameOps || involved) << path.filename() << ": the interpreter reports " << error->message
                                   << "; the checker named threads" << namedText;
  // A read before its copy_async completed: the interpreter's finding is the replay.
  if (std::string(finding->code()) == "AG2005") return;
  // ... and the two accesses the checker names really touch one element from two threads.
  std::optional<NamedAccess> primary, secondary;
  for (const auto& [key, value] : finding->counterexample->facts) {
    if (key == "this read" || key == "this write") primary = parseAccess(value);
    if (key == "the other read" || key == "the other write") secondary = parseAccess(value);
  }
  ASSERT_TRUE(primary && secondary) << path.filename() << ": the counterexample does not name both accesses";
  EXPECT_NE(primary->thread, secondary->thread);
  EXPECT_EQ(primary->element, secondary->element);
  EXPECT_EQ(primary->thread, *finding->counterexample->thread);
  Env launch;
  for (const auto& [name, value] : launchSizes(*finding)) launch[name] = value;
  std::string launchText = fact(*finding, "launch");
  std::regex pid(R"(program_id\(([0-2])\) = ([0-9]+))");
  for (auto it = std::sregex_iterator(launchText.begin(), launchText.end(), pid); it != std::sregex_iterator(); ++it)
    launch["program_id(" + (*it)[1].str() + ")"] = std::stoll((*it)[2]);
  std::string buffer = fact(*finding, "element");
  buffer = buffer.substr(0, buffer.find('['));
  const ir::Op* primaryOp = memoryOpAt(fn, fn.body, finding->range, buffer);
  const ir::Op* otherOp = memoryOpAt(fn, fn.body, other, buffer);
  ASSERT_TRUE(primaryOp && otherOp) << path.filename() << ": cannot find the two operations in the IR";
  EXPECT_EQ(replayAccess(fn, *primaryOp, *primary, launch, buffer), "") << path.filename() << " (primary access)";
  EXPECT_EQ(replayAccess(fn, *otherOp, *secondary, launch, buffer), "") << path.filename() << " (other access)";
}

std::vector<fs::path> replayedFiles() {
  std::vector<fs::path> out;
  for (const fs::path& p : corpusFiles()) {
    std::string text = readFile(p);
    for (const std::string& code : kReplayedCodes)
      if (text.find(" " + code + ":") != std::string::npos) {
        out.push_back(p);
        break;
      }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusReplay, ::testing::ValuesIn(replayedFiles()), caseName);

}  // namespace
}  // namespace argus::corpus

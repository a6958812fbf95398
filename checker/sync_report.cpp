// Diagnostics of the synchronization check: the message names the buffer as
// written, the primary range is the read (or the later write), a label shows
// the other access with its thread, element and iteration, a note says where
// the barrier() belongs, and a fix-it inserts it when the place is unambiguous.
#include "checker/sync_report.h"
#include "checker/report_text.h"

#include <cctype>

namespace argus::checker {

using ir::OpKind;

namespace {

int64_t valueOf(const z3::model& model, const z3::expr& e) {
  z3::expr v = model.eval(e, true);
  uint64_t bits = 0;
  if (!v.is_numeral() || !v.is_numeral_u64(bits)) return 0;
  return static_cast<int32_t>(static_cast<uint32_t>(bits));
}

std::string bufferName(const ir::Function& fn, ir::ValueId buffer) {
  const std::string& name = fn.values[buffer].name;
  return name.empty() ? "shared" : name;
}

// What the user wrote for an access: `copy`, `store`, `load` or `dot`.
std::string opWord(const ir::Op& op, const SourceFile* file) {
  switch (op.kind) {
    case OpKind::Load: return "load";
    case OpKind::Dot: return "dot";
    case OpKind::CopyAsync: return "copy_async";
    case OpKind::Store:
      if (file && file->slice(op.range).substr(0, 5) == "copy(") return "copy";
      return "store";
    default: return "access";
  }
}

std::string loopName(const ir::Function& fn, const LoopInfo& loop, const SourceFile* file) {
  const ir::Op* op = loop.op;
  if (!op->regions.empty() && !op->regions[0].args.empty()) {
    const std::string& name = fn.values[op->regions[0].args[0]].name;
    if (!name.empty()) return name;
  }
  return "the loop at " + sourcePosition(file, op->range);
}

struct SideFacts {
  int64_t thread = 0, value = 0;
  std::string element;
  std::vector<std::pair<std::string, int64_t>> iteration;
  std::string iterationText() const {
    std::string s;
    for (const auto& [name, v] : iteration) s += (s.empty() ? "" : ", ") + name + " = " + std::to_string(v);
    return s;
  }
};

SideFacts factsOf(const RacePair& pair, const Access& access, const z3::model& model, Side& side) {
  SideFacts f;
  f.thread = side.thread ? valueOf(model, *side.thread) : 0;
  f.value = side.value ? valueOf(model, *side.value) : 0;
  f.element = bufferName(pair.fn, access.buffer) + "[";
  for (size_t d = 0; d < side.coords.size(); ++d)
    f.element += (d ? ", " : "") + std::to_string(valueOf(model, side.coords[d]));
  f.element += "]";
  for (int loop : access.loops) {
    auto it = side.inductionValue.find(loop);
    if (it == side.inductionValue.end()) continue;
    f.iteration.emplace_back(loopName(pair.fn, pair.fa.loops[static_cast<size_t>(loop)], pair.file),
                             valueOf(model, it->second));
  }
  return f;
}

std::string lineIndent(const SourceFile& file, uint32_t line) {
  std::string_view text = file.lineText(line);
  size_t n = 0;
  while (n < text.size() && (text[n] == ' ' || text[n] == '\t')) ++n;
  return std::string(text.substr(0, n));
}

// True when `range` starts a statement on its line: only indentation and an
// assignment target (`acc = `) come before it, and the previous line does not
// continue onto this one.
bool startsStatement(const SourceFile& file, SourceRange range) {
  LineCol lc = file.lineCol(range.begin);
  std::string_view before = file.lineText(lc.line).substr(0, lc.column - 1);
  for (char c : before)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ' ' || c == '\t' || c == '=' || c == ','))
      return false;
  if (lc.line > 1) {
    std::string_view prev = file.lineText(lc.line - 1);
    while (!prev.empty() && (prev.back() == ' ' || prev.back() == '\t')) prev.remove_suffix(1);
    if (!prev.empty() && (prev.back() == '\\' || prev.back() == ',' || prev.back() == '(' || prev.back() == '['))
      return false;
  }
  return true;
}

// True when nothing but a comment follows `range` on its last line.
bool endsStatement(const SourceFile& file, SourceRange range) {
  LineCol lc = file.lineCol(range.end);
  std::string_view after = file.lineText(lc.line).substr(std::min<size_t>(lc.column - 1, file.lineText(lc.line).size()));
  for (char c : after) {
    if (c == '#') return true;
    if (c != ' ' && c != '\t') return false;
  }
  return lc.line < file.lineCount();
}

std::optional<FixIt> barrierFix(const SourceFile* file, const ir::Op& earlierOp, const ir::Op& laterOp,
                                bool crossIteration, bool earlierIsRead) {
  if (!file) return std::nullopt;
  LineCol e = file->lineCol(earlierOp.range.begin), l = file->lineCol(laterOp.range.begin);
  // After the read that ends an iteration, where the fix reads naturally.
  if (crossIteration && earlierIsRead && startsStatement(*file, earlierOp.range) &&
      endsStatement(*file, earlierOp.range)) {
    uint32_t next = file->lineCol(earlierOp.range.end).line + 1;
    uint32_t at = file->offsetOf(next, 1);
    return FixIt{{at, at}, lineIndent(*file, e.line) + "barrier()\n", "insert barrier() after the read"};
  }
  if (!crossIteration && l.line <= file->lineCol(earlierOp.range.end).line) return std::nullopt;
  if (!startsStatement(*file, laterOp.range)) return std::nullopt;
  uint32_t at = file->offsetOf(l.line, 1);
  return FixIt{{at, at}, lineIndent(*file, l.line) + "barrier()\n", "insert barrier() before this statement"};
}

}  // namespace

void reportRace(const RacePair& pair, const z3::model& model, PairEncoder& encoder, Side& first, Side& second,
                DiagnosticSink& diags) {
  const Access& a = pair.fa.accesses[static_cast<size_t>(pair.earlier.access)];
  const Access& b = pair.fa.accesses[static_cast<size_t>(pair.later)];
  SideFacts fa = factsOf(pair, a, model, first), fb = factsOf(pair, b, model, second);
  bool crossIteration = false;
  int carryingLoop = -1;
  for (size_t d = 0; d < pair.earlier.relation.size() && d < b.loops.size() && a.loops[d] == b.loops[d]; ++d)
    if (pair.earlier.relation[d] != IterRelation::Same) {
      crossIteration = true;
      carryingLoop = a.loops[d];
      break;
    }
  DiagId id = DiagId::SharedWriteWrite;
  if (a.isWrite() && !b.isWrite()) id = DiagId::SharedReadAfterWrite;
  if (!a.isWrite() && b.isWrite()) id = DiagId::SharedWriteAfterRead;
  // Primary: the read, or the later write.
  bool primaryIsEarlier = id == DiagId::SharedWriteAfterRead;
  const Access& primary = primaryIsEarlier ? a : b;
  const Access& other = primaryIsEarlier ? b : a;
  const SideFacts& pf = primaryIsEarlier ? fa : fb;
  const SideFacts& of = primaryIsEarlier ? fb : fa;
  std::string name = bufferName(pair.fn, a.buffer);
  Diagnostic& d = diags.report(id, primary.op->range, {name});

  auto describe = [](const SideFacts& f, bool write) {
    std::string s = "thread " + std::to_string(f.thread) + (write ? " writes " : " reads ") + f.element;
    if (!f.iteration.empty()) s += " in iteration " + f.iterationText();
    return s;
  };
  d.labels.push_back(Label{other.op->range, describe(of, other.isWrite()) + " here"});

  Counterexample cx;
  cx.thread = pf.thread;
  cx.warp = pf.thread / 32;
  cx.lane = pf.thread % 32;
  cx.value = pf.value;
  cx.iteration = pf.iteration;
  cx.facts.emplace_back("element", pf.element);
  cx.facts.emplace_back(primary.isWrite() ? "this write" : "this read", describe(pf, primary.isWrite()) +
                                                                           " (value " + std::to_string(pf.value) + ")");
  cx.facts.emplace_back(other.isWrite() ? "the other write" : "the other read",
                        describe(of, other.isWrite()) + " (value " + std::to_string(of.value) + ") at " +
                            sourcePosition(pair.file, other.op->range));
  // The launch the counterexample happens in: the sizes and block it uses.
  std::string launch;
  for (const ir::Param& p : pair.fn.params) {
    if (p.kind != ir::ParamKind::Size || (!first.memo.count(p.value) && !second.memo.count(p.value))) continue;
    launch += (launch.empty() ? "" : ", ") + p.name + " = " + std::to_string(valueOf(model, encoder.scalar(first, p.value)));
  }
  for (unsigned i = 0; i < model.num_consts(); ++i) {
    std::string decl = model.get_const_decl(i).name().str();
    if (decl.rfind("program_id", 0) == 0)
      launch += (launch.empty() ? "" : ", ") + std::string("program_id(") + decl.substr(10) + ") = " +
                std::to_string(valueOf(model, model.get_const_interp(model.get_const_decl(i))));
  }
  if (!launch.empty()) cx.facts.emplace_back("launch", launch);
  d.counterexample = std::move(cx);

  const ir::Op& earlierOp = *a.op;
  const ir::Op& laterOp = *b.op;
  std::string earlierText = "the " + opWord(earlierOp, pair.file) + (a.isWrite() ? " into '" + name + "'" : "") +
                            " at " + sourcePosition(pair.file, earlierOp.range);
  std::string laterText = std::string(crossIteration ? "the next " : "the ") + opWord(laterOp, pair.file) +
                          (b.isWrite() ? " into '" + name + "'" : "") + " at " + sourcePosition(pair.file, laterOp.range);
  std::string why = id == DiagId::SharedReadAfterWrite ? "so that every write is visible before any thread reads"
                    : id == DiagId::SharedWriteAfterRead ? "so that every thread has finished reading before any thread overwrites"
                                                         : "so that the writes are ordered";
  d.notes.push_back("insert barrier() between " + earlierText + " and " + laterText + ", " + why);
  if (crossIteration) {
    const LoopInfo& loop = pair.fa.loops[static_cast<size_t>(carryingLoop)];
    d.notes.push_back("the two accesses run in consecutive iterations of the loop over '" +
                      loopName(pair.fn, loop, pair.file) + "' at " + sourcePosition(pair.file, loop.op->range) +
                      ": what runs after the last barrier() of one iteration shares a phase with what runs "
                      "before the first barrier() of the next");
    if (!loop.definiteBarrier)
      d.notes.back() = "some path through the body of the loop over '" + loopName(pair.fn, loop, pair.file) +
                       "' at " + sourcePosition(pair.file, loop.op->range) +
                       " crosses no barrier(), so all its iterations may share one phase";
  }
  if (auto fix = barrierFix(pair.file, earlierOp, laterOp, crossIteration, !a.isWrite())) d.fixits.push_back(*fix);
}

void reportCannotProve(const RacePair& pair, const std::string& reason, DiagnosticSink& diags) {
  const Access& a = pair.fa.accesses[static_cast<size_t>(pair.earlier.access)];
  const Access& b = pair.fa.accesses[static_cast<size_t>(pair.later)];
  std::string name = bufferName(pair.fn, a.buffer);
  std::string what = "the " + opWord(*a.op, pair.file) + " at " + sourcePosition(pair.file, a.op->range) + " and this " +
                     opWord(*b.op, pair.file) + " never touch the same element of shared buffer '" + name +
                     "' from different threads";
  Diagnostic& d = diags.report(DiagId::CheckerCannotProve, b.op->range, {what, reason});
  d.labels.push_back(Label{a.op->range, "the other access"});
  d.notes.push_back("a barrier() between the two accesses makes them safe; otherwise make sure that each thread "
                    "only touches the elements it wrote");
}

}  // namespace argus::checker

// User-facing diagnostics for the problems of pipelined loops (ir/pipeline.h).
#include <string>

#include "ir/ops.h"
#include "ir/pipeline.h"

namespace argus::ir {

namespace {

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

PipelineMessage describe(const Function& fn, const PipelineProblem& p, const SourceFile* file) {
  using Kind = PipelineProblem::Kind;
  auto quoted = [&](SourceRange r, const char* fallback) {
    if (!file || r.empty()) return std::string(fallback);
    std::string out = "'";
    out += file->slice(r);
    return out + "'";
  };
  auto line = [&](SourceRange r) { return file ? std::to_string(file->lineCol(r.begin).line) : std::string("?"); };
  auto bufferName = [&]() {
    return p.value != kNoValue && !fn.values[p.value].name.empty() ? fn.values[p.value].name : std::string("shared buffer");
  };
  SourceRange forKeyword{p.related.begin, p.related.begin + 3};
  PipelineMessage m{DiagId::SemaInternalError, p.range, {}, {}};
  switch (p.kind) {
    case Kind::NoLeadingCopy:
      m.id = DiagId::PipelineNoLeadingCopy;
      m.args = {p.range == p.related ? std::string("nothing to copy") : quoted(p.range, "another statement")};
      break;
    case Kind::LateCopy:
      m.id = DiagId::PipelineLateCopy;
      m.labels.push_back({p.related, "the pipelined copies"});
      break;
    case Kind::ExplicitSync:
      m.id = DiagId::PipelineExplicitSync;
      m.args = {quoted(p.range, "a wait or barrier")};
      break;
    case Kind::PartialBuffer: {
      m.id = DiagId::PipelinePartialBuffer;
      const Op* view = nullptr;
      for (ValueId v = 0; v < fn.values.size() && p.value != kNoValue; ++v) {
        const Op* def = fn.values[v].def;
        if (def && def->kind == OpKind::View && def->range == p.related && !def->operands.empty() &&
            ViewOp(*def).base() == p.value)
          view = def;
      }
      std::string what = quoted(p.related, "the destination");
      if (p.value == kNoValue) {
        m.args = {what + " is not a buffer from shared(...)"};
      } else {
        std::string covers = view ? " covers " + shapeText(fn.typeOf(view->results[0]).shape) + " of" : " is part of";
        m.args = {what + covers + " buffer '" + bufferName() + "' of shape " + shapeText(fn.typeOf(p.value).shape)};
      }
      break;
    }
    case Kind::BufferCopiedTwice:
      m.id = DiagId::PipelineBufferTwice;
      m.args = {bufferName(), line(p.related)};
      m.labels.push_back({p.related, "first filled here"});
      break;
    case Kind::BufferUsedOutside:
      m.id = DiagId::PipelineBufferOutside;
      m.args = {bufferName(), line(p.related)};
      m.labels.push_back({forKeyword, "the pipelined loop"});
      break;
    case Kind::SourceNotComputable: {
      m.id = DiagId::PipelineSourceAhead;
      int64_t ahead = p.stages - 1;
      std::string what;
      const Value* v = p.value != kNoValue ? &fn.values[p.value] : nullptr;
      if (v && !v->def) {  // a loop-carried value: point at the copy, label where it changes
        what = "the loop-carried value '" + v->name + "'";
        m.labels.push_back({p.related, "'" + v->name + "' changes here, in every iteration"});
      } else {
        what = quoted(p.range, "a value computed in the loop");
        m.labels.push_back({p.related, "this copy"});
      }
      m.args = {std::to_string(ahead), ahead == 1 ? "" : "s", what};
      break;
    }
    case Kind::MixedCopies:
      m.id = DiagId::PipelineMixedCopies;
      m.labels.push_back({p.related, "the first pipelined copy is of the other kind"});
      break;
    case Kind::BulkNested:
      m.id = DiagId::PipelineBulkNested;
      m.range = forKeyword;
      break;
    case Kind::SpecializeNeedsBulk:
      m.id = DiagId::PipelineSpecializeNeedsBulk;
      m.labels.push_back({forKeyword, "this loop asks for specialize=True"});
      break;
    case Kind::SpecializeIgnored:
      m.id = DiagId::PipelineSpecializeIgnored;
      m.args = {quoted(p.range, "a statement")};
      m.labels.push_back({forKeyword, "this loop asks for specialize=True"});
      break;
    case Kind::BadLoop:
      m.args = {fn.name, "a pipelined loop must run from 0 with step 1 and have at least 2 stages"};
      break;
  }
  return m;
}

void applyPipelining(Module& module, const SourceFile* file, DiagnosticSink& diags) {
  for (auto& fn : module.functions) {
    if (!fn) continue;
    std::vector<PipelineProblem> notes;
    std::vector<PipelineProblem> problems = applyPipelining(*fn, &notes);
    for (const PipelineProblem& note : notes) {
      PipelineMessage m = describe(*fn, note, file);
      diags.report(m.id, m.range, m.args).labels = m.labels;
    }
    for (const PipelineProblem& problem : problems) {
      PipelineMessage m = describe(*fn, problem, file);
      Diagnostic& d = diags.report(m.id, m.range, m.args);
      d.labels = m.labels;
    }
    if (!problems.empty()) fn.reset();  // like a kernel with sema errors: no IR
  }
  std::erase(module.functions, nullptr);
}

}  // namespace argus::ir

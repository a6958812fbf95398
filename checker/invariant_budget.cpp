// The shared-memory budget (AG2031): the kernel's shared buffers together fit
// the shared memory a block can have (227 KiB, sm_90's opt-in maximum). Code
// generation adds scratch for layout conversions and cross-warp reductions on
// top and keeps AG5001 for a total that only the scratch, or sm_80's smaller
// limit, pushes over; a kernel that fails here never reaches code generation,
// so nothing is reported twice.
#include <algorithm>

#include "checker/invariant_check.h"

namespace argus::checker {

using ir::OpKind;

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string sharedName(const ir::Function& fn, ir::ValueId buffer) {
  const std::string& name = buffer < fn.values.size() ? fn.values[buffer].name : std::string();
  return name.empty() ? "shared" : name;
}

int64_t elementBytes(ir::DType dtype) { return dtype == ir::DType::Bool ? 1 : std::max(1, ir::dtypeBits(dtype) / 8); }

namespace {

struct Buffer {
  const ir::Op* op;
  std::string name;
  std::vector<int64_t> shape;
  ir::DType dtype;
  int64_t bytes;
};

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

// How to shrink: halve the largest axis of the largest buffer, and say what it saves.
std::string shrinkAdvice(const std::vector<Buffer>& buffers, int64_t total) {
  const Buffer& largest = *std::max_element(buffers.begin(), buffers.end(),
                                            [](const Buffer& a, const Buffer& b) { return a.bytes < b.bytes; });
  std::vector<int64_t> smaller = largest.shape;
  auto axis = std::max_element(smaller.begin(), smaller.end());
  std::string advice = "shrink the buffers by " + std::to_string(total - kSharedBytesPerBlock) +
                       " bytes: use smaller tiles (a smaller BM, BN or BK) or fewer pipeline stages";
  if (axis != smaller.end() && *axis > 1) {
    *axis /= 2;
    advice += "; for example, '" + largest.name + "' as " + shapeText(smaller) + " takes " +
              std::to_string(product(smaller) * elementBytes(largest.dtype)) + " bytes instead of " +
              std::to_string(largest.bytes);
  }
  if (elementBytes(largest.dtype) >= 4 && ir::isFloat(largest.dtype))
    advice += "; staging f16 or bf16 tiles instead of " + std::string(ir::dtypeName(largest.dtype)) +
              " halves the size again";
  return advice;
}

}  // namespace

void checkSharedBudget(const ir::Function& fn, DiagnosticSink& diags) {
  std::vector<Buffer> buffers;
  int64_t total = 0;
  const ir::Op* overflowAt = nullptr;
  forEachOpWithDepth(fn.body, 0, [&](const ir::Op& op, int) {
    if (op.kind != OpKind::AllocShared || op.results.empty()) return;
    const ir::Type& t = fn.typeOf(op.results[0]);
    int64_t bytes = product(t.shape) * elementBytes(t.dtype);
    buffers.push_back({&op, sharedName(fn, op.results[0]), t.shape, t.dtype, bytes});
    total += bytes;
    if (total > kSharedBytesPerBlock && !overflowAt) overflowAt = &op;
  });
  if (!overflowAt) return;
  std::string parts;
  for (const Buffer& b : buffers)
    parts += (parts.empty() ? "" : ", ") + ("'" + b.name + "' " + shapeText(b.shape) + " " +
                                            ir::dtypeName(b.dtype) + " " + std::to_string(b.bytes));
  Diagnostic& d = diags.report(DiagId::SharedMemoryBudget, overflowAt->range,
                               {fn.name, std::to_string(total), parts, std::to_string(kSharedBytesPerBlock)});
  for (const Buffer& b : buffers)
    if (b.op != overflowAt)
      d.labels.push_back(Label{b.op->range, "'" + b.name + "' takes " + std::to_string(b.bytes) + " bytes"});
  Counterexample cx;
  for (const Buffer& b : buffers) cx.facts.emplace_back(b.name, std::to_string(b.bytes) + " bytes");
  cx.facts.emplace_back("total", std::to_string(total) + " bytes");
  cx.facts.emplace_back("limit", std::to_string(kSharedBytesPerBlock) + " bytes");
  d.counterexample = std::move(cx);
  d.notes.push_back("this allocation passes the limit; " + shrinkAdvice(buffers, total));
}

}  // namespace argus::checker

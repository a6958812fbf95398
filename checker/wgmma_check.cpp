// wgmma descriptor/layout conformity (AG2060). Two independent address maps
// meet here: the hardware model of what a descriptor reads
// (ir::wgmmaReadAddress, from the PTX ISA's descriptor text) and the buffer's
// own element -> byte map (its row-major offset through ir::Swizzle::apply,
// which every other access to the buffer uses). Both are evaluated for every
// element an operand's descriptors cover: a few thousand integer evaluations
// per dot.
//
// Stages: a view's offsets that are not constants (the pipeline's stage j % S,
// a runtime row offset) take every value that keeps the view in the buffer. Both
// maps are the same function of an origin's byte offset modulo the period of
// the two swizzles (1024 bytes for the patterns wgmma reads; buffers are
// 1024-byte aligned), so one origin per residue stands for all of them: every
// stage is covered, and the counterexample names the first that fails.
#include "checker/wgmma_check.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "checker/invariant_check.h"
#include "ir/bulk.h"
#include "ir/ops.h"

namespace argus::checker {

using ir::Op;
using ir::OpKind;

namespace {

bool isSixteenBit(ir::DType t) { return t == ir::DType::BF16 || t == ir::DType::F16; }

const Op* viewOpOf(const ir::Function& fn, ir::ValueId operand) {
  const Op* def = operand < fn.values.size() ? fn.values[operand].def : nullptr;
  return def && def->kind == OpKind::View && !def->operands.empty() ? def : nullptr;
}

// The descriptor of one operand: codegen's, or (derived = false) the one a
// refused layout's rows would need; nullopt when the operand is no 16-bit
// shared view at all.
std::optional<ir::WgmmaDescriptor> operandDescriptor(const ir::Function& fn, const Op& dot, size_t which,
                                                     bool* derived) {
  const ir::Type& t = fn.typeOf(dot.operands[which]);
  const Op* view = viewOpOf(fn, dot.operands[which]);
  const ir::Type* buffer = view ? &fn.typeOf(ir::ViewOp(*view).base()) : nullptr;
  ir::WgmmaDescriptor d;
  if (ir::wgmmaOperandProblem(t, buffer, which == 0 ? "a" : "b", &d).empty()) {
    *derived = true;
    return d;
  }
  *derived = false;
  if (t.kind != ir::TypeKind::View || t.space != ir::MemSpace::Shared || !buffer || !isSixteenBit(t.dtype) ||
      buffer->shape.size() < 2)
    return std::nullopt;
  const auto isSpan = [](int64_t bytes) { return bytes == 32 || bytes == 64 || bytes == 128; };
  const int64_t rowBytes = buffer->shape.back() * 2;
  if (isSpan(rowBytes)) return ir::wgmmaDescriptorForSpan(static_cast<int>(rowBytes));
  const int swizzleBytes = ir::tmaSwizzleBytes(t.swizzle, t.dtype);
  if (isSpan(swizzleBytes)) return ir::wgmmaDescriptorForSpan(swizzleBytes);
  return std::nullopt;
}

}  // namespace

// B stored (K, N) (p @ v with A in registers, or A @ B with A shared): MN-major, its rows
// N elements. Codegen's descriptor when those rows are one swizzle span of the buffer's
// own pattern (or panels of one), else the one they would need.
std::optional<ir::WgmmaDescriptor> mnMajorDescriptor(const ir::Function& fn, const Op& dot, bool* derived) {
  const ir::ValueId b = ir::DotOp(dot).b();  // derivedWgmmaDescriptors: a dot
  const ir::Type& t = fn.typeOf(b);
  const Op* view = viewOpOf(fn, b);
  const ir::Type* buffer = view ? &fn.typeOf(ir::ViewOp(*view).base()) : nullptr;
  if (t.kind != ir::TypeKind::View || t.space != ir::MemSpace::Shared || !buffer || !isSixteenBit(t.dtype) ||
      buffer->shape.size() < 2 || t.shape.size() != 2)
    return std::nullopt;
  ir::WgmmaDescriptor d;
  if (ir::wgmmaMnMajorOperandProblem(t, buffer, t.shape.back(), &d).empty()) {
    *derived = true;
    return d;
  }
  *derived = false;
  const auto isSpan = [](int64_t bytes) { return bytes == 32 || bytes == 64 || bytes == 128; };
  const int64_t rowBytes = buffer->shape.back() * 2;
  const int swizzleBytes = ir::tmaSwizzleBytes(t.swizzle, t.dtype);
  if (isSpan(rowBytes)) return ir::wgmmaMnMajorDescriptorForSpan(static_cast<int>(rowBytes));
  if (isSpan(swizzleBytes)) return ir::wgmmaMnMajorDescriptorForSpan(swizzleBytes);
  return std::nullopt;
}

std::optional<WgmmaDotDescriptors> derivedWgmmaDescriptors(const ir::Function& fn, const Op& dot) {
  if (dot.kind != OpKind::Dot || dot.operands.size() != 3) return std::nullopt;
  const ir::DotOp dotOp(dot);
  if (!fn.typeOf(dotOp.acc()).layout.wgmma) return std::nullopt;
  if (fn.typeOf(dotOp.a()).isTile()) {
    if (dotOp.transB()) return std::nullopt;  // codegen reads p @ v's B only as stored (K, N)
    WgmmaDotDescriptors out;
    std::optional<ir::WgmmaDescriptor> b = mnMajorDescriptor(fn, dot, &out.bDerived);
    if (!b) return std::nullopt;
    out.b = *b;
    out.aInRegisters = true;
    out.bMnMajor = true;
    return out;
  }
  WgmmaDotDescriptors out;
  out.bMnMajor = !dotOp.transB();  // B stored (K, N)
  std::optional<ir::WgmmaDescriptor> a = operandDescriptor(fn, dot, 0, &out.aDerived);
  std::optional<ir::WgmmaDescriptor> b =
      out.bMnMajor ? mnMajorDescriptor(fn, dot, &out.bDerived) : operandDescriptor(fn, dot, 1, &out.bDerived);
  if (!a || !b) return std::nullopt;
  out.a = *a;
  out.b = *b;
  return out;
}

namespace {

constexpr int64_t kElementBytes = 2;  // wgmma's descriptor operands here are bf16 or f16

// One origin of the operand's view in its buffer (offsets per buffer dimension).
struct Origin {
  std::vector<int64_t> offsets;
  int64_t linear = 0;  // row-major element offset
};

struct Mismatch {
  int64_t group = 0, row = 0, k = 0;  // row within the descriptor's rows
  std::vector<int64_t> element;       // buffer coordinate
  int64_t start = 0, read = 0, stored = 0;
};

class OperandCheck {
 public:
  // `mnMajor`: B stored (K, N) and read transposed; its view's rows are K.
  OperandCheck(const ir::Function& fn, const Op& dot, size_t which, bool mnMajor)
      : fn_(fn), dot_(dot), which_(which), mnMajor_(mnMajor) {}

  // False when the operand's shapes are not ones a descriptor walks (code generation reports them).
  bool prepare() {
    view_ = viewOpOf(fn_, dot_.operands[which_]);
    if (!view_) return false;
    buffer_ = ir::ViewOp(*view_).base();
    const ir::Type& t = fn_.typeOf(dot_.operands[which_]);
    const ir::Type& bt = fn_.typeOf(buffer_);
    const size_t rank = bt.shape.size();
    if (t.shape.size() != 2 || rank < 2 || view_->operands.size() != rank + 1) return false;
    rows_ = t.shape[0];
    k_ = t.shape[1];
    if (mnMajor_ && rows_ % ir::kWgmmaKStep != 0) return false;
    groups_ = which_ == 0 ? rows_ / ir::kWgmmaRowsPerWarpgroup : 1;
    rowsPerDescriptor_ = which_ == 0 ? ir::kWgmmaRowsPerWarpgroup : rows_;
    if (groups_ < 1 || groups_ * rowsPerDescriptor_ != rows_) return false;
    strides_.assign(rank, 1);
    for (size_t d = rank - 1; d-- > 0;) strides_[d] = strides_[d + 1] * bt.shape[d + 1];
    swizzle_ = bt.swizzle;
    return enumerateOrigins(t, bt);
  }

  const ir::Swizzle& bufferSwizzle() const { return swizzle_; }
  std::string bufferName() const { return sharedName(fn_, buffer_); }

  std::optional<Mismatch> firstMismatch(const ir::WgmmaDescriptor& d, const ir::Swizzle& swizzle) const {
    if (mnMajor_) return firstMnMajorMismatch(d, swizzle);
    const size_t rank = strides_.size();
    const int64_t steps = (k_ + ir::kWgmmaKStep - 1) / ir::kWgmmaKStep;
    std::vector<uint64_t> descriptors(static_cast<size_t>(steps));
    for (const Origin& origin : origins_)
      for (int64_t g = 0; g < groups_; ++g) {
        const int64_t groupStart = swizzle.place(origin.linear) * kElementBytes + g * d.warpgroupBytes;
        for (int64_t s = 0; s < steps; ++s)
          descriptors[static_cast<size_t>(s)] =
              ir::encodeWgmmaDescriptor(d, static_cast<uint32_t>(groupStart + ir::wgmmaStepOffsetBytes(d, s)));
        for (int64_t row = 0; row < rowsPerDescriptor_; ++row) {
          const int64_t viewRow = g * rowsPerDescriptor_ + row;
          for (int64_t k = 0; k < k_; ++k) {
            const uint64_t desc = descriptors[static_cast<size_t>(k / ir::kWgmmaKStep)];
            const int64_t read = ir::wgmmaReadAddress(desc, row, k % ir::kWgmmaKStep);
            const int64_t linear = origin.linear + viewRow * strides_[rank - 2] + k * strides_[rank - 1];
            const int64_t stored = swizzle.apply(linear) * kElementBytes;
            if (read == stored) continue;
            Mismatch m{g, row, k, origin.offsets, groupStart + ir::wgmmaStepOffsetBytes(d, k / ir::kWgmmaKStep), read,
                       stored};
            m.element[rank - 2] += viewRow;
            m.element[rank - 1] += k;
            return m;
          }
        }
      }
    return std::nullopt;
  }

  // The MN-major walk: element (k, n) of the view, k its row, through the descriptor of
  // K step k / 16 (start + step * kStepBytes) at (n, k % 16).
  std::optional<Mismatch> firstMnMajorMismatch(const ir::WgmmaDescriptor& d, const ir::Swizzle& swizzle) const {
    const size_t rank = strides_.size();
    for (const Origin& origin : origins_)
      for (int64_t row = 0; row < rows_; ++row) {
        const int64_t start =
            swizzle.place(origin.linear) * kElementBytes + ir::wgmmaStepOffsetBytes(d, row / ir::kWgmmaKStep);
        const uint64_t desc = ir::encodeWgmmaDescriptor(d, static_cast<uint32_t>(start));
        for (int64_t n = 0; n < k_; ++n) {
          const int64_t read = ir::wgmmaReadAddressMnMajor(desc, n, row % ir::kWgmmaKStep);
          const int64_t linear = origin.linear + row * strides_[rank - 2] + n * strides_[rank - 1];
          const int64_t stored = swizzle.apply(linear) * kElementBytes;
          if (read == stored) continue;
          Mismatch m{0, row, n, origin.offsets, start, read, stored};
          m.element[rank - 2] += row;
          m.element[rank - 1] += n;
          return m;
        }
      }
    return std::nullopt;
  }

  std::string report(const ir::WgmmaDescriptor& d, bool derived, const Mismatch& m) const {
    const std::string buffer = sharedName(fn_, buffer_);
    const std::string name = which_ == 0 ? "a" : "b";
    std::string who = which_ == 0 ? (groups_ > 1 ? "warpgroup " + std::to_string(m.group) : "the warpgroup")
                                  : "every warpgroup";
    std::string element = buffer + "[";
    for (size_t i = 0; i < m.element.size(); ++i) element += (i ? ", " : "") + std::to_string(m.element[i]);
    element += "]";
    const int64_t viewRow = m.group * rowsPerDescriptor_ + m.row;
    std::string text = who + " reads " + name + "[" + std::to_string(viewRow) + ", " + std::to_string(m.k) +
                       "] (" + element + ") through the " + (mnMajor_ ? "transposed (MN-major) " : "") +
                       "descriptor of K step " + std::to_string((mnMajor_ ? m.row : m.k) / ir::kWgmmaKStep) + " (" +
                       describe(d) + ", start at byte " +
                       std::to_string(m.start) + " of '" + buffer + "') at byte " + std::to_string(m.read) +
                       ", but the buffer stores that element at byte " + std::to_string(m.stored) + "; ";
    return text + fix(d, derived);
  }

 private:
  static std::string describe(const ir::WgmmaDescriptor& d) {
    std::string s = d.mode == ir::WgmmaSwizzleMode::None
                        ? "no swizzle, leading byte offset " + std::to_string(d.leadingByteOffset) + ", "
                        : std::to_string(int64_t{16} << (4 - static_cast<int>(d.mode))) + "-byte swizzle, ";
    if (d.mode != ir::WgmmaSwizzleMode::None && d.mnMajor && d.panelBytes > 0)
      s += "leading byte offset " + std::to_string(d.leadingByteOffset) + " (from one panel of N to the next), ";
    return s + "stride byte offset " + std::to_string(d.strideByteOffset);
  }

  std::string fix(const ir::WgmmaDescriptor& d, bool derived) const {
    const std::string buffer = sharedName(fn_, buffer_);
    const ir::DType dtype = fn_.typeOf(buffer_).dtype;
    const int base = ir::tmaSwizzleBase(dtype);
    for (int bits = 3; bits >= 1 && base >= 0; --bits) {
      ir::Swizzle candidate = swizzle_;
      candidate.bits = bits;
      candidate.base = base;
      candidate.shift = 3;
      if (candidate == swizzle_ || firstMismatch(d, candidate)) continue;
      return "declare '" + buffer + "' with swizzle=(" + std::to_string(bits) + ", " + std::to_string(base) +
             ", 3), the layout the descriptor reads (TMA's " + std::to_string(16 << bits) + "-byte pattern)";
    }
    const int64_t rowBytes = fn_.typeOf(buffer_).shape.back() * kElementBytes;
    const bool span = rowBytes == 32 || rowBytes == 64 || rowBytes == 128 || swizzle_.hasPanels();
    if (mnMajor_ && !span)
      return "a row of '" + buffer + "' is " + std::to_string(rowBytes) +
             " bytes, but wgmma reads a B stored (K, N) in rows of exactly 32, 64 or 128 bytes (one swizzle span): "
             "split N into panels of at most 64 elements, one buffer and one dot per panel, each with swizzle=(3, 3, 3)";
    if (!span)
      return "a row of '" + buffer + "' is " + std::to_string(rowBytes) +
             " bytes, but wgmma reads K-major rows of exactly 32, 64 or 128 bytes (one swizzle span): split K "
             "into panels of at most 64 elements, one buffer and one dot per panel, each with swizzle=(3, 3, 3)";
    if (!derived)
      return "give '" + buffer + "' " + (mnMajor_ ? "rows of N" : "K-major rows") +
             " of 32, 64 or 128 bytes with swizzle=(1, 3, 3), (2, 3, 3) or (3, 3, 3)";
    return "the buffer's layout is one wgmma reads, so this descriptor is the compiler's error (it should be: " +
           describe(swizzle_.hasPanels() ? d
                    : mnMajor_ ? ir::wgmmaMnMajorDescriptorForSpan(static_cast<int>(rowBytes))
                               : ir::wgmmaDescriptorForSpan(static_cast<int>(rowBytes))) +
           "); please report it";
  }

  // Origins of the view, one per residue of its byte offset modulo the swizzles' period.
  bool enumerateOrigins(const ir::Type& view, const ir::Type& bt) {
    const size_t rank = bt.shape.size();
    int64_t period = 1024;
    if (!swizzle_.isIdentity())
      period = std::max(period, (int64_t{1} << (swizzle_.base + swizzle_.shift + swizzle_.bits)) * kElementBytes);
    origins_ = {Origin{std::vector<int64_t>(rank, 0), 0}};
    for (size_t d = 0; d < rank; ++d) {
      const int64_t extent = d + 2 >= rank ? view.shape[d + 2 - rank] : 1;
      const int64_t maxOffset = bt.shape[d] - extent;
      if (maxOffset < 0) return false;
      int64_t first = 0, last = maxOffset;
      if (std::optional<int64_t> offset = ir::constantInt(fn_, view_->operands[d + 1])) {
        if (*offset < 0 || *offset > maxOffset) return false;
        first = last = *offset;
      } else {
        // Offsets past one period of this dimension repeat a residue already seen.
        const int64_t repeat = period / std::gcd(period, swizzle_.place(strides_[d]) * kElementBytes);
        last = std::min(last, repeat - 1);
      }
      std::map<int64_t, size_t> seen;
      std::vector<Origin> next;
      for (const Origin& o : origins_)
        for (int64_t v = first; v <= last; ++v) {
          Origin n = o;
          n.offsets[d] = v;
          n.linear += v * strides_[d];
          if (seen.emplace((swizzle_.place(n.linear) * kElementBytes) % period, next.size()).second)
            next.push_back(std::move(n));
        }
      origins_ = std::move(next);
    }
    return true;
  }

  const ir::Function& fn_;
  const Op& dot_;
  size_t which_;
  bool mnMajor_ = false;
  const Op* view_ = nullptr;
  ir::ValueId buffer_ = ir::kNoValue;
  ir::Swizzle swizzle_;
  int64_t rows_ = 0, k_ = 0, groups_ = 1, rowsPerDescriptor_ = 0;
  std::vector<int64_t> strides_;
  std::vector<Origin> origins_;
};

void checkBlock(const ir::Function& fn, const ir::Block& block, DiagnosticSink& diags,
                const WgmmaDescriptorSource& descriptors) {
  for (const auto& op : block.ops) {
    for (const ir::Block& region : op->regions) checkBlock(fn, region, diags, descriptors);
    if (op->kind != OpKind::Dot || op->operands.size() != 3) continue;
    std::optional<WgmmaDotDescriptors> plan = descriptors(fn, *op);
    if (!plan) continue;
    for (size_t which : {size_t{0}, size_t{1}}) {
      if (which == 0 && plan->aInRegisters) continue;
      OperandCheck check(fn, *op, which, which == 1 && plan->bMnMajor);
      if (!check.prepare()) continue;
      const ir::WgmmaDescriptor& d = which == 0 ? plan->a : plan->b;
      const bool derived = which == 0 ? plan->aDerived : plan->bDerived;
      std::optional<Mismatch> m = check.firstMismatch(d, check.bufferSwizzle());
      if (!m) continue;
      diags.report(DiagId::WgmmaDescriptorLayout, op->range,
                   {which == 0 ? "a" : "b", check.bufferName(), check.report(d, derived, *m)});
    }
  }
}

}  // namespace

void checkWgmmaDescriptors(const ir::Function& fn, DiagnosticSink& diags, const WgmmaDescriptorSource& descriptors) {
  checkBlock(fn, fn.body, diags, descriptors);
}

}  // namespace argus::checker

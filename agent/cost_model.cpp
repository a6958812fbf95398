// The analytical cost model (agent/cost_model.h; the model and its limits are
// described in docs/agent/evaluation.md). One walk over a kernel's Tile IR
// counts, per block, what every op moves and computes, multiplied by the trip
// counts of the loops around it (evaluated at the task's sizes); the grid
// turns per-block counts into totals; occupancy comes from the per-block
// resources.
#include "agent/cost_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "driver/metadata.h"
#include "ir/ir.h"
#include "ir/ops.h"
#include "ir/register_estimate.h"
#include "runtime/interp/numeric.h"

namespace argus::agent {
namespace {

using ir::OpKind;

// Block-uniform scalar values that depend only on sizes and constants (loop
// bounds, branch conditions); anything else (loop indices, loads) is unknown.
class ScalarValues {
 public:
  ScalarValues(const ir::Function& fn, const Sizes& sizes) {
    for (const ir::Param& p : fn.params) {
      if (p.kind != ir::ParamKind::Size) continue;
      auto it = sizes.find(p.name);
      known_[p.value] = it == sizes.end() ? 1 : it->second;
    }
    std::vector<int64_t> ordered;
    for (const std::string& name : fn.sizeNames) {
      auto it = sizes.find(name);
      ordered.push_back(it == sizes.end() ? 1 : it->second);
    }
    for (size_t axis = 0; axis < 3; ++axis)
      if (!fn.grid[axis].evaluate(ordered, gridExtent_[axis])) gridExtent_[axis] = 1;
  }

  std::optional<int64_t> get(ir::ValueId id) const {
    auto it = known_.find(id);
    if (it == known_.end()) return std::nullopt;
    return it->second;
  }

  void set(ir::ValueId id, std::optional<int64_t> v) {
    if (v) known_[id] = *v;
    else known_.erase(id);
  }

  // Records the op's result when its operands are known (and forgets a value
  // known from an earlier loop iteration when they are not).
  void evaluate(const ir::Function& fn, const ir::Op& op) {
    if (op.results.size() != 1 || !fn.typeOf(op.results[0]).isScalar()) return;
    known_.erase(op.results[0]);
    ir::DType dtype = fn.typeOf(op.results[0]).dtype;
    if (ir::isFloat(dtype)) return;
    std::vector<int64_t> args;
    for (ir::ValueId v : op.operands) {
      std::optional<int64_t> x = get(v);
      if (!x) return;
      args.push_back(*x);
    }
    std::optional<int64_t> r;
    switch (op.kind) {
      case OpKind::Const: r = ir::ConstOp(op).intValue(); break;
      case OpKind::ProgramId: r = 0; break;  // a representative block
      case OpKind::NumPrograms: {
        // A persistent kernel's tile loop steps by the grid: block 0 runs its share of the tiles.
        int64_t axis = ir::gridAxisOf(op);
        if (axis >= 0 && axis < 3) r = gridExtent_[axis];
        break;
      }
      // Integer arithmetic as the generated code and the interpreter compute it (i32 wraps,
      // division truncates): the interpreter's element semantics, not a second copy of them.
      case OpKind::Cast: {
        const ir::DType from = fn.typeOf(ir::CastOp(op).x()).dtype;
        if (!ir::isFloat(from)) r = interp::num::cast(from, dtype, element(args.at(0))).i;
        break;
      }
      case OpKind::Select: r = args.at(0) ? args.at(1) : args.at(2); break;
      case OpKind::Binary: {
        interp::Elem out;
        std::string fault;
        if (interp::num::binary(ir::BinaryOp(op).binaryKind(), dtype, element(args.at(0)), element(args.at(1)), out, fault))
          r = out.i;
        break;
      }
      case OpKind::Compare: {
        const ir::CompareOp compare(op);
        r = interp::num::compare(compare.cmpKind(), fn.typeOf(compare.lhs()).dtype, element(args.at(0)), element(args.at(1)));
        break;
      }
      default: break;
    }
    if (r) known_[op.results[0]] = *r;
  }

 private:
  static interp::Elem element(int64_t value) {
    interp::Elem e;
    e.i = value;
    return e;
  }

  std::map<ir::ValueId, int64_t> known_;
  int64_t gridExtent_[3] = {1, 1, 1};
};

double elementBytes(ir::DType t) { return std::max(1, ir::dtypeBits(t) / 8); }

// Per-block counts of one walk.
struct BlockCounts {
  double tensorCoreFlops = 0, wgmmaFlops = 0, cudaCoreFlops = 0;
  double cudaCoreWork = 0;  // CUDA-core FLOPs plus a wasted FLOP per unfused instruction
  double globalBytes = 0, sharedBytes = 0;
  double accumulatorRegisters = 0;  // per thread, over the kernel's dot accumulators
  double carriedRegisters = 0;      // per thread, the tiles the largest loop carries
  double fragmentRegisters = 0;     // per thread, operands of one k step (largest dot)
  double largestTileRegisters = 0;  // per thread, the largest other register tile
  int pipelineStages = 1;
  bool tensorCores = false;
};

class Walker {
 public:
  Walker(const ir::Function& fn, const Sizes& sizes) : fn_(fn), scalars_(fn, sizes) {}

  BlockCounts run() {
    walk(fn_.body, 1.0);
    return counts_;
  }

 private:
  double tileRegisters(ir::ValueId v) const {
    const ir::Type& t = fn_.typeOf(v);
    if (!t.isTile()) return 0;
    return static_cast<double>(t.numElements()) * elementBytes(t.dtype) / 4.0 / static_cast<double>(fn_.numThreads());
  }

  bool contains(const ir::Block& block, OpKind kind) const {
    for (const auto& op : block.ops) {
      if (op->kind == kind) return true;
      for (const ir::Block& r : op->regions)
        if (contains(r, kind)) return true;
    }
    return false;
  }

  void dot(const ir::Op& op, double mult) {
    const ir::Type& acc = fn_.typeOf(op.operands.at(2));
    const ir::Type& a = fn_.typeOf(op.operands.at(0));
    double m = static_cast<double>(acc.shape.at(0)), n = static_cast<double>(acc.shape.at(1));
    double k = static_cast<double>(a.shape.at(1));
    double flops = 2 * m * n * k * mult;
    double bytes = elementBytes(a.dtype);
    bool aInShared = a.kind == ir::TypeKind::View;
    bool mma = acc.layout.isMma() && (a.dtype == ir::DType::BF16 || a.dtype == ir::DType::F16);
    if (mma && acc.layout.wgmma) {
      // wgmma reads its operands from shared memory: each warpgroup its rows of A (or none
      // from registers) and all of B, once per k step; no fragments in registers.
      counts_.wgmmaFlops += flops;
      counts_.tensorCores = true;
      double warpgroups = static_cast<double>(acc.layout.warpsM) / 4;
      counts_.sharedBytes += ((aInShared ? m * k : 0) + k * n * warpgroups) * bytes * mult;
    } else if (mma) {
      counts_.tensorCoreFlops += flops;
      counts_.tensorCores = true;
      // Each warp reads its rows of A and its columns of B once per k step (ldmatrix).
      double wm = static_cast<double>(acc.layout.warpsM), wn = static_cast<double>(acc.layout.warpsN);
      counts_.sharedBytes += ((aInShared ? m * k * wn : 0) + k * n * wm) * bytes * mult;
      counts_.fragmentRegisters = std::max(counts_.fragmentRegisters, (m / wm / 16) * 4 + (n / wn / 8) * 2);
    } else {
      counts_.cudaCoreFlops += flops;
      counts_.cudaCoreWork += flops;
      // A thread holding a (v0 x v1) block of the accumulator reads v0 A and v1 B values per k.
      ir::Distribution d = ir::Distribution::of(acc.layout, fn_.numWarps);
      double v0 = static_cast<double>(d.values.at(0)), v1 = static_cast<double>(d.values.at(1));
      counts_.sharedBytes += static_cast<double>(fn_.numThreads()) * k * (v0 + v1) * bytes * mult;
      counts_.fragmentRegisters = std::max(counts_.fragmentRegisters, v0 + v1);
    }
    if (countedAccumulators_.insert(&op).second) counts_.accumulatorRegisters += tileRegisters(op.operands.at(2));
  }

  void memory(const ir::Type& view, double mult) {
    if (view.kind != ir::TypeKind::View) return;
    double bytes = static_cast<double>(view.numElements()) * elementBytes(view.dtype);
    if (view.space == ir::MemSpace::Global) {
      // DRAM moves 32-byte sectors: each row of the tile (contiguous along the tensor's
      // last dimension) costs whole sectors, so a column of bf16 moves 16x its bytes.
      double row = view.shape.empty() ? 1 : static_cast<double>(view.shape.back());
      double rows = static_cast<double>(view.numElements()) / std::max(row, 1.0);
      bytes = rows * std::ceil(row * elementBytes(view.dtype) / 32) * 32;
      counts_.globalBytes += bytes * mult;
    } else {
      counts_.sharedBytes += bytes * mult;
    }
  }

  // CUDA-core work in FMA-equivalent FLOPs: every instruction occupies an FMA slot, so
  // a separate multiply and add cost twice a fused one.
  void elementwise(const ir::Op& op, double mult) {
    if (op.results.empty()) return;
    const ir::Type& t = fn_.typeOf(op.results[0]);
    if (!t.isTile() || !ir::isFloat(t.dtype)) return;
    double elements = static_cast<double>(t.numElements()) * mult;
    counts_.cudaCoreWork += 2 * elements;
    if (op.kind != OpKind::Cast) counts_.cudaCoreFlops += (op.kind == OpKind::Fma ? 2 : 1) * elements;
  }

  void loop(const ir::Op& op, double mult) {
    std::optional<int64_t> lb = scalars_.get(op.operands.at(0)), ub = scalars_.get(op.operands.at(1)),
                           step = scalars_.get(op.operands.at(2));
    double trips = 1;  // unknown bounds: counted once
    if (lb && ub && step && *step > 0) trips = static_cast<double>(std::max<int64_t>(0, (*ub - *lb + *step - 1) / *step));
    double carried = 0;
    for (ir::ValueId r : op.results) carried += tileRegisters(r);
    counts_.carriedRegisters = std::max(counts_.carriedRegisters, carried);
    const ir::Block& body = op.regions.at(0);
    if (contains(body, OpKind::Dot)) {
      // A TMA pipeline keeps as many stages in flight as its ring of mbarriers is long.
      counts_.pipelineStages = std::max<int>(counts_.pipelineStages, static_cast<int>(mbarrierRing(body)));
      // The main loop: a pipelined one waits for all but S-2 groups at the top.
      for (const auto& inner : body.ops)
        if (inner->kind == OpKind::WaitGroup && contains(body, OpKind::CopyAsync))
          counts_.pipelineStages = std::max<int>(counts_.pipelineStages, static_cast<int>(ir::WaitGroupOp(*inner).pending()) + 2);
    }
    // Small loops run iteration by iteration, so that conditions on the loop index (a
    // pipeline's `if j + S - 1 < n` copies) count exactly; larger ones are multiplied.
    double ops = static_cast<double>(countOps(body));
    bool exact = lb && ub && step && *step > 0 && trips <= 65536 && trips * ops <= visitsLeft_;
    if (!exact) {
      for (ir::ValueId arg : body.args) scalars_.set(arg, std::nullopt);
      walk(body, mult * trips);
      return;
    }
    for (int64_t iv = *lb; iv < *ub; iv += *step) {
      for (size_t a = 0; a < body.args.size(); ++a) scalars_.set(body.args[a], a == 0 ? std::optional<int64_t>(iv) : std::nullopt);
      walk(body, mult);
    }
  }

  // The longest ring of mbarriers an mbarrier_wait of the block waits on (1: none); an
  // explicit stack, not recursion, however deep the loops nest.
  int64_t mbarrierRing(const ir::Block& block) const {
    int64_t ring = 1;
    std::vector<const ir::Block*> pending{&block};
    while (!pending.empty()) {
      const ir::Block* b = pending.back();
      pending.pop_back();
      for (const auto& op : b->ops) {
        if (auto wait = ir::as<ir::MbarrierWaitOp>(*op)) {
          const std::vector<int64_t>& shape = fn_.typeOf(wait->bars()).shape;
          if (!shape.empty()) ring = std::max(ring, shape[0]);
        }
        for (const ir::Block& r : op->regions) pending.push_back(&r);
      }
    }
    return ring;
  }

  size_t countOps(const ir::Block& block) const {
    size_t n = 0;
    for (const auto& op : block.ops) {
      ++n;
      for (const ir::Block& r : op->regions) n += countOps(r);
    }
    return n;
  }

  void walk(const ir::Block& block, double mult) {
    for (const auto& opPtr : block.ops) {
      const ir::Op& op = *opPtr;
      visitsLeft_ -= 1;
      scalars_.evaluate(fn_, op);
      switch (op.kind) {
        case OpKind::For: loop(op, mult); break;
        case OpKind::If: {
          // A known condition picks its branch; an unknown one counts the then-branch.
          std::optional<int64_t> cond = scalars_.get(op.operands.at(0));
          walk(op.regions.at(cond && *cond == 0 ? 1 : 0), mult);
          break;
        }
        case OpKind::Dot: dot(op, mult); break;
        case OpKind::Load:
          memory(fn_.typeOf(op.operands.at(0)), mult);
          counts_.largestTileRegisters = std::max(counts_.largestTileRegisters, tileRegisters(op.results.at(0)));
          break;
        case OpKind::Store: memory(fn_.typeOf(op.operands.at(0)), mult); break;
        case OpKind::CopyAsync:
        case OpKind::CopyBulk:
          memory(fn_.typeOf(op.operands.at(0)), mult);
          memory(fn_.typeOf(op.operands.at(1)), mult);
          break;
        case OpKind::ConvertLayout:
        case OpKind::Reshape: {
          const ir::Type& t = fn_.typeOf(op.operands.at(0));
          counts_.sharedBytes += 2.0 * static_cast<double>(t.numElements()) * elementBytes(t.dtype) * mult;
          break;
        }
        case OpKind::Binary:
        case OpKind::Unary:
        case OpKind::Fma:
        case OpKind::Cast:
          elementwise(op, mult);
          break;
        case OpKind::Reduce:
        case OpKind::ReduceAll: {
          const ir::Type& t = fn_.typeOf(op.operands.at(0));
          if (t.isTile() && ir::isFloat(t.dtype)) {
            counts_.cudaCoreFlops += static_cast<double>(t.numElements()) * mult;
            counts_.cudaCoreWork += 2 * static_cast<double>(t.numElements()) * mult;
          }
          break;
        }
        default: break;
      }
    }
  }

  const ir::Function& fn_;
  ScalarValues scalars_;
  BlockCounts counts_;
  double visitsLeft_ = 2e6;  // op visits of iteration-by-iteration loops
  std::set<const ir::Op*> countedAccumulators_;  // a dot's accumulator counts once, not per iteration
};

// Every loop in walk order, each body visited once with its index at the lower
// bound (the first iteration of block 0); an explicit stack, not recursion.
std::vector<std::optional<int64_t>> tripCounts(const ir::Function& fn, const Sizes& sizes) {
  ScalarValues scalars(fn, sizes);
  std::vector<std::optional<int64_t>> trips;
  std::vector<std::pair<const ir::Block*, size_t>> stack{{&fn.body, 0}};
  while (!stack.empty()) {
    auto& [block, next] = stack.back();
    if (next >= block->ops.size()) {
      stack.pop_back();
      continue;
    }
    const ir::Op& op = *block->ops[next++];
    scalars.evaluate(fn, op);
    if (op.kind == OpKind::For) {
      std::optional<int64_t> lb = scalars.get(op.operands.at(0)), ub = scalars.get(op.operands.at(1)),
                             step = scalars.get(op.operands.at(2));
      std::optional<int64_t> count;
      if (lb && ub && step && *step > 0) count = std::max<int64_t>(0, (*ub - *lb + *step - 1) / *step);
      trips.push_back(count);
      const ir::Block& body = op.regions.at(0);
      for (size_t a = 0; a < body.args.size(); ++a) scalars.set(body.args[a], a == 0 ? lb : std::nullopt);
    }
    // Regions are pushed last-first so that they are visited in order.
    for (size_t r = op.regions.size(); r-- > 0;) stack.push_back({&op.regions[r], 0});
  }
  return trips;
}

}  // namespace

nlohmann::json CostEstimate::toJson() const {
  return {{"flops", flops},
          {"global_bytes", globalBytes},
          {"dram_bytes", dramBytes},
          {"shared_bytes", sharedBytes},
          {"compute_ms", computeMs},
          {"memory_ms", memoryMs},
          {"shared_ms", sharedMs},
          {"blocks", blocks},
          {"warps_per_block", warpsPerBlock},
          {"blocks_per_sm", blocksPerSm},
          {"shared_bytes_per_block", sharedBytesPerBlock},
          {"registers_per_thread", registersPerThread},
          {"tensor_cores", tensorCores},
          {"pipeline_stages", pipelineStages},
          {"occupancy_factor", occupancyFactor},
          {"time_ms", timeMs},
          {"uncalibrated_ms", uncalibratedMs},
          {"calibration_scale", calibrationScale}};
}

CostEstimate estimateCost(const ir::Function& fn, const Sizes& sizes, double scale, const MachineModel& machine) {
  CostEstimate e;
  BlockCounts counts = Walker(fn, sizes).run();

  std::vector<int64_t> sizeValues;
  for (const std::string& name : fn.sizeNames) {
    auto it = sizes.find(name);
    sizeValues.push_back(it == sizes.end() ? 1 : it->second);
  }
  double blocks = 1;
  for (const ir::LaunchExpr& g : fn.grid) {
    int64_t extent = 1;
    if (g.evaluate(sizeValues, extent)) blocks *= static_cast<double>(std::max<int64_t>(extent, 0));
  }
  e.blocks = static_cast<int>(std::min(blocks, 2e9));
  e.warpsPerBlock = static_cast<int>(fn.numWarps);
  e.sharedBytesPerBlock = static_cast<int>(staticSharedBytes(fn));
  e.tensorCores = counts.tensorCores;
  e.pipelineStages = counts.pipelineStages;

  e.flops = (counts.tensorCoreFlops + counts.wgmmaFlops + counts.cudaCoreFlops) * blocks;
  e.globalBytes = counts.globalBytes * blocks;
  e.sharedBytes = counts.sharedBytes * blocks;
  e.computeMs = (counts.tensorCoreFlops / (machine.tensorCoreTflops * 1e9) +
                 counts.wgmmaFlops / (machine.wgmmaTflops * 1e9) +
                 counts.cudaCoreWork / (machine.cudaCoreTflops * 1e9)) * blocks;
  // Tile loads are L2 traffic; DRAM moves each tensor at least once. Where tiles are not
  // shared (elementwise, row kernels) the two are the same bytes and HBM is the bound.
  for (const ir::Param& p : fn.params) {
    if (p.kind != ir::ParamKind::Tensor) continue;
    double elements = 1;
    for (const ir::DimRef& d : p.dims)
      elements *= static_cast<double>(d.constant >= 0 ? d.constant : sizeValues.at(static_cast<size_t>(d.sizeIndex)));
    e.dramBytes += elements * elementBytes(p.dtype);
  }
  e.memoryMs = std::max(e.dramBytes / (machine.hbmTBps * 1e9), e.globalBytes / (machine.l2TBps * 1e9));
  e.sharedMs = e.sharedBytes / (machine.sharedTBps * 1e9);

  // Registers: addresses and loop state, then the larger of two counts of the tiles: the
  // accumulators (dot accumulators or the tiles a loop carries, whichever is larger), one
  // k step of operands and the largest other tile; or the peak of the live register tiles
  // (ir/register_estimate.h, what AG2033 warns about: a row kernel's row and what is
  // computed from it). Allocated in units of 8 per thread, at most 255 (beyond: spills).
  const double livePeak = static_cast<double>(ir::estimateTileRegisters(fn).registers);
  double registers = 24 + std::max(livePeak, std::max(counts.accumulatorRegisters, counts.carriedRegisters) +
                                                  counts.fragmentRegisters + counts.largestTileRegisters);
  int allocated = static_cast<int>(std::ceil(registers / 8) * 8);
  bool spills = allocated > 255;
  e.registersPerThread = std::min(allocated, 255);

  int threads = e.warpsPerBlock * 32;
  int bySharedMemory = e.sharedBytesPerBlock > 0 ? machine.sharedBytesPerSm / e.sharedBytesPerBlock : machine.maxBlocksPerSm;
  int byWarps = machine.maxWarpsPerSm / std::max(1, e.warpsPerBlock);
  int byRegisters = machine.registersPerSm / std::max(1, e.registersPerThread * threads);
  e.blocksPerSm = std::min({bySharedMemory, byWarps, byRegisters, machine.maxBlocksPerSm});

  double factor = 1;
  if (e.blocksPerSm <= 0) {
    factor = 1e-3;  // the kernel cannot launch: shared memory or registers exceed one SM
  } else {
    // Four sub-schedulers per SM: fewer than four resident warps leave some idle, and a
    // single warp per scheduler cannot hide the latency of its own instructions.
    double warps = static_cast<double>(e.blocksPerSm * e.warpsPerBlock);
    double warpFactor = std::min(1.0, warps / 4) * std::min(1.0, 0.5 + warps / 16);
    // Tile loads in flight per SM: S-1 per block when pipelined; a block that waits for
    // its own synchronous copies (load, barrier, compute, barrier) counts a quarter
    // (fitted loosely to the H200: synchronous gemm_tc runs 4.4x slower than pipelined).
    double inFlight = e.blocksPerSm * (e.pipelineStages >= 2 ? e.pipelineStages - 1 : 0.25);
    double latencyFactor = inFlight / (inFlight + 1);
    // The last wave runs partly empty.
    double waves = blocks / (static_cast<double>(e.blocksPerSm) * machine.multiprocessors);
    double waveFactor = waves > 0 ? waves / std::ceil(waves) : 1;
    factor = warpFactor * latencyFactor * waveFactor * (spills ? 0.5 : 1.0);
  }
  e.occupancyFactor = factor;
  double roofline = std::max({e.computeMs, e.memoryMs, e.sharedMs});
  e.uncalibratedMs = roofline / factor;
  e.calibrationScale = scale;
  e.timeMs = e.uncalibratedMs * scale;
  return e;
}

std::vector<std::optional<int64_t>> loopTripCounts(const ir::Function& fn, const Sizes& sizes) {
  return tripCounts(fn, sizes);
}

double fitCalibrationScale(const std::vector<std::pair<double, double>>& modelledMeasuredMs) {
  double sum = 0;
  int n = 0;
  for (const auto& [modelled, measured] : modelledMeasuredMs) {
    if (!(modelled > 0) || !(measured > 0) || !std::isfinite(modelled) || !std::isfinite(measured)) continue;
    sum += std::log(measured / modelled);
    ++n;
  }
  return n == 0 ? 1.0 : std::exp(sum / n);
}

}  // namespace argus::agent

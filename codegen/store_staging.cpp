// Stores of 16-bit mma tiles to global memory through shared memory (sm_90+).
//
// An mma accumulator gives each thread two adjacent columns of a row, so a
// direct store from registers writes 4 bytes per thread and touches 8 rows per
// warp instruction: on the H200 the epilogue of a 128 x 256 GEMM tile cost
// about 6 us that way, an eighth of the tile's time (bench/results). Here each
// warp instead writes 16 rows x 64 columns of its part with stmatrix into a
// 2 KiB slice of its own, reads them back as 16-byte rows and stores those:
// every warp instruction then writes four whole 128-byte lines. The slice
// swizzles its 16-byte chunks by row (chunk ^ row % 8), so that neither
// stmatrix (eight rows of one chunk) nor the row reads conflict on banks.
//
// Only a warp touches its slice (bar.warp.sync between writing and reading it
// and before the next write), so no block barrier is needed and warp-specialized
// consumers can use it as they are. The path is taken at run time only when the
// tile lies inside its tensor with 16-byte aligned rows. On sm_90a a tile at the
// tensor's edge goes through the same slices and then by one TMA store per slice,
// which clips it (lowerStore, kernelTensorMaps); otherwise the pair or element
// stores of memory.cpp run.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <functional>

#include "codegen/codegen.h"
#include "codegen/lowering.h"

namespace argus::codegen {

namespace {

constexpr int64_t kStagedRows = ir::kStoreSliceRows, kStagedCols = ir::kStoreSliceCols;
constexpr int64_t kSliceBytes = kStagedRows * kStagedCols * 2;

bool hasStmatrix(const std::string& arch) { return arch == "sm_90" || arch == "sm_90a"; }

bool anyStagedStore(const ir::Function& fn, const ir::Block& block, const std::string& arch) {
  for (const auto& op : block.ops) {
    if (stagesStoreThroughShared(fn, *op, arch)) return true;
    for (const ir::Block& region : op->regions)
      if (anyStagedStore(fn, region, arch)) return true;
  }
  return false;
}

}  // namespace

bool stagesStoreThroughShared(const ir::Function& fn, const ir::Op& store, const std::string& arch) {
  return hasStmatrix(arch) && ir::storesThroughSlices(fn, store);
}

int64_t storeStagingBytes(const ir::Function& fn, const std::string& arch, int64_t otherBytes) {
  const bool any = anyStagedStore(fn, fn.body, arch);
  const int64_t bytes = fn.numWarps * kSliceBytes;
  // The staging only speeds stores up: it never costs a kernel its fit in shared memory.
  return any && storeStagingOffset(otherBytes) + bytes <= maxSharedBytesPerBlock(arch) ? bytes : 0;
}

int64_t storeStagingOffset(int64_t otherBytes) {
  return (otherBytes + kStoreStagingAlignment - 1) / kStoreStagingAlignment * kStoreStagingAlignment;
}

std::vector<ir::TensorMapUse> kernelTensorMaps(const ir::Function& fn, const std::string& arch) {
  std::vector<ir::TensorMapUse> maps = ir::tensorMapsOf(fn);
  // sm_90a only: its PTX (ISA 8.0) has the TMA instructions; sm_90's (7.8, LLVM's choice) does not.
  if (arch != "sm_90a" || storeStagingBytes(fn, arch, sharedBytesBeforeStaging(fn)) == 0) return maps;
  std::function<void(const ir::Block&)> walk = [&](const ir::Block& block) {
    for (const auto& op : block.ops) {
      if (stagesStoreThroughShared(fn, *op, arch)) {
        ir::TensorMapUse use = ir::storeTensorMapUse(fn, *op);
        if (ir::tensorOnlyStoredTo(fn, use.param) && ir::tensorMapIndex(fn, maps, *op) < 0)
          maps.push_back(std::move(use));
      }
      for (const ir::Block& region : op->regions) walk(region);
    }
  };
  walk(fn.body);
  return maps;
}

// i1, block-uniform: the view lies inside its tensor and every row of it starts
// 16-byte aligned (base, row length and column offset).
llvm::Value* KernelLowering::tileInsideWithAlignedRows(const Lowered& view) {
  llvm::Value* ok = tileInsideWithEvenRows(view);
  llvm::Value* misaligned = b_.CreateOr(view.extents.back(), view.offsets.back());
  ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateAnd(misaligned, b_.getInt32(7)), b_.getInt32(0)));
  llvm::Value* base = b_.CreatePtrToInt(view.base, b_.getInt64Ty());
  return b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateAnd(base, b_.getInt64(15)), b_.getInt64(0)));
}

// i1, block-uniform: TMA can store into the view's tensor: its base and rows are
// 16-byte aligned. The runtime encodes the store's tensor map under exactly these
// conditions (and passes zeros otherwise); TMA clips the slices at the edges.
llvm::Value* KernelLowering::rowsAlignedForTma(const Lowered& view, ir::DType t) {
  llvm::Value* rowBytes = b_.CreateMul(view.extents.back(), b_.getInt32(static_cast<uint32_t>(dtypeBytes(t))));
  llvm::Value* ok = b_.CreateICmpEQ(b_.CreateAnd(rowBytes, b_.getInt32(15)), b_.getInt32(0));
  llvm::Value* base = b_.CreatePtrToInt(view.base, b_.getInt64Ty());
  return b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateAnd(base, b_.getInt64(15)), b_.getInt64(0)));
}

void KernelLowering::emitStagedStore(const Lowered& view, const ir::Type& tileType, const EmittedLayout& layout,
                                     const std::vector<llvm::Value*>& data, llvm::Value* tensorMap) {
  const ir::Layout& mma = tileType.layout;
  const int64_t atomsM = mma.parent[0] / mma.warpsM / 16, atomsN = mma.parent[1] / mma.warpsN / 8;
  llvm::Value* tid = threadId();
  llvm::Value* lane = b_.CreateAnd(tid, b_.getInt32(31));
  llvm::Value* slice = b_.CreateMul(b_.CreateLShr(tid, b_.getInt32(5)), b_.getInt32(kSliceBytes));
  // The warp's first row and column: value 0 sits at (row0 + lane / 4, col0 + 2 * (lane % 4)).
  std::vector<llvm::Value*> first = tileCoord(layout, 0);
  llvm::Value* row0 = b_.CreateSub(first[0], b_.CreateLShr(lane, b_.getInt32(2)));
  llvm::Value* col0 = b_.CreateSub(first[1], b_.CreateShl(b_.CreateAnd(lane, b_.getInt32(3)), b_.getInt32(1)));
  // (row, 16-byte chunk) of the warp's slice, chunks swizzled by row.
  auto slicePointer = [&](llvm::Value* row, llvm::Value* chunk) {
    llvm::Value* swizzled = b_.CreateXor(chunk, b_.CreateAnd(row, b_.getInt32(7)));
    llvm::Value* byte = b_.CreateAdd(slice, b_.CreateAdd(b_.CreateMul(row, b_.getInt32(kStagedCols * 2)),
                                                         b_.CreateShl(swizzled, b_.getInt32(4))));
    return b_.CreateGEP(b_.getInt8Ty(), storeStaging_, byte);
  };
  auto packed = [&](int64_t v) {
    return packHalfPair(data[static_cast<size_t>(v)], data[static_cast<size_t>(v + 1)], tileType.dtype);
  };
  auto warpSync = [&] { inlinePtx(b_.getVoidTy(), "bar.warp.sync -1;", "~{memory}", {}, true); };
  // stmatrix .x4: lanes 8j..8j+7 address the rows of matrix j; matrix j is row half j % 2 of
  // atom n + j / 2, and register j holds this thread's pair of it.
  // (codegen/fragment_lanes.h; the column is counted in 16-byte chunks of 8 elements).
  const MatrixRowLanes store = accumulatorStoreLanes();
  llvm::Value* matrixRow = laneFormulaValue(store.row, lane);
  llvm::Value* matrixAtom = laneFormulaValue(store.col.inUnitsOf(8), lane);
  auto valueIndex = [&](int64_t m, int64_t n, int64_t h) { return 2 * h + 4 * n + 4 * atomsN * m; };
  llvm::Type* v4 = llvm::FixedVectorType::get(b_.getInt32Ty(), 4);
  // By TMA, lane 0 stores a whole slice with one instruction and, before the
  // warp writes the slice again, waits until TMA has read it.
  llvm::Value* leader = b_.CreateICmpEQ(lane, b_.getInt32(0));
  auto waitForSliceRead = [&] {
    inlinePtx(b_.getVoidTy(), "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p cp.async.bulk.wait_group.read 0; }",
              "r,~{memory}", {b_.CreateZExt(leader, b_.getInt32Ty())}, true);
    warpSync();
  };
  bool sliceInFlight = false;
  for (int64_t m = 0; m < atomsM; ++m) {
    for (int64_t chunk = 0; chunk < atomsN / 8; ++chunk) {
      if (sliceInFlight) waitForSliceRead();
      for (int64_t pair = 0; pair < 4; ++pair) {
        const int64_t n = chunk * 8 + 2 * pair;
        llvm::Value* address = sharedAddress32(
            slicePointer(matrixRow, b_.CreateAdd(matrixAtom, b_.getInt32(static_cast<uint32_t>(2 * pair)))));
        inlinePtx(b_.getVoidTy(), "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};",
                  "r,r,r,r,r,~{memory}",
                  {address, packed(valueIndex(m, n, 0)), packed(valueIndex(m, n, 1)), packed(valueIndex(m, n + 1, 0)),
                   packed(valueIndex(m, n + 1, 1))},
                  true);
      }
      if (tensorMap) {
        // The slice was written through the generic proxy; TMA reads it through the async one.
        inlinePtx(b_.getVoidTy(), "fence.proxy.async.shared::cta;", "~{memory}", {}, true);
        warpSync();
        const size_t rank = view.offsets.size();
        llvm::Value* row =
            b_.CreateAdd(view.offsets[rank - 2], b_.CreateAdd(row0, b_.getInt32(static_cast<uint32_t>(16 * m))));
        llvm::Value* col = b_.CreateAdd(view.offsets[rank - 1],
                                        b_.CreateAdd(col0, b_.getInt32(static_cast<uint32_t>(kStagedCols * chunk))));
        // TMA's coordinates run innermost first: the column, the row, then the leading axes.
        std::vector<llvm::Value*> operands{b_.CreateZExt(leader, b_.getInt32Ty()),
                                           b_.CreatePtrToInt(tensorMap, b_.getInt64Ty()), col, row};
        for (size_t d = rank - 2; d-- > 0;) operands.push_back(view.offsets[d]);
        std::string coords, constraints = "r,l";
        for (size_t i = 0; i < rank; ++i) {
          coords += (i ? ", $" : "$") + std::to_string(i + 2);
          constraints += ",r";
        }
        operands.push_back(sharedAddress32(b_.CreateGEP(b_.getInt8Ty(), storeStaging_, slice)));
        inlinePtx(b_.getVoidTy(),
                  "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p cp.async.bulk.tensor." + std::to_string(rank) +
                      "d.global.shared::cta.bulk_group [$1, {" + coords + "}], [$" + std::to_string(rank + 2) +
                      "]; @p cp.async.bulk.commit_group; }",
                  constraints + ",r,~{memory}", operands, true);
        sliceInFlight = true;
        continue;
      }
      warpSync();
      // 16 rows of 8 chunks: lane l reads chunk l % 8 of rows l / 8, 4 + l / 8, ...
      for (int64_t step = 0; step < kStagedRows * 8 / 32; ++step) {
        llvm::Value* row = b_.CreateAdd(b_.CreateLShr(lane, b_.getInt32(3)), b_.getInt32(static_cast<uint32_t>(4 * step)));
        llvm::Value* col = b_.CreateAnd(lane, b_.getInt32(7));
        auto* load = b_.CreateLoad(v4, slicePointer(row, col));
        load->setAlignment(llvm::Align(16));
        std::vector<llvm::Value*> coord{
            b_.CreateAdd(row0, b_.CreateAdd(row, b_.getInt32(static_cast<uint32_t>(16 * m)))),
            b_.CreateAdd(col0, b_.CreateAdd(b_.CreateShl(col, b_.getInt32(3)),
                                            b_.getInt32(static_cast<uint32_t>(kStagedCols * chunk))))};
        llvm::Value* address = globalAddress(view.base, tileType.dtype, viewElementIndex(view, coord));
        b_.CreateStore(load, address)->setAlignment(llvm::Align(16));
      }
      warpSync();
    }
  }
  if (sliceInFlight) waitForSliceRead();
}

}  // namespace argus::codegen

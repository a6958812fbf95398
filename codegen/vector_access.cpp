// Vectorized global loads and stores of tiles in a vectorized blocked layout
// (Layout::vec, chosen by ir/vector_layout.h for 16-bit row kernels and elementwise
// code): each thread's values v .. v + A - 1 (v a multiple of A) are A adjacent
// elements of a row, moved by one access of up to 16 bytes
// (`@p ld.global.v4.b32` / `@p st.global.v4.b32`), as Triton emits them.
//
// The vector path is taken when a block-uniform test says every access is aligned to
// its width: the tensor's base address, its row length (the last extent; row-major
// tensors then have every row start aligned) and the view's column offset. A group
// then lies wholly inside or wholly outside the tensor, so one predicate (its first
// element's bounds test) guards it. Otherwise the element-wise code of memory.cpp runs,
// so ragged sizes and odd base addresses stay correct.
#include <llvm/IR/Constants.h>

#include "codegen/lowering.h"

namespace argus::codegen {

using ir::DType;

int64_t KernelLowering::vectorAccessElements(DType t, int64_t vec) const {
  const int64_t bytes = dtypeBytes(t);
  if (vec <= 1 || t == DType::Bool) return 0;
  int64_t elements = std::min<int64_t>(vec, 16 / bytes);
  while (elements > 1 && vec % elements != 0) elements /= 2;
  return elements * bytes >= 4 && elements > 1 ? elements : 0;
}

llvm::Value* KernelLowering::vectorAccessAligned(const Lowered& view, DType t, int64_t elements) {
  const uint64_t byteMask = static_cast<uint64_t>(elements * dtypeBytes(t) - 1);
  llvm::Value* base = b_.CreatePtrToInt(view.base, b_.getInt64Ty());
  llvm::Value* ok = b_.CreateICmpEQ(b_.CreateAnd(base, b_.getInt64(byteMask)), b_.getInt64(0));
  const uint32_t elementMask = static_cast<uint32_t>(elements - 1);
  llvm::Value* row = b_.CreateOr(view.extents.back(), view.offsets.back());
  return b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateAnd(row, b_.getInt32(elementMask)), b_.getInt32(0)), "vec.aligned");
}

namespace {

const char* vectorSuffix(int64_t words) { return words == 4 ? ".v4" : words == 2 ? ".v2" : ""; }

std::string registerList(int64_t first, int64_t count) {
  std::string out = count > 1 ? "{" : "";
  for (int64_t i = 0; i < count; ++i) out += (i ? ", $" : "$") + std::to_string(first + i);
  return out + (count > 1 ? "}" : "");
}

}  // namespace

std::vector<llvm::Value*> KernelLowering::vectorGlobalLoad(llvm::Value* addr, DType t, int64_t elements,
                                                            llvm::Value* pred, llvm::Value* other) {
  const int64_t bytes = dtypeBytes(t);
  const int64_t words = elements * bytes / 4;
  const unsigned bits = static_cast<unsigned>(bytes * 8);
  llvm::Type* dataTy = memType(t);
  // `other` as a 32-bit word: its bits repeated for 8- and 16-bit data; 64-bit data takes two words.
  llvm::Value* otherBits = toMemory(other, t);
  if (dataTy->isFloatingPointTy()) otherBits = b_.CreateBitCast(otherBits, b_.getIntNTy(bits));
  std::vector<llvm::Value*> otherWords;
  if (bits == 64) {
    otherWords = {b_.CreateTrunc(otherBits, b_.getInt32Ty()), b_.CreateTrunc(b_.CreateLShr(otherBits, 32), b_.getInt32Ty())};
  } else {
    llvm::Value* w = b_.CreateZExt(otherBits, b_.getInt32Ty());
    for (unsigned k = bits; k < 32; k *= 2) w = b_.CreateOr(w, b_.CreateShl(w, b_.getInt32(k)));
    otherWords = {w};
  }
  // mov each register its `other` word, then the predicated load overwrites them.
  std::string text;
  const int64_t addrOperand = words, predOperand = words + 1, otherOperand = words + 2;
  for (int64_t i = 0; i < words; ++i)
    text += "mov.b32 $" + std::to_string(i) + ", $" +
            std::to_string(otherOperand + static_cast<int64_t>(otherWords.size() == 2 ? i % 2 : 0)) + ";\n\t";
  text += "@$" + std::to_string(predOperand) + " ld.global" + vectorSuffix(words) + ".b32 " + registerList(0, words) +
          ", [$" + std::to_string(addrOperand) + "];";
  std::string constraints;
  for (int64_t i = 0; i < words; ++i) constraints += "=r,";
  constraints += "l,b";
  for (size_t i = 0; i < otherWords.size(); ++i) constraints += ",r";
  std::vector<llvm::Type*> resultTypes(static_cast<size_t>(words), b_.getInt32Ty());
  llvm::Type* resultTy = words == 1 ? static_cast<llvm::Type*>(b_.getInt32Ty()) : llvm::StructType::get(ctx_, resultTypes);
  std::vector<llvm::Value*> args = {addr, pred};
  args.insert(args.end(), otherWords.begin(), otherWords.end());
  llvm::Value* result = inlinePtx(resultTy, text, constraints, args, /*sideEffects=*/true);
  std::vector<llvm::Value*> word;
  for (int64_t i = 0; i < words; ++i)
    word.push_back(words == 1 ? result : b_.CreateExtractValue(result, {static_cast<unsigned>(i)}));
  // The elements, little-endian within and across the words.
  std::vector<llvm::Value*> out;
  for (int64_t e = 0; e < elements; ++e) {
    llvm::Value* raw;
    if (bits == 64) {
      raw = b_.CreateOr(b_.CreateZExt(word[2 * e], b_.getInt64Ty()),
                        b_.CreateShl(b_.CreateZExt(word[2 * e + 1], b_.getInt64Ty()), 32));
    } else {
      llvm::Value* w = word[static_cast<size_t>(e * bytes / 4)];
      const uint32_t shift = static_cast<uint32_t>((e * bytes % 4) * 8);
      if (shift) w = b_.CreateLShr(w, b_.getInt32(shift));
      raw = bits == 32 ? w : b_.CreateTrunc(w, b_.getIntNTy(bits));
    }
    llvm::Value* data = dataTy->isFloatingPointTy() ? b_.CreateBitCast(raw, dataTy) : raw;
    out.push_back(fromMemory(data, t));
  }
  return out;
}

void KernelLowering::vectorGlobalStore(llvm::Value* addr, DType t, const std::vector<llvm::Value*>& elements,
                                       llvm::Value* pred) {
  const int64_t bytes = dtypeBytes(t);
  const int64_t count = static_cast<int64_t>(elements.size());
  const int64_t words = count * bytes / 4;
  std::vector<llvm::Value*> word;
  for (int64_t w = 0; w < words; ++w) {
    if (bytes == 8) {
      llvm::Value* bitsOf = toMemoryBits(elements[static_cast<size_t>(w / 2)], t);
      word.push_back(b_.CreateTrunc(w % 2 ? b_.CreateLShr(bitsOf, 32) : bitsOf, b_.getInt32Ty()));
    } else if (bytes == 4) {
      word.push_back(toMemoryBits(elements[static_cast<size_t>(w)], t));
    } else if (bytes == 2) {
      word.push_back(packHalfPair(elements[static_cast<size_t>(2 * w)], elements[static_cast<size_t>(2 * w + 1)], t));
    } else {
      llvm::Value* packed = nullptr;
      for (int64_t k = 0; k < 4; ++k) {
        llvm::Value* byte = b_.CreateZExt(toMemoryBits(elements[static_cast<size_t>(4 * w + k)], t), b_.getInt32Ty());
        if (k) byte = b_.CreateShl(byte, b_.getInt32(static_cast<uint32_t>(8 * k)));
        packed = packed ? b_.CreateOr(packed, byte) : byte;
      }
      word.push_back(packed);
    }
  }
  auto* constPred = llvm::dyn_cast_or_null<llvm::ConstantInt>(pred);
  const bool always = !pred || (constPred && constPred->isOne());
  std::string text = (always ? std::string() : "@$" + std::to_string(words + 1) + " ") + "st.global" +
                     vectorSuffix(words) + ".b32 [$0], " + registerList(1, words) + ";";
  std::string constraints = "l";
  for (int64_t i = 0; i < words; ++i) constraints += ",r";
  if (!always) constraints += ",b";
  constraints += ",~{memory}";
  std::vector<llvm::Value*> args = {addr};
  args.insert(args.end(), word.begin(), word.end());
  if (!always) args.push_back(pred);
  inlinePtx(b_.getVoidTy(), text, constraints, args, /*sideEffects=*/true);
}

}  // namespace argus::codegen

// Inline-PTX builders for asynchronous copies (cp.async, sm_80+): the
// instruction text, and emitters that call it from LLVM IR. Internal to codegen
// (async_copy.cpp lowers the IR ops with them); tested on their own.
#pragma once

#include <cstdint>
#include <string>

#include <llvm/IR/IRBuilder.h>

#include "ir/types.h"

namespace argus::codegen {

// "@$3 cp.async.cg.shared.global [$0], [$1], 16, $2;" for 16-byte chunks
// (L2 only), ".ca" with 4 or 8 bytes. $2 is the number of source bytes to read
// (0 to chunkBytes); the rest of the chunk is zero-filled. $3 predicates it.
std::string cpAsyncText(int64_t chunkBytes);

// Issues one cp.async of `chunkBytes` (4, 8 or 16) from global `src` (ptr
// addrspace 1) to shared `dst` (ptr addrspace 3); `srcBytes` (i32) are read,
// the rest zero-filled; only where `pred` (i1) holds.
void emitCpAsync(llvm::IRBuilderBase& b, llvm::Value* dst, llvm::Value* src, llvm::Value* srcBytes,
                 llvm::Value* pred, int64_t chunkBytes);
// "cp.async.cg.shared.global [$0], [$1], 16;": the whole chunk, no zero fill and no
// predicate, for chunks known to lie inside the tensor and to be copied by their owner.
std::string cpAsyncWholeChunkText(int64_t chunkBytes);
void emitCpAsyncWholeChunk(llvm::IRBuilderBase& b, llvm::Value* dst, llvm::Value* src, int64_t chunkBytes);
// cp.async.commit_group;
void emitCpAsyncCommitGroup(llvm::IRBuilderBase& b);
// cp.async.wait_group n;  (n >= 0)
void emitCpAsyncWaitGroup(llvm::IRBuilderBase& b, int64_t n);

// True when a shared buffer's swizzle keeps every chunk of `vec` consecutive elements
// contiguous (it moves groups of 2^M elements), so a chunk is one vector access; the
// copies (copy_async, and copy into shared memory) copy element by element otherwise.
bool swizzleKeepsChunksWhole(const ir::Swizzle& swizzle, int64_t vec);

}  // namespace argus::codegen

// Launch metadata of a compiled module, as JSON: what a host-side launcher
// (python/argus) needs to call the kernels of a PTX/cubin file without
// re-parsing the source. Written by argusc beside its output as
// `<output without .ptx/.cubin>.meta.json`.
//
// Format (version 1), one entry per kernel:
//   {"version": 1, "kernels": [{
//     "name": "vadd", "warps": 4, "threads": 128, "producer_warps": 0,
//     "params": [{"name": "x", "kind": "tensor", "dtype": "f32",
//                 "dims": [{"size": "N"} | {"const": 64}, ...]},
//                {"name": "s", "kind": "scalar", "dtype": "f32"},
//                {"name": "eps", "kind": "scalar", "dtype": "f32", "default": 1e-05},  // declared default
//                {"name": "N", "kind": "size", "dtype": "i32"}],   // ABI order
//     "sizes": ["N"],
//     "grid": [expr, expr, expr], "grid_text": ["cdiv(N, 1024)", "1", "1"],
//     "requirements": [{"condition": expr, "condition_text": "N <= 1024",
//                       "text": "message or the condition as written"}],
//     "static_shared_bytes": 8192,
//     "dynamic_shared_bytes": 0,   // > 0: pass this at launch, after raising the kernel's
//                                  // MAX_DYNAMIC_SHARED_SIZE_BYTES attribute to it
//     "tensor_maps": [{"param": "A", "box": [64, 64], "swizzle_bytes": 128}],
//     "constants": {"BLOCK": 1024}}]}
// "tensor_maps" lists the TMA descriptors of a kernel whose copy_bulk copies
// read global memory through TMA (ir::tensorMapsOf order; ir/bulk.h): after the
// size parameters the launcher passes, per entry, a 128-byte, 64-byte aligned
// CUtensorMap from cuTensorMapEncodeTiled for the tensor parameter `param` as
// launched: global address; dims = its extents innermost first; strides (bytes,
// dims 1..rank-1) of its row-major contiguous layout; box = "box" (extents
// outermost first, one per tensor dimension) reversed; element strides 1; no
// interleave; swizzle_bytes 0/32/64/128 = CU_TENSOR_MAP_SWIZZLE_NONE/32B/64B/128B;
// L2 promotion 128B; out-of-bounds elements read as zero; data type from the
// tensor's dtype. Metadata without the key (older argusc) has no maps.
// "threads" is the launch's block size: (warps + producer_warps) * 32, where
// producer_warps > 0 for a warp-specialized pipeline (ir/pipeline.h), whose
// producer warpgroup issues the TMA copies.
// where expr is {"const": 4} | {"size": "N"} | {"op": "cdiv", "args": [expr, ...]}
// with op one of add sub mul floordiv cdiv mod min max lt le gt ge eq ne and or not
// (integer division and modulo truncate toward zero, as ir::LaunchExpr::evaluate).
#pragma once

#include <string>

namespace argus::ir {
struct Module;
struct Function;
struct LaunchExpr;
}  // namespace argus::ir

namespace argus {

constexpr int kKernelMetadataVersion = 1;

// The metadata document of every kernel of the module compiled for `arch` (pretty-printed
// JSON; the arch decides codegen's shared memory, so the launch's dynamic shared bytes).
std::string kernelMetadataJson(const ir::Module& module, const std::string& arch);

// Bytes of static shared memory the kernel's AllocShared ops ask for
// (elements x dtype bytes, summed; codegen's own scratch is not counted).
long long staticSharedBytes(const ir::Function& fn);

// "x.ptx" -> "x.meta.json", "dir/x.cubin" -> "dir/x.meta.json", "x" -> "x.meta.json".
std::string metadataPathFor(const std::string& outputPath);

}  // namespace argus

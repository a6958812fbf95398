// Launching a kernel from its NAME.meta.json (format: driver/metadata.h): the
// metadata is parsed here with nlohmann/json (no dependency on the compiler),
// the grid and the requirements are evaluated on the given sizes with the
// semantics of ir::LaunchExpr::evaluate (64-bit wrapping arithmetic, integer
// division and modulo truncating toward zero), and the arguments are packed
// in ABI order: a 64-bit device address per tensor, each scalar's bytes, an
// i32 per size, then one 128-byte TMA descriptor per tensor map (tensor_map.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpu_runtime.h"
#include "host_dtype.h"
#include "tensor_map.h"

namespace argus::gpu {

// An integer expression over named sizes: grid extents, requirements, and the
// user's `--flops` expressions.
struct SizeExpr {
  enum class Op : uint8_t {
    Const, Size, Add, Sub, Mul, FloorDiv, CeilDiv, Mod, Min, Max,
    Lt, Le, Gt, Ge, Eq, Ne, And, Or, Not
  };
  Op op = Op::Const;
  int64_t value = 0;  // Const
  std::string size;   // Size
  std::vector<SizeExpr> args;

  static SizeExpr constant(int64_t v) { SizeExpr e; e.value = v; return e; }
  static SizeExpr named(std::string name) { SizeExpr e; e.op = Op::Size; e.size = std::move(name); return e; }
  static SizeExpr apply(Op op, std::vector<SizeExpr> args) { SizeExpr e; e.op = op; e.args = std::move(args); return e; }

  // False with `error` set on an unknown size or a division by zero.
  bool evaluate(const std::map<std::string, int64_t>& sizes, int64_t& out, std::string& error) const;
};

// Parses "2*M*N*K", "(N + 1) // 2 - 3": integers, size names, + - * // %,
// unary minus and parentheses, with the usual precedence.
bool parseSizeExpression(const std::string& text, SizeExpr& out, std::string& error);

struct MetaDim {
  int64_t constant = -1;  // >= 0 when constant
  std::string size;       // otherwise the size's name
};

struct MetaParam {
  enum class Kind : uint8_t { Tensor, Scalar, Size };
  std::string name;
  Kind kind = Kind::Tensor;
  HostDType dtype;
  std::vector<MetaDim> dims;  // Tensor only
};

struct MetaRequirement {
  SizeExpr condition;
  std::string conditionText;
  std::string text;
};

// A TMA descriptor the kernel takes after its size parameters ("tensor_maps").
struct MetaTensorMap {
  std::string param;         // the tensor parameter it describes
  size_t paramIndex = 0;     // its index in KernelMeta::params
  std::vector<int64_t> box;  // outermost first, one per tensor dimension
  int swizzleBytes = 0;      // 0, 32, 64 or 128
  // A map for the epilogue's TMA stores ("store": true). The kernel checks at
  // run time that the tensor is 16-byte aligned with rows a multiple of 16
  // bytes and otherwise stores without the map, so a map TMA cannot describe
  // is passed as zeros instead of failing the launch.
  bool store = false;
};

struct KernelMeta {
  std::string name;
  int threads = 128;
  std::vector<MetaParam> params;  // ABI order
  std::vector<std::string> sizes;
  SizeExpr grid[3];
  std::vector<std::string> gridText;
  // Blocks per thread-block cluster along the grid's first axis (@kernel(cluster=C)): the
  // kernel's PTX declares it, so a plain launch forms the clusters; the grid must hold whole ones.
  int cluster = 1;
  std::vector<MetaRequirement> requirements;
  long long staticSharedBytes = 0;
  long long dynamicSharedBytes = 0;  // passed at every launch when > 0
  std::vector<MetaTensorMap> tensorMaps;  // in ABI order; none in metadata without "tensor_maps"
};

// Every kernel of a metadata document; false with `error` on malformed JSON or
// a version this runtime does not know.
bool parseKernelMetadata(const std::string& jsonText, std::vector<KernelMeta>& kernels, std::string& error);

// What one launch needs, from the metadata and the sizes.
struct LaunchPlan {
  Dim3 grid, block;
  unsigned dynamicSharedBytes = 0;
  std::map<std::string, int64_t> sizes;
  // Per parameter (ABI order): the tensor's shape and bytes (empty for others).
  std::vector<std::vector<int64_t>> shapes;
  std::vector<size_t> tensorBytes;
};

// Evaluates the grid and checks the requirements ("requirement 'N <= 1024'
// does not hold for N=2000") and that every size is given and fits the i32 ABI.
bool planLaunch(const KernelMeta& kernel, const std::map<std::string, int64_t>& sizes, LaunchPlan& plan,
                std::string& error);

struct TensorBinding {
  uint64_t address = 0;
  size_t bytes = 0;  // the buffer's size, checked against the tensor's
};

// Packs the arguments in ABI order. `scalars` holds each scalar parameter's
// value as the raw little-endian bytes of its dtype. A kernel with tensor maps
// needs `encoder` (GpuRuntime::tensorMapEncoder()): each map is planned
// for its tensor's address and shape (planTensorMap: TMA's preconditions), then
// encoded and appended as a 64-byte aligned 128-byte argument. A store map
// that cannot be planned or encoded (or has no encoder) is appended as 128
// zero bytes instead: the kernel does not read it then (MetaTensorMap::store).
bool packArguments(const KernelMeta& kernel, const LaunchPlan& plan,
                   const std::map<std::string, TensorBinding>& tensors,
                   const std::map<std::string, std::vector<uint8_t>>& scalars, KernelArgs& args,
                   std::string& error, const TensorMapEncoder& encoder = {});

// The encode call of tensor map `mapIndex` of `kernel` for the planned shapes
// and the bound tensors (what packArguments passes to the encoder).
bool planKernelTensorMap(const KernelMeta& kernel, const LaunchPlan& plan, size_t mapIndex,
                         const std::map<std::string, TensorBinding>& tensors, TensorMapEncoding& out,
                         std::string& error);

// planLaunch + packArguments + GpuRuntime::launch.
bool launchFromMetadata(GpuRuntime& runtime, const GpuKernel& gpuKernel, const KernelMeta& kernel,
                        const std::map<std::string, int64_t>& sizes,
                        const std::map<std::string, TensorBinding>& tensors,
                        const std::map<std::string, std::vector<uint8_t>>& scalars, std::string& error);

// A kernel ready to launch from its metadata: the module image (PTX or cubin)
// and the NAME.meta.json text in, launches by size values and buffers out.
class MetadataLauncher {
 public:
  static std::unique_ptr<MetadataLauncher> create(GpuRuntime& runtime, const std::string& moduleImage,
                                                  const std::string& metadataJson, const std::string& kernelName,
                                                  std::string& error);
  const KernelMeta& metadata() const { return meta_; }
  const GpuKernel& kernel() const { return *kernel_; }
  // `tensors` by parameter name; `scalars` as raw little-endian bytes of their dtype.
  bool launch(const std::map<std::string, int64_t>& sizes, const std::map<std::string, const DeviceBuffer*>& tensors,
              const std::map<std::string, std::vector<uint8_t>>& scalars, std::string& error);

 private:
  MetadataLauncher(GpuRuntime& runtime, KernelMeta meta, std::unique_ptr<GpuKernel> kernel)
      : runtime_(runtime), meta_(std::move(meta)), kernel_(std::move(kernel)) {}
  GpuRuntime& runtime_;
  KernelMeta meta_;
  std::unique_ptr<GpuKernel> kernel_;
};

}  // namespace argus::gpu

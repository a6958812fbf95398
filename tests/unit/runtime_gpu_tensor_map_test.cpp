// TMA tensor maps at launch (runtime/gpu/tensor_map.h): the "tensor_maps"
// metadata, the cuTensorMapEncodeTiled arguments built for a tensor, TMA's
// preconditions as messages, and the 128-byte, 64-byte aligned kernel argument
// after the sizes, through a recording encoder and through the stand-in driver.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "runtime/gpu/bench.h"
#include "runtime/gpu/launch_metadata.h"
#include "runtime_gpu_fake_libcuda.h"

namespace argus::gpu {
namespace {

// A kernel copying 64x64 tiles of A (bf16, 128-byte swizzle) and 8x16 tiles of
// the 3-D C (f32, no swizzle), as driver/metadata.cpp writes it.
constexpr const char* kTmaMeta = R"json({"version": 1, "kernels": [{
  "name": "tma", "warps": 4, "threads": 128,
  "params": [
    {"name": "A", "kind": "tensor", "dtype": "bf16", "dims": [{"size": "M"}, {"size": "K"}]},
    {"name": "C", "kind": "tensor", "dtype": "f32", "dims": [{"const": 2}, {"size": "M"}, {"size": "K"}]},
    {"name": "s", "kind": "scalar", "dtype": "f32"},
    {"name": "M", "kind": "size", "dtype": "i32"},
    {"name": "K", "kind": "size", "dtype": "i32"}],
  "sizes": ["M", "K"],
  "grid": [{"const": 1}, {"const": 1}, {"const": 1}],
  "tensor_maps": [{"param": "A", "box": [64, 64], "swizzle_bytes": 128},
                  {"param": "C", "box": [1, 8, 16], "swizzle_bytes": 0}]}]})json";

KernelMeta parseOne(const std::string& text) {
  std::vector<KernelMeta> kernels;
  std::string error;
  EXPECT_TRUE(parseKernelMetadata(text, kernels, error)) << error;
  return kernels.empty() ? KernelMeta{} : kernels[0];
}

std::string parseError(const std::string& tensorMaps) {
  std::string text = kTmaMeta;
  size_t at = text.find("\"tensor_maps\"");
  text = text.substr(0, at) + "\"tensor_maps\": " + tensorMaps + "}]}";
  std::vector<KernelMeta> kernels;
  std::string error;
  EXPECT_FALSE(parseKernelMetadata(text, kernels, error)) << tensorMaps;
  return error;
}

TensorMapTarget target(const std::string& name, const char* dtype, std::vector<int64_t> shape,
                       std::vector<std::string> names, uint64_t address = 0x10000) {
  return TensorMapTarget{name, *hostDTypeFromName(dtype), std::move(shape), std::move(names), address};
}

TEST(TensorMapMetadata, ParsesTheMaps) {
  KernelMeta k = parseOne(kTmaMeta);
  ASSERT_EQ(k.tensorMaps.size(), 2u);
  EXPECT_EQ(k.tensorMaps[0].param, "A");
  EXPECT_EQ(k.tensorMaps[0].paramIndex, 0u);
  EXPECT_EQ(k.tensorMaps[0].box, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(k.tensorMaps[0].swizzleBytes, 128);
  EXPECT_EQ(k.tensorMaps[1].paramIndex, 1u);
  EXPECT_EQ(k.tensorMaps[1].box, (std::vector<int64_t>{1, 8, 16}));
}

TEST(TensorMapMetadata, OlderMetadataHasNoMaps) {
  std::string text = kTmaMeta;
  text = text.substr(0, text.find(",\n  \"tensor_maps\"")) + "}]}";
  KernelMeta k = parseOne(text);
  EXPECT_EQ(k.name, "tma");
  EXPECT_TRUE(k.tensorMaps.empty());
}

TEST(TensorMapMetadata, RejectsMalformedMaps) {
  EXPECT_EQ(parseError(R"([{"param": "B", "box": [1, 1], "swizzle_bytes": 0}])"),
            "malformed kernel metadata: kernel 'tma' tensor map: 'B' is not a tensor parameter");
  EXPECT_EQ(parseError(R"([{"param": "s", "box": [1], "swizzle_bytes": 0}])"),
            "malformed kernel metadata: kernel 'tma' tensor map: 's' is not a tensor parameter");
  EXPECT_EQ(parseError(R"([{"param": "A", "box": [64], "swizzle_bytes": 0}])"),
            "malformed kernel metadata: kernel 'tma' tensor map: the box of 'A' has 1 extents for 2 dimensions");
  EXPECT_EQ(parseError(R"([{"param": "A", "box": [64, 64], "swizzle_bytes": 16}])"),
            "malformed kernel metadata: kernel 'tma' tensor map: swizzle_bytes 16 is not 0, 32, 64 or 128");
  EXPECT_EQ(parseError(R"([{"param": "A", "box": [64, 64]}])"),
            "malformed kernel metadata: kernel 'tma' tensor map has no \"swizzle_bytes\"");
  EXPECT_EQ(parseError(R"({"param": "A"})"), "malformed kernel metadata: kernel 'tma': \"tensor_maps\" is not an array");
}

// kTmaMeta with "store": true added to map `mapIndex` (the epilogue's TMA stores).
std::string withStoreMap(size_t mapIndex, const std::string& value = "true") {
  std::string text = kTmaMeta;
  size_t at = text.find("\"tensor_maps\"");
  for (size_t i = 0; i <= mapIndex; ++i) at = text.find("\"swizzle_bytes\"", at + 1);
  at = text.find('}', at);
  return text.insert(at, ", \"store\": " + value);
}

TEST(TensorMapMetadata, ParsesStoreMaps) {
  KernelMeta k = parseOne(withStoreMap(1));
  ASSERT_EQ(k.tensorMaps.size(), 2u);
  EXPECT_FALSE(k.tensorMaps[0].store);  // absent: a load map
  EXPECT_TRUE(k.tensorMaps[1].store);
  EXPECT_EQ(k.tensorMaps[1].param, "C");
  EXPECT_FALSE(parseOne(withStoreMap(1, "false")).tensorMaps[1].store);
}

TEST(TensorMapMetadata, RejectsAStoreThatIsNotABoolean) {
  for (const char* value : {"\"yes\"", "1", "null"}) {
    std::vector<KernelMeta> kernels;
    std::string error;
    EXPECT_FALSE(parseKernelMetadata(withStoreMap(0, value), kernels, error)) << value;
    EXPECT_EQ(error, "malformed kernel metadata: kernel 'tma' tensor map: \"store\" of 'A' is not true or false")
        << value;
  }
}

TEST(TensorMapPlan, BuildsTheEncodeArgumentsInnermostFirst) {
  TensorMapEncoding e;
  std::string error;
  ASSERT_TRUE(planTensorMap(target("A", "bf16", {256, 120}, {"M", "K"}), {64, 64}, 128, e, error)) << error;
  EXPECT_EQ(e.dataType, cu::kTensorMapBfloat16);
  EXPECT_EQ(e.dataType, 9);  // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
  EXPECT_EQ(e.globalAddress, 0x10000u);
  EXPECT_EQ(e.globalDims, (std::vector<uint64_t>{120, 256}));
  EXPECT_EQ(e.globalStrides, (std::vector<uint64_t>{240}));
  EXPECT_EQ(e.boxDims, (std::vector<uint32_t>{64, 64}));
  EXPECT_EQ(e.elementStrides, (std::vector<uint32_t>{1, 1}));
  EXPECT_EQ(e.interleave, 0);   // CU_TENSOR_MAP_INTERLEAVE_NONE
  EXPECT_EQ(e.swizzle, 3);      // CU_TENSOR_MAP_SWIZZLE_128B
  EXPECT_EQ(e.l2Promotion, 2);  // CU_TENSOR_MAP_L2_PROMOTION_L2_128B
  EXPECT_EQ(e.oobFill, 0);      // CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: zeros

  ASSERT_TRUE(planTensorMap(target("C", "f32", {2, 100, 12}, {"", "M", "K"}), {1, 8, 4}, 0, e, error)) << error;
  EXPECT_EQ(e.dataType, 7);  // FLOAT32
  EXPECT_EQ(e.globalDims, (std::vector<uint64_t>{12, 100, 2}));
  EXPECT_EQ(e.globalStrides, (std::vector<uint64_t>{48, 4800}));
  EXPECT_EQ(e.boxDims, (std::vector<uint32_t>{4, 8, 1}));
  EXPECT_EQ(e.swizzle, 0);

  ASSERT_TRUE(planTensorMap(target("v", "f16", {64}, {"N"}), {64}, 0, e, error)) << error;
  EXPECT_EQ(e.dataType, 6);  // FLOAT16
  EXPECT_TRUE(e.globalStrides.empty());
  ASSERT_TRUE(planTensorMap(target("q", "f8e4m3", {32, 64}, {"M", ""}), {32, 32}, 32, e, error)) << error;
  EXPECT_EQ(e.dataType, 0);  // UINT8: TMA moves the bytes
  EXPECT_EQ(e.swizzle, 1);   // 32B
  ASSERT_TRUE(planTensorMap(target("d", "f64", {8, 8}, {"", ""}), {8, 8}, 64, e, error)) << error;
  EXPECT_EQ(e.dataType, 8);
  EXPECT_EQ(e.swizzle, 2);  // 64B
}

std::string planError(const TensorMapTarget& t, std::vector<int64_t> box, int swizzle) {
  TensorMapEncoding e;
  std::string error;
  EXPECT_FALSE(planTensorMap(t, box, swizzle, e, error));
  return error;
}

TEST(TensorMapPlan, ExplainsWhatTmaCannotCopy) {
  EXPECT_EQ(planError(target("A", "bf16", {64, 100}, {"M", "K"}), {64, 64}, 128),
            "tensor 'A': its row of K=100 bf16 elements is 200 bytes; TMA needs rows that are a multiple of 16 "
            "bytes (K a multiple of 8)");
  EXPECT_EQ(planError(target("B", "f32", {64, 6}, {"M", ""}), {8, 4}, 0),
            "tensor 'B': its row of 6 f32 elements is 24 bytes; TMA needs rows that are a multiple of 16 bytes "
            "(a multiple of 4 elements)");
  EXPECT_EQ(planError(target("A", "bf16", {64, 64}, {"M", "K"}, 0x10008), {64, 64}, 128),
            "tensor 'A' starts at address 0x10008, which is not 16-byte aligned; TMA needs 16-byte aligned "
            "tensors (pass a tensor that starts at an aligned address, e.g. a fresh .contiguous() copy instead "
            "of a slice)");
  EXPECT_EQ(planError(target("A", "bf16", {1024, 1024}, {"M", "K"}), {512, 64}, 128),
            "tensor 'A': the kernel copies tiles of 512 elements along dimension 0; TMA copies 1 to 256 elements "
            "per dimension");
  EXPECT_EQ(planError(target("A", "bf16", {64, 64}, {"M", "K"}), {64, 64}, 64),
            "tensor 'A': the kernel copies tiles whose rows are 128 bytes into a 64-byte swizzled buffer; TMA "
            "needs tile rows of at most 64 bytes there");
  EXPECT_EQ(planError(target("A", "bf16", {64, 64}, {"M", "K"}), {64, 4}, 0),
            "tensor 'A': the kernel copies tiles whose rows are 4 bf16 elements (8 bytes); TMA needs tile rows "
            "that are a multiple of 16 bytes");
  EXPECT_EQ(planError(target("A", "bf16", {0, 64}, {"M", "K"}), {64, 64}, 0),
            "tensor 'A' has an empty dimension (M=0); a kernel that copies it with TMA needs every extent to be "
            "at least 1");
  EXPECT_EQ(planError(target("A", "bf16", {64, 64}, {"M", "K"}), {64}, 0),
            "tensor 'A': the kernel's tensor map has a box of 1 dimensions for a tensor of 2 (the metadata does "
            "not match the tensor)");
  EXPECT_EQ(planError(target("T", "f32", {2, 2, 2, 2, 2, 4}, {}), {1, 1, 1, 1, 1, 4}, 0),
            "tensor 'T' has 6 dimensions; TMA copies tensors of 1 to 5 dimensions");
  EXPECT_EQ(planError(target("A", "bf16", {64, 64}, {"M", "K"}), {64, 64}, 48),
            "tensor 'A': the kernel's tensor map asks for a 48-byte swizzle; TMA swizzles 32, 64 or 128 bytes");
}

TEST(KernelArgsPacking, TensorMapsSitAt64ByteAlignedAddresses) {
  KernelArgs args;
  args.addI32(5);
  cu::TensorMap map{};
  map.opaque[0] = 0xfeed;
  map.opaque[15] = 0xbeef;
  args.addTensorMap(map);
  args.addI32(6);
  args.addTensorMap(map);
  ASSERT_EQ(args.count(), 4u);
  EXPECT_EQ(args.offset(1), 64u);
  EXPECT_EQ(args.offset(2), 192u);
  EXPECT_EQ(args.offset(3), 256u);
  void** p = args.pointers();
  for (size_t i : {1u, 3u}) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p[i]) % 64, 0u) << i;
    EXPECT_EQ(std::memcmp(p[i], &map, sizeof map), 0) << i;
  }
  EXPECT_EQ(*static_cast<int32_t*>(p[2]), 6);
}

TEST(TensorMapPacking, AppendsEncodedMapsAfterTheSizes) {
  KernelMeta k = parseOne(kTmaMeta);
  LaunchPlan plan;
  std::string error;
  ASSERT_TRUE(planLaunch(k, {{"M", 128}, {"K", 64}}, plan, error)) << error;
  std::map<std::string, TensorBinding> tensors{{"A", {0xA000, 128 * 64 * 2}}, {"C", {0xC000, 2 * 128 * 64 * 4}}};
  std::map<std::string, std::vector<uint8_t>> scalars{{"s", {0, 0, 0x80, 0x3f}}};
  std::vector<TensorMapEncoding> seen;
  TensorMapEncoder recorder = [&](const TensorMapEncoding& e, cu::TensorMap& map, std::string&) {
    seen.push_back(e);
    std::memset(&map, 0, sizeof map);
    map.opaque[0] = seen.size();
    map.opaque[15] = e.globalAddress;
    return true;
  };
  KernelArgs args;
  ASSERT_TRUE(packArguments(k, plan, tensors, scalars, args, error, recorder)) << error;
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].globalAddress, 0xA000u);
  EXPECT_EQ(seen[0].globalDims, (std::vector<uint64_t>{64, 128}));
  EXPECT_EQ(seen[0].globalStrides, (std::vector<uint64_t>{128}));
  EXPECT_EQ(seen[0].boxDims, (std::vector<uint32_t>{64, 64}));
  EXPECT_EQ(seen[0].swizzle, cu::kTensorMapSwizzle128B);
  EXPECT_EQ(seen[0].dataType, cu::kTensorMapBfloat16);
  EXPECT_EQ(seen[1].globalAddress, 0xC000u);
  EXPECT_EQ(seen[1].globalDims, (std::vector<uint64_t>{64, 128, 2}));
  EXPECT_EQ(seen[1].globalStrides, (std::vector<uint64_t>{256, 32768}));
  EXPECT_EQ(seen[1].boxDims, (std::vector<uint32_t>{16, 8, 1}));
  EXPECT_EQ(seen[1].dataType, cu::kTensorMapFloat32);
  // A, C, s, M, K, then the two maps.
  ASSERT_EQ(args.count(), 7u);
  void** p = args.pointers();
  EXPECT_EQ(*static_cast<int32_t*>(p[3]), 128);
  EXPECT_EQ(*static_cast<int32_t*>(p[4]), 64);
  EXPECT_EQ(args.offset(4), 24u);
  EXPECT_EQ(args.offset(5), 64u);
  EXPECT_EQ(args.offset(6), 192u);
  EXPECT_EQ(args.storage().size(), 320u);
  for (size_t i : {5u, 6u}) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p[i]) % 64, 0u);
    EXPECT_EQ(static_cast<uint64_t*>(p[i])[0], i - 4);
    EXPECT_EQ(static_cast<uint64_t*>(p[i])[15], i == 5 ? 0xA000u : 0xC000u);
  }
}

TEST(TensorMapPacking, ReportsBadTensorsAndMissingEncoders) {
  KernelMeta k = parseOne(kTmaMeta);
  LaunchPlan plan;
  std::string error;
  ASSERT_TRUE(planLaunch(k, {{"M", 128}, {"K", 100}}, plan, error)) << error;
  std::map<std::string, TensorBinding> tensors{{"A", {0xA000, 1 << 20}}, {"C", {0xC000, 1 << 20}}};
  std::map<std::string, std::vector<uint8_t>> scalars{{"s", {0, 0, 0x80, 0x3f}}};
  int calls = 0;
  TensorMapEncoder counter = [&](const TensorMapEncoding&, cu::TensorMap&, std::string&) { return ++calls > 0; };
  KernelArgs args;
  EXPECT_FALSE(packArguments(k, plan, tensors, scalars, args, error, counter));
  EXPECT_EQ(error,
            "kernel 'tma': tensor 'A': its row of K=100 bf16 elements is 200 bytes; TMA needs rows that are a "
            "multiple of 16 bytes (K a multiple of 8)");
  EXPECT_EQ(calls, 0);
  ASSERT_TRUE(planLaunch(k, {{"M", 128}, {"K", 64}}, plan, error)) << error;
  EXPECT_FALSE(packArguments(k, plan, tensors, scalars, args, error));
  EXPECT_EQ(error, "kernel 'tma' copies with TMA and needs tensor maps, which this launcher cannot encode");
  TensorMapEncoder failing = [](const TensorMapEncoding&, cu::TensorMap&, std::string& why) {
    why = "cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (invalid argument)";
    return false;
  };
  EXPECT_FALSE(packArguments(k, plan, tensors, scalars, args, error, failing));
  EXPECT_EQ(error,
            "kernel 'tma', tensor 'A': cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (invalid argument)");
}

// Packs kernel `k` for M=128 and K, A at `addressOfA`, and returns the map
// arguments (the last two), their words copied out of `args`.
struct PackedMaps {
  bool ok = false;
  std::string error;
  int encodes = 0;
  std::vector<std::vector<uint64_t>> maps;
};

PackedMaps packMaps(const KernelMeta& k, int64_t K, uint64_t addressOfA, const TensorMapEncoder& encoder) {
  PackedMaps out;
  LaunchPlan plan;
  EXPECT_TRUE(planLaunch(k, {{"M", 128}, {"K", K}}, plan, out.error)) << out.error;
  std::map<std::string, TensorBinding> tensors{{"A", {addressOfA, 1 << 20}}, {"C", {0xC000, 1 << 20}}};
  std::map<std::string, std::vector<uint8_t>> scalars{{"s", {0, 0, 0x80, 0x3f}}};
  TensorMapEncoder counted;
  if (encoder)
    counted = [&](const TensorMapEncoding& e, cu::TensorMap& map, std::string& why) {
      ++out.encodes;
      return encoder(e, map, why);
    };
  KernelArgs args;
  out.ok = packArguments(k, plan, tensors, scalars, args, out.error, counted);
  if (out.ok && args.count() == 7) {
    for (size_t i : {5u, 6u}) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(args.pointers()[i]) % 64, 0u);
      const uint64_t* words = static_cast<const uint64_t*>(args.pointers()[i]);
      out.maps.emplace_back(words, words + 16);
    }
  }
  return out;
}

// Writes the map's address into every word, as a stand-in for a real encode.
bool markingEncoder(const TensorMapEncoding& e, cu::TensorMap& map, std::string&) {
  for (uint64_t& word : map.opaque) word = e.globalAddress;
  return true;
}

const std::vector<uint64_t> kZeroMap(16, 0);

TEST(TensorMapPacking, StoreMapTmaCannotDescribeIsPassedAsZeros) {
  KernelMeta store = parseOne(withStoreMap(0));  // A's map is a store map
  // A row of K=100 bf16 elements is 200 bytes: no TMA map, and no encode call.
  PackedMaps packed = packMaps(store, 100, 0xA000, markingEncoder);
  ASSERT_TRUE(packed.ok) << packed.error;
  EXPECT_EQ(packed.encodes, 1);  // C's only
  ASSERT_EQ(packed.maps.size(), 2u);
  EXPECT_EQ(packed.maps[0], kZeroMap);
  EXPECT_EQ(packed.maps[1], std::vector<uint64_t>(16, 0xC000));
  // A tensor that is not 16-byte aligned: the same.
  packed = packMaps(store, 64, 0xA008, markingEncoder);
  ASSERT_TRUE(packed.ok) << packed.error;
  EXPECT_EQ(packed.maps[0], kZeroMap);

  // The same tensors through a load map still fail the launch.
  KernelMeta load = parseOne(kTmaMeta);
  packed = packMaps(load, 100, 0xA000, markingEncoder);
  EXPECT_FALSE(packed.ok);
  EXPECT_EQ(packed.error,
            "kernel 'tma': tensor 'A': its row of K=100 bf16 elements is 200 bytes; TMA needs rows that are a "
            "multiple of 16 bytes (K a multiple of 8)");
  packed = packMaps(load, 64, 0xA008, markingEncoder);
  EXPECT_FALSE(packed.ok);
  EXPECT_NE(packed.error.find("starts at address 0xa008, which is not 16-byte aligned"), std::string::npos)
      << packed.error;
}

TEST(TensorMapPacking, StoreMapTmaCanDescribeIsEncoded) {
  PackedMaps packed = packMaps(parseOne(withStoreMap(0)), 64, 0xA000, markingEncoder);
  ASSERT_TRUE(packed.ok) << packed.error;
  EXPECT_EQ(packed.encodes, 2);
  ASSERT_EQ(packed.maps.size(), 2u);
  EXPECT_EQ(packed.maps[0], std::vector<uint64_t>(16, 0xA000));
  EXPECT_EQ(packed.maps[1], std::vector<uint64_t>(16, 0xC000));
}

TEST(TensorMapPacking, FailedEncodeOfAStoreMapTmaCanDescribeFailsTheLaunch) {
  // The kernel's own test passes for this tensor, so it would read the map: zeros
  // there would be a fault, not a fallback.
  TensorMapEncoder failingForA = [](const TensorMapEncoding& e, cu::TensorMap& map, std::string& why) {
    markingEncoder(e, map, why);
    why = "cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (invalid argument)";
    return e.globalAddress != 0xA000;
  };
  PackedMaps packed = packMaps(parseOne(withStoreMap(0)), 64, 0xA000, failingForA);
  EXPECT_FALSE(packed.ok);
  EXPECT_EQ(packed.error,
            "kernel 'tma', tensor 'A': cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (invalid argument)");
}

TEST(TensorMapPacking, StoreMapsNeedAnEncoderToo) {
  std::string bothStore = withStoreMap(0);
  bothStore.insert(bothStore.find('}', bothStore.rfind("\"swizzle_bytes\"")), ", \"store\": true");
  KernelMeta k = parseOne(bothStore);
  ASSERT_TRUE(k.tensorMaps[0].store && k.tensorMaps[1].store);
  PackedMaps packed = packMaps(k, 64, 0xA000, {});
  EXPECT_FALSE(packed.ok);
  EXPECT_EQ(packed.error, "kernel 'tma' copies with TMA and needs tensor maps, which this launcher cannot encode");
}

// ---------------------------------------------------------------- the stand-in driver

constexpr const char* kProbeMeta = R"json({"version": 1, "kernels": [{
  "name": "tma_probe", "warps": 4, "threads": 128,
  "params": [{"name": "x", "kind": "tensor", "dtype": "bf16", "dims": [{"size": "N"}, {"const": 64}]},
             {"name": "N", "kind": "size", "dtype": "i32"}],
  "sizes": ["N"], "grid": [{"const": 1}, {"const": 1}, {"const": 1}],
  "tensor_maps": [{"param": "x", "box": [16, 64], "swizzle_bytes": 128}]}]})json";

class FakeDriverTma : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    OpenOptions options;
    options.driverLibrary = ARGUS_FAKE_CUDA;
    runtime_ = GpuRuntime::open(error, options);
    ASSERT_TRUE(runtime_) << error;
    // The runtime's dlopen of the same path: the same library and its state.
    library_ = dlopen(ARGUS_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    ASSERT_TRUE(library_);
    lastCall_ = reinterpret_cast<ArgusFakeLastTensorMapCallFn>(dlsym(library_, "argusFakeLastTensorMapCall"));
    lastProbe_ = reinterpret_cast<ArgusFakeLastProbeFn>(dlsym(library_, "argusFakeLastProbe"));
    ASSERT_TRUE(lastCall_ && lastProbe_);
  }
  void TearDown() override {
    unsetenv("ARGUS_FAKE_TMA_FAIL");
    if (library_) dlclose(library_);
  }
  std::unique_ptr<GpuRuntime> runtime_;
  void* library_ = nullptr;
  ArgusFakeLastTensorMapCallFn lastCall_ = nullptr;
  ArgusFakeLastProbeFn lastProbe_ = nullptr;
};

TEST_F(FakeDriverTma, LaunchEncodesAndPassesTheMap) {
  std::string error;
  std::unique_ptr<MetadataLauncher> launcher =
      MetadataLauncher::create(*runtime_, ".entry tma_probe(", kProbeMeta, "tma_probe", error);
  ASSERT_TRUE(launcher) << error;
  std::unique_ptr<DeviceBuffer> x = runtime_->allocate(100 * 64 * 2, error);
  ASSERT_TRUE(x) << error;
  int callsBefore = 0, launchesBefore = 0;
  lastCall_(&callsBefore);
  uint64_t words[16];
  uintptr_t paramAddress = 0;
  lastProbe_(words, &paramAddress, &launchesBefore);

  ASSERT_TRUE(launcher->launch({{"N", 100}}, {{"x", x.get()}}, {}, error)) << error;
  int calls = 0, launches = 0;
  const ArgusFakeTensorMapCall& call = *lastCall_(&calls);
  EXPECT_EQ(calls, callsBefore + 1);
  EXPECT_EQ(call.dataType, 9);  // BFLOAT16
  EXPECT_EQ(call.rank, 2u);
  EXPECT_EQ(call.globalAddress, x->address());
  EXPECT_EQ(call.globalDims[0], 64u);
  EXPECT_EQ(call.globalDims[1], 100u);
  EXPECT_EQ(call.globalStrides[0], 128u);
  EXPECT_EQ(call.boxDims[0], 64u);
  EXPECT_EQ(call.boxDims[1], 16u);
  EXPECT_EQ(call.elementStrides[0], 1u);
  EXPECT_EQ(call.elementStrides[1], 1u);
  EXPECT_EQ(call.interleave, 0);
  EXPECT_EQ(call.swizzle, 3);
  EXPECT_EQ(call.l2Promotion, 2);
  EXPECT_EQ(call.oobFill, 0);
  EXPECT_EQ(call.mapAddress % 64, 0u);

  lastProbe_(words, &paramAddress, &launches);
  EXPECT_EQ(launches, launchesBefore + 1);
  EXPECT_EQ(words[0], kArgusFakeTensorMapMagic);  // the encoded map reached the kernel
  EXPECT_EQ(words[1], x->address());
  EXPECT_EQ(words[2], static_cast<uint64_t>(calls));
  EXPECT_EQ(paramAddress % 64, 0u);
}

// `argusc run` and argus-replay launch through BenchRun: the same maps.
TEST_F(FakeDriverTma, BenchRunsPassTheMap) {
  std::string error;
  std::vector<KernelMeta> kernels;
  ASSERT_TRUE(parseKernelMetadata(kProbeMeta, kernels, error)) << error;
  std::shared_ptr<GpuModule> module = runtime_->loadModule(".entry tma_probe(", error);
  ASSERT_TRUE(module) << error;
  std::shared_ptr<GpuKernel> kernel = module->kernel("tma_probe", error);
  ASSERT_TRUE(kernel) << error;
  BenchTensor x;
  x.name = "x";
  x.dtype = *hostDTypeFromName("bf16");
  x.shape = {40, 64};
  x.role = TensorRole::Input;
  x.input.assign(40 * 64 * 2, 0);
  std::vector<BenchTensor> tensors{x};
  std::unique_ptr<BenchRun> run = BenchRun::create(*runtime_, kernel, kernels[0], {{"N", 40}}, tensors, {}, error);
  ASSERT_TRUE(run) << error;
  int calls = 0, launchesBefore = 0, launches = 0;
  const ArgusFakeTensorMapCall& call = *lastCall_(&calls);
  EXPECT_EQ(call.globalDims[1], 40u);
  uint64_t words[16];
  uintptr_t paramAddress = 0;
  lastProbe_(words, &paramAddress, &launchesBefore);
  std::vector<std::vector<uint8_t>> results;
  ASSERT_TRUE(run->runOnce(results, error)) << error;
  lastProbe_(words, &paramAddress, &launches);
  EXPECT_EQ(launches, launchesBefore + 1);
  EXPECT_EQ(words[0], kArgusFakeTensorMapMagic);
  EXPECT_EQ(words[1], call.globalAddress);
  EXPECT_EQ(paramAddress % 64, 0u);
}

TEST_F(FakeDriverTma, FailedEncodeNamesTheCudaError) {
  std::string error;
  std::unique_ptr<MetadataLauncher> launcher =
      MetadataLauncher::create(*runtime_, ".entry tma_probe(", kProbeMeta, "tma_probe", error);
  ASSERT_TRUE(launcher) << error;
  std::unique_ptr<DeviceBuffer> x = runtime_->allocate(100 * 64 * 2, error);
  ASSERT_TRUE(x) << error;
  setenv("ARGUS_FAKE_TMA_FAIL", "1", 1);
  EXPECT_FALSE(launcher->launch({{"N", 100}}, {{"x", x.get()}}, {}, error));
  EXPECT_EQ(error,
            "kernel 'tma_probe', tensor 'x': cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (fake driver "
            "error)");
}

TEST_F(FakeDriverTma, StoreMapOfUnalignedRowsLaunchesWithZerosAndNoEncode) {
  std::string text = kProbeMeta;
  text.replace(text.find("{\"const\": 64}"), 13, "{\"const\": 60}");
  text.insert(text.find("\"swizzle_bytes\": 128") + 20, ", \"store\": true");
  std::string error;
  std::unique_ptr<MetadataLauncher> launcher =
      MetadataLauncher::create(*runtime_, ".entry tma_probe(", text, "tma_probe", error);
  ASSERT_TRUE(launcher) << error;
  ASSERT_TRUE(launcher->metadata().tensorMaps.at(0).store);
  std::unique_ptr<DeviceBuffer> x = runtime_->allocate(100 * 60 * 2, error);
  ASSERT_TRUE(x) << error;
  int launchesBefore = 0, launches = 0, callsBefore = 0, calls = 0;
  uint64_t words[16];
  uintptr_t paramAddress = 0;
  lastProbe_(words, &paramAddress, &launchesBefore);
  lastCall_(&callsBefore);
  ASSERT_TRUE(launcher->launch({{"N", 100}}, {{"x", x.get()}}, {}, error)) << error;
  lastProbe_(words, &paramAddress, &launches);
  lastCall_(&calls);
  EXPECT_EQ(launches, launchesBefore + 1);
  EXPECT_EQ(calls, callsBefore);
  EXPECT_EQ(std::vector<uint64_t>(words, words + 16), std::vector<uint64_t>(16, 0));
  EXPECT_EQ(paramAddress % 64, 0u);
}

TEST_F(FakeDriverTma, BadStrideIsRefusedBeforeTheDriver) {
  std::string text = kProbeMeta;
  text.replace(text.find("{\"const\": 64}"), 13, "{\"const\": 60}");
  text.replace(text.find("[16, 64]"), 8, "[16, 56]");
  std::string error;
  std::unique_ptr<MetadataLauncher> launcher =
      MetadataLauncher::create(*runtime_, ".entry tma_probe(", text, "tma_probe", error);
  ASSERT_TRUE(launcher) << error;
  std::unique_ptr<DeviceBuffer> x = runtime_->allocate(100 * 60 * 2, error);
  ASSERT_TRUE(x) << error;
  int callsBefore = 0, calls = 0;
  lastCall_(&callsBefore);
  EXPECT_FALSE(launcher->launch({{"N", 100}}, {{"x", x.get()}}, {}, error));
  EXPECT_EQ(error,
            "kernel 'tma_probe': tensor 'x': its row of 60 bf16 elements is 120 bytes; TMA needs rows that are a "
            "multiple of 16 bytes (a multiple of 8 elements)");
  lastCall_(&calls);
  EXPECT_EQ(calls, callsBefore);
}

}  // namespace
}  // namespace argus::gpu

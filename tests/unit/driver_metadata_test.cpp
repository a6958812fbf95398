// Launch metadata JSON (driver/metadata.h): format, expression trees, shared
// bytes, and the metadata of the shipped examples compiled end to end.
#include "driver/metadata.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "driver/compilation.h"
#include "ir/bulk.h"
#include "ir/ir.h"

namespace argus {
namespace {

using nlohmann::json;
using ir::DType;
using ir::LaunchExpr;

LaunchExpr constant(int64_t v) { return {LaunchExpr::Kind::Const, v, {}}; }
LaunchExpr size(int index) { return {LaunchExpr::Kind::Size, index, {}}; }
LaunchExpr binary(LaunchExpr::Kind k, LaunchExpr a, LaunchExpr b) { return {k, 0, {std::move(a), std::move(b)}}; }

// A kernel with every kind of parameter, a constant extent, a 2-D grid, a
// requirement, and shared buffers at top level and inside a loop.
std::unique_ptr<ir::Function> makeKernel() {
  auto fn = std::make_unique<ir::Function>();
  fn->name = "k";
  fn->numWarps = 8;
  fn->sizeNames = {"M", "K"};
  ir::Builder b(*fn, &fn->body);
  auto addParam = [&](ir::ParamKind kind, const std::string& name, DType dt, std::vector<ir::DimRef> dims,
                      ir::Type type) {
    ir::Param p{kind, name, dt, std::move(dims), ir::kNoValue, {}, {}};
    p.value = b.addBlockArg(fn->body, std::move(type), name);
    fn->params.push_back(p);
  };
  addParam(ir::ParamKind::Tensor, "A", DType::F32, {{-1, 0}, {-1, 1}}, ir::Type::tensor(DType::F32, {-1, -1}));
  addParam(ir::ParamKind::Tensor, "B", DType::BF16, {{-1, 1}, {64, -1}}, ir::Type::tensor(DType::BF16, {-1, 64}));
  addParam(ir::ParamKind::Scalar, "s", DType::F16, {}, ir::Type::scalar(DType::F16));
  addParam(ir::ParamKind::Size, "M", DType::I32, {}, ir::Type::scalar(DType::I32));
  addParam(ir::ParamKind::Size, "K", DType::I32, {}, ir::Type::scalar(DType::I32));
  fn->grid[0] = binary(LaunchExpr::Kind::CeilDiv, size(0), constant(64));
  fn->grid[1] = binary(LaunchExpr::Kind::Add, binary(LaunchExpr::Kind::FloorDiv, size(1), constant(2)), constant(1));
  fn->grid[2] = constant(1);
  fn->requirements.push_back({binary(LaunchExpr::Kind::Le, size(1), constant(1024)), "K must be small", {}});
  fn->constants = {{"BM", 64}};

  b.make(ir::OpKind::AllocShared, {}, ir::Type::shared(DType::F32, {64, 16}), {});
  ir::ValueId lb = b.constInt(0, DType::I32), ub = b.constInt(4, DType::I32), step = b.constInt(1, DType::I32);
  ir::Op& loop = b.create(ir::OpKind::For, {lb, ub, step}, {}, {});
  b.addBlockArg(loop.regions[0], ir::Type::scalar(DType::I32), "i");
  b.setBlock(&loop.regions[0]);
  b.make(ir::OpKind::AllocShared, {}, ir::Type::shared(DType::BF16, {16, 64}), {});
  b.create(ir::OpKind::Yield, {}, {}, {});
  return fn;
}

json metadataOf(std::unique_ptr<ir::Function> fn) {
  ir::Module module;
  module.functions.push_back(std::move(fn));
  return json::parse(kernelMetadataJson(module, "sm_90"));
}

TEST(DriverMetadata, DescribesParamsInAbiOrder) {
  json doc = metadataOf(makeKernel());
  EXPECT_EQ(doc["version"], kKernelMetadataVersion);
  ASSERT_EQ(doc["kernels"].size(), 1u);
  const json& k = doc["kernels"][0];
  EXPECT_EQ(k["name"], "k");
  EXPECT_EQ(k["warps"], 8);
  EXPECT_EQ(k["threads"], 256);
  ASSERT_EQ(k["params"].size(), 5u);
  EXPECT_EQ(k["params"][0], json::parse(R"J({"name":"A","kind":"tensor","dtype":"f32",
                                            "dims":[{"size":"M"},{"size":"K"}]})J"));
  EXPECT_EQ(k["params"][1]["dims"], json::parse(R"J([{"size":"K"},{"const":64}])J"));
  EXPECT_EQ(k["params"][1]["dtype"], "bf16");
  EXPECT_EQ(k["params"][2], json::parse(R"J({"name":"s","kind":"scalar","dtype":"f16"})J"));
  EXPECT_EQ(k["params"][3], json::parse(R"J({"name":"M","kind":"size","dtype":"i32"})J"));
  EXPECT_EQ(k["params"][4]["name"], "K");
  EXPECT_EQ(k["sizes"], json::parse(R"J(["M","K"])J"));
  EXPECT_EQ(k["constants"], json::parse(R"J({"BM":64})J"));
}

TEST(DriverMetadata, GridAndRequirementsAreTreesWithText) {
  json k = metadataOf(makeKernel())["kernels"][0];
  EXPECT_EQ(k["grid"][0], json::parse(R"J({"op":"cdiv","args":[{"size":"M"},{"const":64}]})J"));
  EXPECT_EQ(k["grid"][1], json::parse(
      R"J({"op":"add","args":[{"op":"floordiv","args":[{"size":"K"},{"const":2}]},{"const":1}]})J"));
  EXPECT_EQ(k["grid"][2], json::parse(R"J({"const":1})J"));
  EXPECT_EQ(k["grid_text"], json::parse(R"J(["cdiv(M, 64)","K // 2 + 1","1"])J"));
  ASSERT_EQ(k["requirements"].size(), 1u);
  EXPECT_EQ(k["requirements"][0]["condition"], json::parse(R"J({"op":"le","args":[{"size":"K"},{"const":1024}]})J"));
  EXPECT_EQ(k["requirements"][0]["condition_text"], "K <= 1024");
  EXPECT_EQ(k["requirements"][0]["text"], "K must be small");
}

TEST(DriverMetadata, CountsSharedBuffersInNestedRegions) {
  auto fn = makeKernel();
  EXPECT_EQ(staticSharedBytes(*fn), 64 * 16 * 4 + 16 * 64 * 2);
  EXPECT_EQ(metadataOf(std::move(fn))["kernels"][0]["static_shared_bytes"], 6144);
}

TEST(DriverMetadata, EmptyModuleIsAValidDocument) {
  json doc = json::parse(kernelMetadataJson(ir::Module{}, "sm_90"));
  EXPECT_TRUE(doc["kernels"].is_array());
  EXPECT_TRUE(doc["kernels"].empty());
}

TEST(DriverMetadata, PathReplacesPtxOrCubinExtension) {
  EXPECT_EQ(metadataPathFor("x.ptx"), "x.meta.json");
  EXPECT_EQ(metadataPathFor("out/dir/vadd.cubin"), "out/dir/vadd.meta.json");
  EXPECT_EQ(metadataPathFor("kernel"), "kernel.meta.json");
  EXPECT_EQ(metadataPathFor("a.b/kernel"), "a.b/kernel.meta.json");
  EXPECT_EQ(metadataPathFor("k.txt"), "k.txt.meta.json");
  EXPECT_EQ(metadataPathFor("dir/.ptx"), "dir/.ptx.meta.json");
}

// A Hopper-style kernel: bulk copies of A[M, K] (bf16, 128-byte swizzle, twice:
// one map), of B[K, N] (no swizzle) inside a loop, and of a 2-D view of the
// 3-D tensor C[2, M, K] (f32, 64-byte swizzle).
std::unique_ptr<ir::Function> makeBulkKernel() {
  auto fn = std::make_unique<ir::Function>();
  fn->name = "tma";
  fn->numWarps = 4;
  fn->sizeNames = {"M", "K", "N"};
  ir::Builder b(*fn, &fn->body);
  auto tensor = [&](const std::string& name, DType dt, std::vector<ir::DimRef> dims) {
    std::vector<int64_t> shape;
    for (const ir::DimRef& d : dims) shape.push_back(d.constant >= 0 ? d.constant : -1);
    ir::Param p{ir::ParamKind::Tensor, name, dt, std::move(dims), ir::kNoValue, {}, {}};
    p.value = b.addBlockArg(fn->body, ir::Type::tensor(dt, shape), name);
    fn->params.push_back(p);
    return p.value;
  };
  ir::ValueId a = tensor("A", DType::BF16, {{-1, 0}, {-1, 1}});
  ir::ValueId bt = tensor("B", DType::BF16, {{-1, 1}, {-1, 2}});
  ir::ValueId c = tensor("C", DType::F32, {{2, -1}, {-1, 0}, {-1, 1}});
  for (const char* size : {"M", "K", "N"}) {
    ir::Param p{ir::ParamKind::Size, size, DType::I32, {}, ir::kNoValue, {}, {}};
    p.value = b.addBlockArg(fn->body, ir::Type::scalar(DType::I32), size);
    fn->params.push_back(p);
  }
  ir::ValueId zero = b.constInt(0, DType::I32);
  auto bulk = [&](ir::ValueId base, std::vector<ir::ValueId> offsets, DType dt, std::vector<int64_t> box,
                  ir::Swizzle swizzle) {
    ir::Type sharedType = ir::Type::shared(dt, box);
    sharedType.swizzle = swizzle;
    ir::ValueId buffer = b.make(ir::OpKind::AllocShared, {}, sharedType, {});
    ir::Type dstType = ir::Type::view(ir::MemSpace::Shared, dt, box);
    dstType.swizzle = swizzle;
    ir::ValueId dst = b.make(ir::OpKind::View, {buffer, zero, zero}, dstType, {});
    offsets.insert(offsets.begin(), base);
    ir::ValueId src = b.make(ir::OpKind::View, offsets, ir::Type::view(ir::MemSpace::Global, dt, box), {});
    b.create(ir::OpKind::CopyBulk, {dst, src}, {}, {});
  };
  const ir::Swizzle sw128{3, 3, 3}, sw64f32{2, 2, 3};
  bulk(a, {zero, zero}, DType::BF16, {64, 64}, sw128);
  ir::ValueId lb = b.constInt(0, DType::I32), ub = b.constInt(4, DType::I32), step = b.constInt(1, DType::I32);
  ir::Op& loop = b.create(ir::OpKind::For, {lb, ub, step}, {}, {});
  b.addBlockArg(loop.regions[0], ir::Type::scalar(DType::I32), "i");
  b.setBlock(&loop.regions[0]);
  bulk(bt, {zero, zero}, DType::BF16, {32, 64}, ir::Swizzle{});
  bulk(a, {zero, zero}, DType::BF16, {64, 64}, sw128);  // the same map as the first copy
  b.create(ir::OpKind::Yield, {}, {}, {});
  b.setBlock(&fn->body);
  bulk(c, {zero, zero, zero}, DType::F32, {8, 16}, sw64f32);
  return fn;
}

TEST(DriverMetadata, TensorMapsFollowTensorMapsOf) {
  auto fn = makeBulkKernel();
  ASSERT_EQ(ir::tensorMapsOf(*fn).size(), 3u);
  json k = metadataOf(std::move(fn))["kernels"][0];
  EXPECT_EQ(k["tensor_maps"], json::parse(R"J([
      {"param": "A", "box": [64, 64], "swizzle_bytes": 128},
      {"param": "B", "box": [32, 64], "swizzle_bytes": 0},
      {"param": "C", "box": [1, 8, 16], "swizzle_bytes": 64}])J"));
  // The params stay as they were: the maps are passed after them.
  ASSERT_EQ(k["params"].size(), 6u);
  EXPECT_EQ(k["params"][5]["name"], "N");
}

TEST(DriverMetadata, KernelWithoutBulkCopiesHasNoTensorMaps) {
  json k = metadataOf(makeKernel())["kernels"][0];
  ASSERT_TRUE(k.contains("tensor_maps"));
  EXPECT_TRUE(k["tensor_maps"].is_array());
  EXPECT_TRUE(k["tensor_maps"].empty());
}

// End to end through the compiler: the examples' metadata matches their source.
json exampleMetadata(const std::string& name) {
  std::ifstream in(std::string(ARGUS_SOURCE_DIR) + "/examples/" + name);
  std::stringstream text;
  text << in.rdbuf();
  Compilation c(SourceFile("examples/" + name, text.str()), CompileOptions{});
  const ir::Module& module = c.ir();
  EXPECT_FALSE(c.hasErrors()) << name;
  return json::parse(kernelMetadataJson(module, "sm_90"));
}

TEST(DriverMetadata, SoftmaxExample) {
  json doc = exampleMetadata("softmax.ag");
  ASSERT_EQ(doc["kernels"].size(), 1u);
  const json& k = doc["kernels"][0];
  EXPECT_EQ(k["name"], "softmax");
  EXPECT_EQ(k["threads"], 128);
  EXPECT_EQ(k["sizes"], json::parse(R"J(["M","N"])J"));
  ASSERT_EQ(k["params"].size(), 4u);
  EXPECT_EQ(k["params"][0]["dims"], json::parse(R"J([{"size":"M"},{"size":"N"}])J"));
  EXPECT_EQ(k["params"][2]["kind"], "size");
  EXPECT_EQ(k["grid_text"][0], "cdiv(M, 4)");
  ASSERT_EQ(k["requirements"].size(), 1u);
  EXPECT_EQ(k["requirements"][0]["condition"], json::parse(R"J({"op":"le","args":[{"size":"N"},{"const":1024}]})J"));
  EXPECT_EQ(k["static_shared_bytes"], 0);
}

TEST(DriverMetadata, GemmExampleCountsItsSharedTiles) {
  json k = exampleMetadata("gemm.ag")["kernels"][0];
  EXPECT_EQ(k["static_shared_bytes"], (64 * 16 + 16 * 64) * 4);
  EXPECT_EQ(k["grid_text"], json::parse(R"J(["cdiv(M, 64)","cdiv(N, 64)","1"])J"));
  EXPECT_EQ(k["constants"], json::parse(R"J({"BM":64,"BN":64,"BK":16})J"));
}

TEST(DriverMetadata, LayernormExample) {
  json k = exampleMetadata("layernorm.ag")["kernels"][0];
  EXPECT_EQ(k["name"], "layernorm");
  // The launcher passes x, w, b, y, eps, then the sizes M and N (bench/gpu_check.py relies on it).
  ASSERT_EQ(k["params"].size(), 7u);
  EXPECT_EQ(k["params"][1]["dims"], json::parse(R"J([{"size":"N"}])J"));
  EXPECT_EQ(k["params"][4]["name"], "eps");
  EXPECT_EQ(k["params"][4]["kind"], "scalar");
  EXPECT_EQ(k["params"][4]["dtype"], "f32");
  EXPECT_EQ(k["sizes"], json::parse(R"J(["M","N"])J"));
  EXPECT_EQ(k["grid_text"], json::parse(R"J(["M","1","1"])J"));
  ASSERT_EQ(k["requirements"].size(), 1u);
  EXPECT_EQ(k["requirements"][0]["condition_text"], "N <= 1024");
}

}  // namespace
}  // namespace argus

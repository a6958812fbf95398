// Launch metadata: parsing, grid and requirement evaluation, argument packing.
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/gpu/launch_metadata.h"

namespace argus::gpu {
namespace {

// As driver/metadata.cpp writes it for a 2-D kernel with a requirement.
constexpr const char* kGemmMeta = R"json({"version": 1, "kernels": [{
  "name": "gemm", "warps": 4, "threads": 128,
  "params": [
    {"name": "A", "kind": "tensor", "dtype": "f32", "dims": [{"size": "M"}, {"size": "K"}]},
    {"name": "B", "kind": "tensor", "dtype": "bf16", "dims": [{"size": "K"}, {"const": 64}]},
    {"name": "alpha", "kind": "scalar", "dtype": "f16"},
    {"name": "flag", "kind": "scalar", "dtype": "bool"},
    {"name": "M", "kind": "size", "dtype": "i32"},
    {"name": "K", "kind": "size", "dtype": "i32"}],
  "sizes": ["M", "K"],
  "grid": [{"op": "cdiv", "args": [{"size": "M"}, {"const": 64}]},
           {"op": "floordiv", "args": [{"size": "K"}, {"const": 16}]}, {"const": 1}],
  "grid_text": ["cdiv(M, 64)", "K // 16", "1"],
  "requirements": [{"condition": {"op": "le", "args": [{"size": "K"}, {"const": 1024}]},
                    "condition_text": "K <= 1024", "text": "K fits one pass"}],
  "static_shared_bytes": 8192, "constants": {"BM": 64}}]})json";

KernelMeta gemm() {
  std::vector<KernelMeta> kernels;
  std::string error;
  EXPECT_TRUE(parseKernelMetadata(kGemmMeta, kernels, error)) << error;
  return kernels.empty() ? KernelMeta{} : kernels[0];
}

TEST(LaunchMetadata, ParsesTheDocument) {
  KernelMeta k = gemm();
  EXPECT_EQ(k.name, "gemm");
  EXPECT_EQ(k.threads, 128);
  ASSERT_EQ(k.params.size(), 6u);
  EXPECT_EQ(k.params[0].kind, MetaParam::Kind::Tensor);
  EXPECT_EQ(k.params[1].dtype.name, "bf16");
  EXPECT_EQ(k.params[1].dims[1].constant, 64);
  EXPECT_EQ(k.params[0].dims[1].size, "K");
  EXPECT_EQ(k.params[2].kind, MetaParam::Kind::Scalar);
  EXPECT_EQ(k.params[4].kind, MetaParam::Kind::Size);
  EXPECT_EQ(k.sizes, (std::vector<std::string>{"M", "K"}));
  EXPECT_EQ(k.staticSharedBytes, 8192);
  ASSERT_EQ(k.requirements.size(), 1u);
}

TEST(LaunchMetadata, PlansGridAndShapes) {
  LaunchPlan plan;
  std::string error;
  ASSERT_TRUE(planLaunch(gemm(), {{"M", 100}, {"K", 40}}, plan, error)) << error;
  EXPECT_EQ(plan.grid.x, 2u);  // cdiv(100, 64)
  EXPECT_EQ(plan.grid.y, 2u);  // 40 // 16, truncating
  EXPECT_EQ(plan.grid.z, 1u);
  EXPECT_EQ(plan.block.x, 128u);
  EXPECT_EQ(plan.shapes[0], (std::vector<int64_t>{100, 40}));
  EXPECT_EQ(plan.tensorBytes[0], 100u * 40 * 4);
  EXPECT_EQ(plan.tensorBytes[1], 40u * 64 * 2);
  EXPECT_EQ(plan.tensorBytes[2], 0u);
}

TEST(LaunchMetadata, RequirementsAndSizesAreChecked) {
  LaunchPlan plan;
  std::string error;
  EXPECT_FALSE(planLaunch(gemm(), {{"M", 100}, {"K", 2000}}, plan, error));
  EXPECT_EQ(error, "kernel 'gemm': requirement 'K <= 1024' does not hold for K=2000, M=100 (K fits one pass)");
  EXPECT_FALSE(planLaunch(gemm(), {{"M", 100}}, plan, error));
  EXPECT_EQ(error, "kernel 'gemm' needs a value for size K");
  EXPECT_FALSE(planLaunch(gemm(), {{"M", 100}, {"K", 8}}, plan, error));  // 8 // 16 == 0 blocks
  EXPECT_NE(error.find("grid dimension 1 (K // 16) is 0"), std::string::npos) << error;
  EXPECT_FALSE(planLaunch(gemm(), {{"M", int64_t{1} << 32}, {"K", 16}}, plan, error));
  EXPECT_NE(error.find("does not fit the kernel's i32 size parameter"), std::string::npos) << error;
}

TEST(LaunchMetadata, AKernelOfClustersNeedsWholeClusters) {
  std::string text = kGemmMeta;
  text.replace(text.find("\"threads\": 128,"), 15, "\"threads\": 128, \"cluster\": 2,");
  std::vector<KernelMeta> kernels;
  std::string error;
  ASSERT_TRUE(parseKernelMetadata(text, kernels, error)) << error;
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].cluster, 2);
  LaunchPlan plan;
  ASSERT_TRUE(planLaunch(kernels[0], {{"M", 100}, {"K", 40}}, plan, error)) << error;  // 2 blocks
  EXPECT_FALSE(planLaunch(kernels[0], {{"M", 150}, {"K", 40}}, plan, error));           // 3 blocks
  EXPECT_EQ(error, "kernel 'gemm': grid dimension 0 (cdiv(M, 64)) is 3 for K=40, M=150, but the kernel runs in "
                   "clusters of 2 blocks along it; it must be a multiple of 2");
  text.replace(text.find("\"cluster\": 2"), 12, "\"cluster\": 9");
  EXPECT_FALSE(parseKernelMetadata(text, kernels, error));
  EXPECT_NE(error.find("a cluster of 9 blocks"), std::string::npos) << error;
}

TEST(LaunchMetadata, MalformedDocumentsAreErrorsNotCrashes) {
  std::vector<KernelMeta> kernels;
  std::string error;
  EXPECT_FALSE(parseKernelMetadata("{not json", kernels, error));
  EXPECT_EQ(error, "malformed kernel metadata: not valid JSON");
  EXPECT_FALSE(parseKernelMetadata(R"({"version": 2, "kernels": []})", kernels, error));
  EXPECT_NE(error.find("version 2 is not supported"), std::string::npos) << error;
  EXPECT_FALSE(parseKernelMetadata("[1, 2]", kernels, error));
  EXPECT_FALSE(parseKernelMetadata(R"({"version": 1})", kernels, error));
  std::string badOp = kGemmMeta;
  badOp.replace(badOp.find("\"cdiv\""), 6, "\"pow\"");
  EXPECT_FALSE(parseKernelMetadata(badOp, kernels, error));
  EXPECT_NE(error.find("unknown operation 'pow'"), std::string::npos) << error;
  std::string badType = kGemmMeta;
  badType.replace(badType.find("\"bf16\""), 6, "\"f128\"");
  EXPECT_FALSE(parseKernelMetadata(badType, kernels, error));
  EXPECT_NE(error.find("unknown dtype 'f128'"), std::string::npos) << error;
  std::string badThreads = kGemmMeta;
  badThreads.replace(badThreads.find("\"threads\": 128"), 14, "\"threads\": \"x\"");
  EXPECT_FALSE(parseKernelMetadata(badThreads, kernels, error));
  EXPECT_TRUE(kernels.empty());
}

TEST(LaunchMetadata, ExpressionsFollowLaunchExprSemantics) {
  using O = SizeExpr::Op;
  auto eval = [](O op, int64_t a, int64_t b) {
    int64_t out = 0;
    std::string error;
    EXPECT_TRUE(SizeExpr::apply(op, {SizeExpr::constant(a), SizeExpr::constant(b)}).evaluate({}, out, error))
        << error;
    return out;
  };
  EXPECT_EQ(eval(O::FloorDiv, -7, 2), -3);  // truncates toward zero, like C
  EXPECT_EQ(eval(O::Mod, -7, 2), -1);
  EXPECT_EQ(eval(O::CeilDiv, 7, 2), 4);
  EXPECT_EQ(eval(O::CeilDiv, 8, 2), 4);
  EXPECT_EQ(eval(O::FloorDiv, INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(eval(O::Mod, INT64_MIN, -1), 0);
  EXPECT_EQ(eval(O::Add, INT64_MAX, 1), INT64_MIN);  // wraps
  EXPECT_EQ(eval(O::Min, 3, -4), -4);
  EXPECT_EQ(eval(O::Ge, 3, 3), 1);
  EXPECT_EQ(eval(O::And, 2, 0), 0);
  EXPECT_EQ(eval(O::Or, 2, 0), 1);
  int64_t out = 0;
  std::string error;
  EXPECT_FALSE(SizeExpr::apply(O::FloorDiv, {SizeExpr::constant(1), SizeExpr::constant(0)}).evaluate({}, out, error));
  EXPECT_EQ(error, "division by zero");
  EXPECT_TRUE(SizeExpr::apply(O::Not, {SizeExpr::constant(0)}).evaluate({}, out, error));
  EXPECT_EQ(out, 1);
  EXPECT_FALSE(SizeExpr::named("Q").evaluate({{"N", 1}}, out, error));
  EXPECT_EQ(error, "no value for size 'Q'");
}

TEST(KernelArgsPacking, AlignsEachArgument) {
  KernelArgs args;
  args.addI32(7);
  args.addPointer(0x1122334455667788ull);
  uint16_t half = 0x3c00;
  args.addBytes(&half, 2, 2);
  args.addF64(2.5);
  ASSERT_EQ(args.count(), 4u);
  EXPECT_EQ(args.offset(0), 0u);
  EXPECT_EQ(args.offset(1), 8u);
  EXPECT_EQ(args.offset(2), 16u);
  EXPECT_EQ(args.offset(3), 24u);
  void** pointers = args.pointers();
  EXPECT_EQ(*static_cast<int32_t*>(pointers[0]), 7);
  EXPECT_EQ(*static_cast<uint64_t*>(pointers[1]), 0x1122334455667788ull);
  EXPECT_EQ(*static_cast<uint16_t*>(pointers[2]), 0x3c00);
  EXPECT_EQ(*static_cast<double*>(pointers[3]), 2.5);
  EXPECT_EQ(KernelArgs{}.pointers(), nullptr);
}

TEST(KernelArgsPacking, PacksInAbiOrder) {
  KernelMeta k = gemm();
  LaunchPlan plan;
  std::string error;
  ASSERT_TRUE(planLaunch(k, {{"M", 100}, {"K", 40}}, plan, error)) << error;
  std::map<std::string, TensorBinding> tensors{{"A", {0xA000, 100 * 40 * 4}}, {"B", {0xB000, 40 * 64 * 2}}};
  std::map<std::string, std::vector<uint8_t>> scalars{{"alpha", {0x00, 0x3c}}, {"flag", {1}}};
  KernelArgs args;
  ASSERT_TRUE(packArguments(k, plan, tensors, scalars, args, error)) << error;
  ASSERT_EQ(args.count(), 6u);
  void** p = args.pointers();
  EXPECT_EQ(*static_cast<uint64_t*>(p[0]), 0xA000u);
  EXPECT_EQ(*static_cast<uint64_t*>(p[1]), 0xB000u);
  EXPECT_EQ(*static_cast<uint16_t*>(p[2]), 0x3c00);
  EXPECT_EQ(*static_cast<uint8_t*>(p[3]), 1);
  EXPECT_EQ(*static_cast<int32_t*>(p[4]), 100);
  EXPECT_EQ(*static_cast<int32_t*>(p[5]), 40);
  EXPECT_EQ(args.offset(4) % 4, 0u);

  tensors["B"].bytes = 100;
  EXPECT_FALSE(packArguments(k, plan, tensors, scalars, args, error));
  EXPECT_EQ(error, "the buffer for tensor 'B' holds 100 bytes; the tensor needs 5120");
  tensors.erase("B");
  EXPECT_FALSE(packArguments(k, plan, tensors, scalars, args, error));
  EXPECT_EQ(error, "no buffer for tensor 'B'");
  tensors["B"] = {0xB000, 5120};
  scalars["alpha"] = {1, 2, 3, 4};
  EXPECT_FALSE(packArguments(k, plan, tensors, scalars, args, error));
  EXPECT_EQ(error, "scalar 'alpha' of type f16 needs 2 bytes, got 4");
  scalars.erase("flag");
  EXPECT_FALSE(packArguments(k, plan, tensors, scalars, args, error));
}

}  // namespace
}  // namespace argus::gpu

// Thread-block clusters and multicast copies end to end (examples/gemm_cluster.ag):
// the PTX declares the cluster and multicasts W's tile, stages are released by the
// whole cluster, the metadata and tensor maps say what the runtimes need, ptxas
// takes it, and the interpreter computes what gemm_persistent.ag computes.
// (On the H200: bench/results/cluster_multicast.md.)
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include <nlohmann/json.hpp>

#include "driver/metadata.h"
#include "hopper_test_util.h"
#include "ir/ir.h"
#include "ir/ops.h"
#include "test_sources.h"

using namespace argus::testing::hopper;  // NOLINT: the shared helpers of the Hopper tests

namespace {

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(ClusterPtx, DeclaresTheClusterAndMulticastsTheSharedTile) {
  auto c = compile("gemm_cluster.ag", argus::testing::readExample("gemm_cluster.ag"));
  const std::string& ptx = c->ptx();
  ASSERT_EQ(errorsOf(*c), "");
  EXPECT_TRUE(contains(ptx, ".reqnctapercluster 2, 1, 1"));
  // W's tile: each block copies its half (rank * 128 rows on) into both blocks.
  EXPECT_TRUE(contains(ptx, "mbarrier::complete_tx::bytes.multicast::cluster"));
  EXPECT_TRUE(contains(ptx, "%cluster_ctarank"));
  // A's tile is the block's own: copied as before.
  EXPECT_TRUE(contains(ptx, "mbarrier::complete_tx::bytes [")) << "A's copy should not multicast";
  // Stages are released on both blocks' barriers, and no block leaves or starts alone.
  EXPECT_TRUE(contains(ptx, "mapa.shared::cluster.u32"));
  EXPECT_TRUE(contains(ptx, "mbarrier.arrive.shared::cluster.b64"));
  EXPECT_TRUE(contains(ptx, "barrier.cluster.arrive;"));
  EXPECT_TRUE(contains(ptx, "barrier.cluster.wait;"));
  std::string report = ptxasReport(ptx);
  if (report.empty()) GTEST_SKIP() << "no ptxas at " << kPtxas;
  EXPECT_EQ(report.find("error"), std::string::npos) << report;
  EXPECT_NE(report.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << report;
}

TEST(ClusterPtx, OnlyTheFreeStageBarriersOfAMulticastLoopAreReleasedByTheCluster) {
  auto c = compile("gemm_cluster.ag", argus::testing::readExample("gemm_cluster.ag"));
  ASSERT_EQ(errorsOf(*c), "");
  const argus::ir::Function& fn = *c->ir().functions.at(0);
  EXPECT_EQ(fn.clusterSize, 2);
  int clusterInits = 0, plainInits = 0, clusterArrivals = 0, multicasts = 0, ownCopies = 0;
  std::function<void(const argus::ir::Block&)> walk = [&](const argus::ir::Block& block) {
    for (const auto& op : block.ops) {
      if (op->kind == argus::ir::OpKind::MbarrierInit)
        (argus::ir::MbarrierInitOp(*op).clusterRelease() ? clusterInits : plainInits)++;
      if (op->kind == argus::ir::OpKind::MbarrierArrive && argus::ir::MbarrierArriveOp(*op).clusterRelease())
        ++clusterArrivals;
      if (op->kind == argus::ir::OpKind::CopyBulk) (argus::ir::CopyBulkOp(*op).multicast() ? multicasts : ownCopies)++;
      for (const argus::ir::Block& region : op->regions) walk(region);
    }
  };
  walk(fn.body);
  EXPECT_EQ(clusterInits, 4);  // the free barriers of the 4 stages
  EXPECT_EQ(plainInits, 4);    // the full barriers: each block's producer announces its bytes
  EXPECT_GT(clusterArrivals, 0);
  EXPECT_GT(multicasts, 0);
  EXPECT_EQ(multicasts, ownCopies);  // W multicast, A not, wherever the pipeline copies
}

TEST(ClusterPtx, MetadataNamesTheClusterAndTheSlicedBox) {
  auto c = compile("gemm_cluster.ag", argus::testing::readExample("gemm_cluster.ag"));
  ASSERT_EQ(errorsOf(*c), "");
  nlohmann::json meta = nlohmann::json::parse(argus::kernelMetadataJson(c->ir(), "sm_90a"));
  const nlohmann::json& kernel = meta.at("kernels").at(0);
  EXPECT_EQ(kernel.at("cluster"), 2);
  const nlohmann::json& maps = kernel.at("tensor_maps");
  ASSERT_GE(maps.size(), 2u);
  EXPECT_EQ(maps[0].at("param"), "A");
  EXPECT_EQ(maps[0].at("box"), nlohmann::json::array({128, 64}));
  EXPECT_EQ(maps[1].at("param"), "W");
  EXPECT_EQ(maps[1].at("box"), nlohmann::json::array({128, 64}));  // half of the 256-row tile per block
}

TEST(ClusterPtx, WithoutAProducerWarpgroupEveryBlockCopiesItsWholeTile) {
  // A scalar from a tile before the loop keeps it from being specialized (AG4045): the
  // multicast falls back to plain copies, which need no cluster-wide release.
  std::string text = argus::testing::readExample("gemm_cluster.ag");
  const std::string loop = "    for pair in range(";
  const std::string init = "acc = zeros(f32, (BM, BN), layout=wgmma(warpgroups=2))";
  ASSERT_NE(text.find(loop), std::string::npos);
  ASSERT_NE(text.find(init), std::string::npos);
  text.replace(text.find(init), init.size(), init + " + bias");
  text.insert(text.find(loop), "    bias = cast(sum(load(A.tile((BM, BK))[0, 0])), f32)\n");
  auto c = compile("fallback.ag", text);
  const std::string& ptx = c->ptx();
  ASSERT_EQ(errorsOf(*c), "");
  bool ignored = false;
  for (const argus::Diagnostic& d : c->diagnostics()) ignored = ignored || std::string(d.code()) == "AG4045";
  EXPECT_TRUE(ignored);
  EXPECT_FALSE(contains(ptx, "multicast::cluster"));
  EXPECT_FALSE(contains(ptx, "mapa.shared::cluster"));
  EXPECT_TRUE(contains(ptx, ".reqnctapercluster 2, 1, 1"));
}

TEST(ClusterPtx, PlainSm90HasClustersToo) {
  // No TMA here, so sm_90 (PTX ISA 7.8) will do: the cluster barriers must be spelled in
  // a form that PTX version has (barrier.cluster.arrive.release needs 8.0).
  const char* text = R"(@kernel(grid=(cdiv(N, 256) * 2,), warps=4, cluster=2)
def scale(x: Tensor[f32, (N,)], y: Tensor[f32, (N,)]):
    y.tile((128,))[program_id(0)] = load(x.tile((128,))[program_id(0)]) * 2.0
)";
  auto c = compile("scale.ag", text, "sm_90");
  const std::string& ptx = c->ptx();
  ASSERT_EQ(errorsOf(*c), "");
  EXPECT_TRUE(contains(ptx, ".reqnctapercluster 2, 1, 1"));
  EXPECT_TRUE(contains(ptx, "barrier.cluster.wait;"));
  std::string report = ptxasReport(ptx);
  if (report.empty()) GTEST_SKIP() << "no ptxas at " << kPtxas;
  EXPECT_EQ(report.find("error"), std::string::npos) << report;
}

TEST(ClusterInterpreter, ComputesWhatThePersistentGemmComputes) {
  std::mt19937 rng(21);
  // Ragged: an odd number of row tiles (the last pair's second tile is past M), 5 K tiles.
  const int64_t m = 300, n = 600, k = 264;
  HostTensor a = randomBf16({m, k}, rng), w = randomBf16({n, k}, rng);
  auto withSms = [](std::string text, const char* sms) {
    text.replace(text.find("SMS: const = 132"), 16, std::string("SMS: const = ") + sms);
    return text;
  };
  std::vector<double> want = runLinear("persistent.ag", withSms(argus::testing::readExample("gemm_persistent.ag"), "3"), a, w, m, n);
  ASSERT_EQ(want.size(), static_cast<size_t>(m * n));
  EXPECT_EQ(runLinear("cluster.ag", withSms(argus::testing::readExample("gemm_cluster.ag"), "4"), a, w, m, n), want);
}

}  // namespace

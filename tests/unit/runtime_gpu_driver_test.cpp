// The CUDA driver runtime: the no-driver path everywhere, and a real launch
// where there is a GPU (skipped visibly where there is none).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "runtime/gpu/gpu_runtime.h"

namespace argus::gpu {
namespace {

// y[i] = i * scale for i < n (hand-written so that this test needs no compiler).
constexpr const char* kFillIndexPtx = R"(.version 7.8
.target sm_80
.address_size 64
.visible .entry fill_index(.param .u64 out, .param .f32 scale, .param .u32 n)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .f32 %f<3>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	ld.param.f32 %f1, [scale];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.s32 %p1, %r5, %r1;
	@%p1 bra $L_done;
	cvt.rn.f32.s32 %f2, %r5;
	mul.rn.f32 %f2, %f2, %f1;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.s32 %rd3, %r5, 4;
	add.s64 %rd2, %rd2, %rd3;
	st.global.f32 [%rd2], %f2;
$L_done:
	ret;
}
)";

TEST(GpuDriver, MissingDriverLibraryIsAClearError) {
  std::string error;
  OpenOptions options;
  options.driverLibrary = "libargus-test-no-such-driver.so.1";
  std::unique_ptr<GpuRuntime> runtime = GpuRuntime::open(error, options);
  EXPECT_EQ(runtime, nullptr);
  EXPECT_EQ(error, "no NVIDIA driver: libargus-test-no-such-driver.so.1 not found");
}

TEST(GpuDriver, LibraryWithoutTheEntryPointsIsRejected) {
  // libm is a real shared library that is not a CUDA driver.
  std::string error;
  EXPECT_EQ(CudaApi::load("libm.so.6", error), nullptr);
  EXPECT_NE(error.find("lacks cuInit"), std::string::npos) << error;
}

TEST(GpuDriver, ArchitectureFollowsComputeCapability) {
  DeviceInfo d;
  d.major = 9;
  EXPECT_EQ(d.argusArch(), "sm_90a");  // H100, H200: Hopper's arch-specific instructions too
  d.minor = 1;
  EXPECT_EQ(d.argusArch(), "sm_90");
  d.major = 10;
  d.minor = 0;
  EXPECT_EQ(d.argusArch(), "sm_90");  // PTX for sm_90 runs there through the JIT
  d.major = 8;
  d.minor = 6;
  EXPECT_EQ(d.argusArch(), "sm_80");
  d.major = 7;
  EXPECT_EQ(d.argusArch(), "");
}

class OnTheGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    runtime_ = GpuRuntime::open(error);
    if (!runtime_) GTEST_SKIP() << "no GPU: " << error;
  }
  std::unique_ptr<GpuRuntime> runtime_;
};

TEST_F(OnTheGpu, LaunchesCopiesAndTimes) {
  std::string error;
  std::shared_ptr<GpuModule> module = runtime_->loadModule(kFillIndexPtx, error);
  ASSERT_TRUE(module) << error;
  std::unique_ptr<GpuKernel> kernel = module->kernel("fill_index", error);
  ASSERT_TRUE(kernel) << error;
  const int n = 1000;
  std::unique_ptr<DeviceBuffer> out = runtime_->allocate(n * sizeof(float), error);
  ASSERT_TRUE(out) << error;
  ASSERT_TRUE(out->fill(0xFF, error)) << error;
  KernelArgs args;
  args.addPointer(out->address());
  args.addF32(0.5f);
  args.addI32(n);
  std::unique_ptr<EventTimer> timer = runtime_->createTimer(error);
  ASSERT_TRUE(timer) << error;
  ASSERT_TRUE(timer->start(error)) << error;
  ASSERT_TRUE(runtime_->launch(*kernel, Dim3{(n + 127) / 128, 1, 1}, Dim3{128, 1, 1}, 0, args, error)) << error;
  ASSERT_TRUE(timer->stop(error)) << error;
  float ms = -1;
  ASSERT_TRUE(timer->elapsedMs(ms, error)) << error;
  EXPECT_GE(ms, 0.0f);
  std::vector<float> host(n);
  ASSERT_TRUE(out->download(host.data(), host.size() * sizeof(float), error)) << error;
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[static_cast<size_t>(i)], i * 0.5f) << i;
  KernelResources resources;
  EXPECT_TRUE(kernel->resources(resources, error)) << error;
  EXPECT_GT(resources.registers, 0);
}

TEST_F(OnTheGpu, ErrorsNameTheCudaError) {
  std::string error;
  EXPECT_FALSE(runtime_->loadModule(".version 7.8\n.target sm_80\nthis is not PTX\n", error));
  EXPECT_NE(error.find("CUDA_ERROR_"), std::string::npos) << error;
  std::shared_ptr<GpuModule> module = runtime_->loadModule(kFillIndexPtx, error);
  ASSERT_TRUE(module) << error;
  EXPECT_FALSE(module->kernel("no_such_kernel", error));
  EXPECT_NE(error.find("CUDA_ERROR_NOT_FOUND"), std::string::npos) << error;
  std::unique_ptr<GpuKernel> kernel = module->kernel("fill_index", error);
  ASSERT_TRUE(kernel) << error;
  KernelArgs args;
  EXPECT_FALSE(runtime_->launch(*kernel, Dim3{1, 1, 1}, Dim3{4096, 1, 1}, 0, args, error));
  EXPECT_NE(error.find("CUDA_ERROR_"), std::string::npos) << error;
  EXPECT_FALSE(runtime_->launch(*kernel, Dim3{0, 1, 1}, Dim3{128, 1, 1}, 0, args, error));
  EXPECT_NE(error.find("is empty"), std::string::npos) << error;
}

}  // namespace
}  // namespace argus::gpu

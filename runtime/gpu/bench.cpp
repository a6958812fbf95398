// The benchmark harness (see bench.h).
#include "bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>

namespace argus::gpu {
namespace {

std::string formatNumber(double v, int precision = 4) {
  if (std::isnan(v)) return "nan";  // the poison is a negative NaN; "-nan" reads like a value
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", precision, v);
  return buffer;
}

std::vector<int64_t> unravel(size_t index, const std::vector<int64_t>& shape) {
  std::vector<int64_t> coord(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t extent = std::max<int64_t>(shape[d], 1);
    coord[d] = static_cast<int64_t>(index % static_cast<size_t>(extent));
    index /= static_cast<size_t>(extent);
  }
  return coord;
}

bool allBytesAre(const uint8_t* p, int bytes, uint8_t value) {
  for (int i = 0; i < bytes; ++i)
    if (p[i] != value) return false;
  return true;
}

}  // namespace

const char* tensorRoleName(TensorRole role) {
  switch (role) {
    case TensorRole::Input: return "input";
    case TensorRole::Output: return "output";
    case TensorRole::InOut: return "inout";
  }
  return "inout";
}

std::optional<TensorRole> tensorRoleFromName(const std::string& name) {
  if (name == "input") return TensorRole::Input;
  if (name == "output") return TensorRole::Output;
  if (name == "inout") return TensorRole::InOut;
  return std::nullopt;
}

size_t BenchTensor::elements() const {
  size_t n = 1;
  for (int64_t extent : shape) n *= static_cast<size_t>(extent);
  return n;
}

// ---------------------------------------------------------------- comparison

Comparison compareTensor(const std::string& name, const HostDType& dtype, const std::vector<int64_t>& shape,
                         const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, double tolerance) {
  Comparison c;
  c.tensor = name;
  c.tolerance = tolerance;
  size_t bytes = static_cast<size_t>(dtype.bytes);
  c.elements = std::min(got.size(), want.size()) / bytes;
  if (got.size() != want.size()) {
    c.passed = false;
    c.relativeError = std::numeric_limits<double>::infinity();
    return c;
  }
  double diffSquares = 0, refSquares = 0, worst = -1;
  bool nonFiniteMismatch = false;
  size_t worstIndex = 0;
  for (size_t i = 0; i < c.elements; ++i) {
    const uint8_t* g = got.data() + i * bytes;
    const uint8_t* w = want.data() + i * bytes;
    double gv = dtype.decode(g), wv = dtype.decode(w);
    double error;
    if (std::isnan(wv) || std::isinf(wv)) {
      bool same = std::isnan(wv) ? std::isnan(gv) : gv == wv;
      error = same ? 0 : std::numeric_limits<double>::infinity();
    } else if (!std::isfinite(gv)) {
      error = std::numeric_limits<double>::infinity();
    } else {
      double diff = gv - wv;
      diffSquares += diff * diff;
      refSquares += wv * wv;
      error = std::fabs(diff);
    }
    if (error != 0) {
      ++c.mismatches;
      if (allBytesAre(g, dtype.bytes, dtype.poisonByte())) ++c.unwritten;
      if (std::isinf(error)) nonFiniteMismatch = true;
      if (error > worst) {
        worst = error;
        worstIndex = i;
        c.worstGot = gv;
        c.worstWant = wv;
      }
    }
  }
  if (c.mismatches) c.worstCoord = unravel(worstIndex, shape);
  if (nonFiniteMismatch) c.relativeError = std::numeric_limits<double>::infinity();
  else c.relativeError = refSquares > 0 ? std::sqrt(diffSquares) / std::sqrt(refSquares) : std::sqrt(diffSquares);
  c.passed = c.relativeError <= tolerance;
  return c;
}

std::string Comparison::describe() const {
  std::ostringstream os;
  os << tensor << ": " << (passed ? "ok" : "MISMATCH") << ", relative error " << formatNumber(relativeError, 3)
     << " (tolerance " << formatNumber(tolerance, 3) << "), " << mismatches << " of " << elements
     << " elements differ";
  if (!worstCoord.empty()) {
    os << "; worst " << tensor << "[";
    for (size_t d = 0; d < worstCoord.size(); ++d) os << (d ? ", " : "") << worstCoord[d];
    os << "]: gpu " << formatNumber(worstGot, 9) << ", expected " << formatNumber(worstWant, 9);
  }
  if (unwritten) os << "; " << unwritten << " elements still hold the poison pattern (never written?)";
  return os.str();
}

size_t countPoisoned(const HostDType& dtype, const std::vector<uint8_t>& bytes) {
  size_t size = static_cast<size_t>(dtype.bytes), count = 0;
  for (size_t i = 0; i + size <= bytes.size(); i += size)
    if (allBytesAre(bytes.data() + i, dtype.bytes, dtype.poisonByte())) ++count;
  return count;
}

// ---------------------------------------------------------------- timing

TimingStats summarizeTimes(const std::vector<float>& ms) {
  TimingStats s;
  s.runs = ms.size();
  if (ms.empty()) return s;
  std::vector<float> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  s.medianMs = n % 2 ? sorted[n / 2] : (static_cast<double>(sorted[n / 2 - 1]) + sorted[n / 2]) / 2;
  s.minMs = sorted.front();
  s.maxMs = sorted.back();
  s.meanMs = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  return s;
}

std::string formatTiming(const TimingStats& stats, double bytesMoved, std::optional<double> flops) {
  std::ostringstream os;
  os << "time: median " << formatNumber(stats.medianMs) << " ms, min " << formatNumber(stats.minMs) << " ms, max "
     << formatNumber(stats.maxMs) << " ms (" << stats.runs << " runs)\n";
  if (stats.medianMs > 0 && stats.minMs > 0) {
    double gbMedian = bytesMoved / (stats.medianMs * 1e-3) / 1e9, gbBest = bytesMoved / (stats.minMs * 1e-3) / 1e9;
    os << "bandwidth: " << formatNumber(gbMedian) << " GB/s at the median, " << formatNumber(gbBest)
       << " GB/s at the min (" << formatNumber(bytesMoved) << " bytes: every tensor read or written once)\n";
    if (flops) {
      double tfMedian = *flops / (stats.medianMs * 1e-3) / 1e12, tfBest = *flops / (stats.minMs * 1e-3) / 1e12;
      os << "compute: " << formatNumber(tfMedian) << " TFLOP/s at the median, " << formatNumber(tfBest)
         << " TFLOP/s at the min (" << formatNumber(*flops) << " operations per run)\n";
    }
  }
  return os.str();
}

// ---------------------------------------------------------------- BenchRun

std::unique_ptr<BenchRun> BenchRun::create(GpuRuntime& runtime, std::shared_ptr<GpuKernel> gpuKernel,
                                           const KernelMeta& kernel, const std::map<std::string, int64_t>& sizes,
                                           const std::vector<BenchTensor>& tensors,
                                           const std::map<std::string, std::vector<uint8_t>>& scalars,
                                           std::string& error) {
  std::unique_ptr<BenchRun> run(new BenchRun(runtime, std::move(gpuKernel)));
  if (!planLaunch(kernel, sizes, run->plan_, error)) return nullptr;
  std::map<std::string, TensorBinding> bindings;
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const MetaParam& p = kernel.params[i];
    if (p.kind != MetaParam::Kind::Tensor) continue;
    auto it = std::find_if(tensors.begin(), tensors.end(), [&](const BenchTensor& t) { return t.name == p.name; });
    if (it == tensors.end()) {
      error = "no data for tensor '" + p.name + "'";
      return nullptr;
    }
    if (it->shape != run->plan_.shapes[i] || it->dtype.name != p.dtype.name) {
      error = "the data for tensor '" + p.name + "' does not have the kernel's dtype and shape";
      return nullptr;
    }
    size_t bytes = run->plan_.tensorBytes[i];
    if (it->role != TensorRole::Output && it->input.size() != bytes) {
      error = "tensor '" + p.name + "' has " + std::to_string(it->input.size()) + " bytes of input; it needs " +
              std::to_string(bytes);
      return nullptr;
    }
    std::unique_ptr<DeviceBuffer> buffer = runtime.allocate(bytes, error);
    if (!buffer) return nullptr;
    if (it->role == TensorRole::Input && !buffer->upload(it->input.data(), bytes, error)) return nullptr;
    bindings[p.name] = TensorBinding{buffer->address(), buffer->bytes()};
    run->tensors_.push_back(&*it);
    run->buffers_.push_back(std::move(buffer));
  }
  if (!packArguments(kernel, run->plan_, bindings, scalars, run->args_, error, runtime.tensorMapEncoder()))
    return nullptr;
  return run;
}

double BenchRun::bytesMoved() const {
  double total = 0;
  for (size_t i = 0; i < tensors_.size(); ++i)
    total += static_cast<double>(buffers_[i]->bytes()) * (tensors_[i]->role == TensorRole::InOut ? 2 : 1);
  return total;
}

bool BenchRun::prepare(std::string& error) {
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const BenchTensor& t = *tensors_[i];
    if (t.role == TensorRole::Output && !buffers_[i]->fill(t.dtype.poisonByte(), error)) return false;
    if (t.role == TensorRole::InOut && !buffers_[i]->upload(t.input.data(), t.input.size(), error)) return false;
  }
  return true;
}

bool BenchRun::launch(std::string& error) {
  return runtime_.launch(*gpuKernel_, plan_.grid, plan_.block, plan_.dynamicSharedBytes, args_, error);
}

bool BenchRun::runOnce(std::vector<std::vector<uint8_t>>& results, std::string& error) {
  if (!prepare(error) || !launch(error) || !runtime_.synchronize(error)) return false;
  results.assign(tensors_.size(), {});
  for (size_t i = 0; i < tensors_.size(); ++i) {
    results[i].resize(buffers_[i]->bytes());
    if (!buffers_[i]->download(results[i].data(), results[i].size(), error)) return false;
  }
  return true;
}

bool BenchRun::time(int warmup, int repeat, std::vector<float>& ms, std::string& error) {
  ms.clear();
  for (int i = 0; i < warmup; ++i)
    if (!prepare(error) || !launch(error)) return false;
  if (!runtime_.synchronize(error)) return false;
  std::unique_ptr<EventTimer> timer = runtime_.createTimer(error);
  if (!timer) return false;
  for (int i = 0; i < repeat; ++i) {
    float elapsed = 0;
    if (!prepare(error) || !timer->start(error) || !launch(error) || !timer->stop(error) ||
        !timer->elapsedMs(elapsed, error))
      return false;
    ms.push_back(elapsed);
  }
  return runtime_.synchronize(error);
}

bool readFileBytes(const std::string& path, std::string& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "'";
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  out = buffer.str();
  return true;
}

}  // namespace argus::gpu

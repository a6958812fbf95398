#include "runtime/interp/random_run.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace argus::interp {

std::optional<RandomRun> runOnRandomInputs(const ir::Function& fn, const std::map<std::string, int64_t>& sizes,
                                           uint64_t seed, const RandomRunOptions& options) {
  RandomRun result;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  result.tensors.reserve(fn.params.size());
  std::vector<ArgValue> args;
  for (const ir::Param& p : fn.params) {
    if (p.kind == ir::ParamKind::Tensor) {
      std::vector<int64_t> shape;
      int64_t elements = 1;
      for (const ir::DimRef& d : p.dims) {
        int64_t extent = d.constant;
        if (extent < 0) {
          const std::string& name = fn.sizeNames[static_cast<size_t>(d.sizeIndex)];
          auto it = sizes.find(name);
          extent = it == sizes.end() ? options.defaultSize : it->second;
        }
        shape.push_back(extent);
        elements *= std::max<int64_t>(extent, 1);
      }
      if (elements > options.maxElements) return std::nullopt;
      result.tensors.push_back(HostTensor::zeros(p.dtype, shape));
      HostTensor& t = result.tensors.back();
      for (size_t i = 0; i < t.size(); ++i) {
        if (ir::isFloat(t.dtype)) t.set(i, real(rng));
        else if (t.dtype == ir::DType::Bool) t.set(i, static_cast<double>(rng() % 2));
        else t.setInt(i, static_cast<int64_t>(rng() % 16));
      }
      args.emplace_back(&t);
    } else if (p.kind == ir::ParamKind::Scalar) {
      // Fixed, harmless scalars: the same for every kernel compared.
      if (ir::isFloat(p.dtype)) args.emplace_back(0.5);
      else args.emplace_back(int64_t{3});
    }
  }
  RunOptions runOptions;
  runOptions.maxOpsPerBlock = options.maxOpsPerBlock;
  runOptions.synchronousCopies = options.synchronousCopies;
  if (auto error = run(fn, args, runOptions)) {
    result.fault = true;
    result.requirementFailed = error->id == DiagId::RunRequirementFailed;
    result.faultText = std::string(diagInfo(error->id).code) + ": " + error->message;
  }
  return result;
}

std::string firstDifference(const ir::Function& fn, const RandomRun& reference, const RandomRun& run,
                            const std::string& referenceName) {
  size_t tensor = 0;
  for (const ir::Param& p : fn.params) {
    if (p.kind != ir::ParamKind::Tensor) continue;
    if (tensor >= reference.tensors.size() || tensor >= run.tensors.size()) break;
    const HostTensor& x = reference.tensors[tensor];
    const HostTensor& y = run.tensors[tensor];
    ++tensor;
    if (x.bytes == y.bytes) continue;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (x.getBits(i) == y.getBits(i)) continue;
      double u = x.get(i), v = y.get(i);
      bool same = ir::isFloat(x.dtype) ? (std::abs(u - v) <= 1e-3 * (1 + std::abs(u))) : false;
      if (!same || std::isnan(u) != std::isnan(v))
        return "output " + p.name + "[" + std::to_string(i) + "] is " + std::to_string(v) + ", " + referenceName +
               "'s " + std::to_string(u);
    }
  }
  return "";
}

}  // namespace argus::interp

// Correctness pieces of the Evaluator: random arguments, output roles,
// poisoning and the dtype-aware comparison with the reference.
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>

#include "agent/evaluator_internal.h"

namespace argus::agent::detail {

std::vector<interp::ArgValue> KernelArguments::interpreterValues(const ir::Function& fn) {
  std::vector<interp::ArgValue> values;
  size_t tensor = 0, scalar = 0;
  for (const ir::Param& p : fn.params) {
    if (p.kind == ir::ParamKind::Tensor) values.emplace_back(&tensors.at(tensor++));
    else if (p.kind == ir::ParamKind::Scalar) values.push_back(scalars.at(scalar++));
  }
  return values;
}

bool drawArguments(const ir::Function& fn, const Sizes& sizes, std::mt19937_64& rng, KernelArguments& out,
                   std::string& error) {
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  out = KernelArguments{};
  for (const ir::Param& p : fn.params) {
    if (p.kind == ir::ParamKind::Tensor) {
      std::vector<int64_t> shape;
      double elements = 1;
      for (const ir::DimRef& d : p.dims) {
        if (d.constant >= 0) {
          shape.push_back(d.constant);
        } else {
          const std::string& name = fn.sizeNames.at(static_cast<size_t>(d.sizeIndex));
          auto it = sizes.find(name);
          if (it == sizes.end()) {
            error = "the task gives no value for size '" + name + "' of tensor '" + p.name + "'";
            return false;
          }
          shape.push_back(it->second);
        }
        elements *= static_cast<double>(shape.back());
      }
      if (elements > 4e9) {
        error = "tensor '" + p.name + "' is too large for this machine at " + sizesText(sizes);
        return false;
      }
      interp::HostTensor t = interp::HostTensor::zeros(p.dtype, shape);
      for (size_t i = 0; i < t.size(); ++i) {
        if (ir::isFloat(t.dtype)) t.set(i, real(rng));
        else if (t.dtype == ir::DType::Bool) t.setInt(i, static_cast<int64_t>(rng() % 2));
        else t.setInt(i, static_cast<int64_t>(rng() % 16));
      }
      out.tensors.push_back(std::move(t));
      out.tensorNames.push_back(p.name);
    } else if (p.kind == ir::ParamKind::Scalar) {
      // The value as the kernel receives it: rounded to its dtype.
      interp::HostTensor cell = interp::HostTensor::zeros(p.dtype, {1});
      if (ir::isFloat(p.dtype)) {
        cell.set(0, real(rng));
        out.scalars.emplace_back(cell.get(0));
      } else {
        cell.setInt(0, static_cast<int64_t>(rng() % 16));
        out.scalars.emplace_back(cell.getInt(0));
      }
      out.scalarNames.push_back(p.name);
      out.scalarBits.push_back(cell.bytes);
    }
  }
  return true;
}

std::vector<TensorUse> tensorUses(const ir::Function& fn) {
  // Follow each tensor parameter through the views made of it.
  std::map<ir::ValueId, size_t> paramOf;
  std::vector<bool> read(fn.params.size()), written(fn.params.size());
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.params[i].kind == ir::ParamKind::Tensor) paramOf[fn.params[i].value] = i;
  auto visit = [&](auto& self, const ir::Block& block) -> void {
    for (const auto& op : block.ops) {
      for (size_t k = 0; k < op->operands.size(); ++k) {
        auto it = paramOf.find(op->operands[k]);
        if (it == paramOf.end()) continue;
        bool viewOfIt = op->kind == ir::OpKind::View && k == 0 && !op->results.empty();
        if (viewOfIt) paramOf[op->results[0]] = it->second;
        else if (op->kind == ir::OpKind::Store && k == 0) written[it->second] = true;
        else read[it->second] = true;  // loads, copies, and anything not followed
      }
      for (const ir::Block& region : op->regions) self(self, region);
    }
  };
  visit(visit, fn.body);
  std::vector<TensorUse> uses;
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.params[i].kind == ir::ParamKind::Tensor)
      uses.push_back(!written[i] ? TensorUse::Read : read[i] ? TensorUse::ReadWrite : TensorUse::WriteOnly);
  return uses;
}

void poison(interp::HostTensor& tensor) {
  if (ir::isFloat(tensor.dtype)) {
    for (size_t i = 0; i < tensor.size(); ++i) tensor.set(i, std::numeric_limits<double>::quiet_NaN());
  } else {
    std::memset(tensor.bytes.data(), 0xAB, tensor.bytes.size());
  }
}

double relativeTolerance(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::BF16: return 2e-2;
    case ir::DType::F16: return 2e-3;
    case ir::DType::F8E4M3:
    case ir::DType::F8E5M2: return 1e-1;
    case ir::DType::F32: return 1e-4;
    case ir::DType::F64: return 1e-10;
    default: return 0;
  }
}

std::string sizesText(const Sizes& sizes) {
  std::string text;
  for (const auto& [name, value] : sizes) text += (text.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return text;
}

namespace {

std::string coordinateText(const std::vector<int64_t>& shape, size_t index) {
  std::vector<int64_t> coord(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t extent = std::max<int64_t>(shape[d], 1);
    coord[d] = static_cast<int64_t>(index) % extent;
    index /= static_cast<size_t>(extent);
  }
  std::string text = "[";
  for (size_t d = 0; d < coord.size(); ++d) text += (d ? ", " : "") + std::to_string(coord[d]);
  return text + "]";
}

std::string number(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

}  // namespace

std::string compareTensors(const std::string& name, const interp::HostTensor& got, const interp::HostTensor& want,
                           TensorError* errorOut) {
  if (got.shape != want.shape || got.dtype != want.dtype) return name + ": shape or dtype differs from the reference";
  bool isFloat = ir::isFloat(want.dtype);
  double scale = 0;
  if (isFloat)
    for (size_t i = 0; i < want.size(); ++i)
      if (double v = want.get(i); std::isfinite(v)) scale = std::max(scale, std::fabs(v));
  double rtol = relativeTolerance(want.dtype);
  // A tiny floor keeps an all-zero reference from demanding bit equality of rounding noise.
  double tolerance = rtol * std::max(scale, 1e-6);

  size_t mismatches = 0, unwritten = 0, worst = 0;
  double worstError = -1, largestError = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double error = 0;
    bool poisoned = false;
    if (isFloat) {
      double g = got.get(i), w = want.get(i);
      poisoned = std::isnan(g) && !std::isnan(w);
      if (std::isnan(w)) error = std::isnan(g) ? 0 : INFINITY;
      else if (!std::isfinite(g) || !std::isfinite(w)) error = g == w ? 0 : INFINITY;
      else error = std::fabs(g - w);
    } else {
      error = got.getBits(i) == want.getBits(i) ? 0 : 1;
      uint64_t poisonBits = 0;
      std::memset(&poisonBits, 0xAB, got.elementBytes());
      poisoned = error > 0 && got.getBits(i) == poisonBits;
    }
    largestError = std::max(largestError, error);
    if (error > tolerance) {
      ++mismatches;
      unwritten += poisoned ? 1 : 0;
      if (error > worstError) {
        worstError = error;
        worst = i;
      }
    }
  }
  if (errorOut) *errorOut = {largestError, isFloat ? tolerance : 0.0};
  if (mismatches == 0) return "";
  std::ostringstream os;
  double g = isFloat ? got.get(worst) : static_cast<double>(got.getInt(worst));
  double w = isFloat ? want.get(worst) : static_cast<double>(want.getInt(worst));
  os << name << coordinateText(want.shape, worst) << ": got " << number(g)
     << (unwritten && isFloat && std::isnan(g) ? " (never written)" : "") << ", want " << number(w) << "; "
     << mismatches << " of " << want.size() << " elements differ";
  if (unwritten) os << " (" << unwritten << " never written)";
  if (isFloat) os << " beyond the tolerance " << number(tolerance) << " (" << number(rtol) << " x max |reference| " << number(scale) << ")";
  return os.str();
}

}  // namespace argus::agent::detail

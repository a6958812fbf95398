// Parsing NAME.meta.json and launching from it (see launch_metadata.h).
#include "launch_metadata.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace argus::gpu {
namespace {

using json = nlohmann::json;

constexpr int kKnownMetadataVersion = 1;
constexpr int kMaxExprDepth = 200;

struct MetaError {
  std::string message;
};

[[noreturn]] void malformed(const std::string& what) { throw MetaError{"malformed kernel metadata: " + what}; }

const json& member(const json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key)) malformed(where + " has no \"" + key + "\"");
  return object.at(key);
}

std::string stringMember(const json& object, const char* key, const std::string& where) {
  const json& v = member(object, key, where);
  if (!v.is_string()) malformed(where + ": \"" + key + "\" is not a string");
  return v.get<std::string>();
}

int64_t integer(const json& v, const std::string& where) {
  if (!v.is_number_integer()) malformed(where + " is not an integer");
  return v.get<int64_t>();
}

SizeExpr::Op opFromName(const std::string& name, const std::string& where) {
  using O = SizeExpr::Op;
  static const std::pair<const char*, O> kOps[] = {
      {"add", O::Add}, {"sub", O::Sub}, {"mul", O::Mul}, {"floordiv", O::FloorDiv}, {"cdiv", O::CeilDiv},
      {"mod", O::Mod}, {"min", O::Min}, {"max", O::Max}, {"lt", O::Lt}, {"le", O::Le}, {"gt", O::Gt},
      {"ge", O::Ge}, {"eq", O::Eq}, {"ne", O::Ne}, {"and", O::And}, {"or", O::Or}, {"not", O::Not}};
  for (const auto& [n, op] : kOps)
    if (name == n) return op;
  malformed(where + ": unknown operation '" + name + "'");
}

SizeExpr parseExpr(const json& j, const std::string& where, int depth = 0) {
  if (depth > kMaxExprDepth) malformed(where + " is nested too deeply");
  if (!j.is_object()) malformed(where + " is not an expression object");
  if (j.contains("const")) return SizeExpr::constant(integer(j.at("const"), where + ".const"));
  if (j.contains("size")) {
    if (!j.at("size").is_string()) malformed(where + ": \"size\" is not a name");
    return SizeExpr::named(j.at("size").get<std::string>());
  }
  SizeExpr::Op op = opFromName(stringMember(j, "op", where), where);
  const json& args = member(j, "args", where);
  if (!args.is_array()) malformed(where + ": \"args\" is not an array");
  std::vector<SizeExpr> operands;
  for (const json& a : args) operands.push_back(parseExpr(a, where, depth + 1));
  if (operands.size() != (op == SizeExpr::Op::Not ? 1u : 2u)) malformed(where + ": wrong number of operands");
  return SizeExpr::apply(op, std::move(operands));
}

MetaParam parseParam(const json& j, const std::string& where) {
  MetaParam p;
  p.name = stringMember(j, "name", where);
  std::string kind = stringMember(j, "kind", where);
  if (kind == "tensor") p.kind = MetaParam::Kind::Tensor;
  else if (kind == "scalar") p.kind = MetaParam::Kind::Scalar;
  else if (kind == "size") p.kind = MetaParam::Kind::Size;
  else malformed(where + ": unknown parameter kind '" + kind + "'");
  std::string dtype = stringMember(j, "dtype", where);
  std::optional<HostDType> t = hostDTypeFromName(dtype);
  if (!t) malformed(where + ": unknown dtype '" + dtype + "'");
  p.dtype = *t;
  if (p.kind == MetaParam::Kind::Tensor) {
    const json& dims = member(j, "dims", where);
    if (!dims.is_array()) malformed(where + ": \"dims\" is not an array");
    for (const json& d : dims) {
      MetaDim dim;
      if (d.is_object() && d.contains("const")) {
        dim.constant = integer(d.at("const"), where + " dimension");
        if (dim.constant < 0) malformed(where + ": negative dimension");
      } else if (d.is_object() && d.contains("size") && d.at("size").is_string()) {
        dim.size = d.at("size").get<std::string>();
      } else {
        malformed(where + ": a dimension is neither a constant nor a size");
      }
      p.dims.push_back(std::move(dim));
    }
  }
  return p;
}

MetaTensorMap parseTensorMap(const json& j, const KernelMeta& k, const std::string& where) {
  MetaTensorMap m;
  m.param = stringMember(j, "param", where);
  auto it = std::find_if(k.params.begin(), k.params.end(), [&](const MetaParam& p) { return p.name == m.param; });
  if (it == k.params.end() || it->kind != MetaParam::Kind::Tensor)
    malformed(where + ": '" + m.param + "' is not a tensor parameter");
  m.paramIndex = static_cast<size_t>(it - k.params.begin());
  const json& box = member(j, "box", where);
  if (!box.is_array()) malformed(where + ": \"box\" is not an array");
  for (const json& extent : box) m.box.push_back(integer(extent, where + " box extent"));
  if (m.box.size() != it->dims.size())
    malformed(where + ": the box of '" + m.param + "' has " + std::to_string(m.box.size()) + " extents for " +
              std::to_string(it->dims.size()) + " dimensions");
  m.swizzleBytes = static_cast<int>(integer(member(j, "swizzle_bytes", where), where + ".swizzle_bytes"));
  if (tensorMapSwizzle(m.swizzleBytes) < 0)
    malformed(where + ": swizzle_bytes " + std::to_string(m.swizzleBytes) + " is not 0, 32, 64 or 128");
  if (j.contains("store")) {  // absent in metadata of load-only kernels and of older argusc
    const json& store = j.at("store");
    if (!store.is_boolean()) malformed(where + ": \"store\" of '" + m.param + "' is not true or false");
    m.store = store.get<bool>();
  }
  return m;
}

KernelMeta parseKernel(const json& j) {
  KernelMeta k;
  k.name = stringMember(j, "name", "a kernel");
  std::string where = "kernel '" + k.name + "'";
  k.threads = static_cast<int>(integer(member(j, "threads", where), where + ".threads"));
  if (k.threads <= 0 || k.threads > 1024) malformed(where + ": " + std::to_string(k.threads) + " threads per block");
  const json& params = member(j, "params", where);
  if (!params.is_array()) malformed(where + ": \"params\" is not an array");
  for (const json& p : params) k.params.push_back(parseParam(p, where + " parameter"));
  const json& sizes = member(j, "sizes", where);
  if (!sizes.is_array()) malformed(where + ": \"sizes\" is not an array");
  for (const json& s : sizes) {
    if (!s.is_string()) malformed(where + ": a size name is not a string");
    k.sizes.push_back(s.get<std::string>());
  }
  const json& grid = member(j, "grid", where);
  if (!grid.is_array() || grid.size() != 3) malformed(where + ": \"grid\" is not three expressions");
  for (size_t d = 0; d < 3; ++d) k.grid[d] = parseExpr(grid[d], where + " grid");
  if (j.contains("cluster")) {
    k.cluster = static_cast<int>(integer(j.at("cluster"), where + ".cluster"));
    if (k.cluster < 1 || k.cluster > 8) malformed(where + ": a cluster of " + std::to_string(k.cluster) + " blocks");
  }
  if (j.contains("grid_text") && j.at("grid_text").is_array())
    for (const json& t : j.at("grid_text")) k.gridText.push_back(t.is_string() ? t.get<std::string>() : "?");
  if (j.contains("requirements")) {
    const json& reqs = j.at("requirements");
    if (!reqs.is_array()) malformed(where + ": \"requirements\" is not an array");
    for (const json& r : reqs) {
      MetaRequirement req;
      req.condition = parseExpr(member(r, "condition", where + " requirement"), where + " requirement");
      if (r.contains("condition_text") && r.at("condition_text").is_string())
        req.conditionText = r.at("condition_text").get<std::string>();
      if (r.contains("text") && r.at("text").is_string()) req.text = r.at("text").get<std::string>();
      k.requirements.push_back(std::move(req));
    }
  }
  if (j.contains("static_shared_bytes")) k.staticSharedBytes = integer(j.at("static_shared_bytes"), where + ".static_shared_bytes");
  if (j.contains("dynamic_shared_bytes"))
    k.dynamicSharedBytes = integer(j.at("dynamic_shared_bytes"), where + ".dynamic_shared_bytes");
  if (j.contains("tensor_maps")) {
    const json& maps = j.at("tensor_maps");
    if (!maps.is_array()) malformed(where + ": \"tensor_maps\" is not an array");
    for (const json& m : maps) k.tensorMaps.push_back(parseTensorMap(m, k, where + " tensor map"));
  }
  return k;
}

std::string sizesText(const std::map<std::string, int64_t>& sizes) {
  std::string out;
  for (const auto& [name, value] : sizes) out += (out.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  return out.empty() ? "no sizes" : out;
}

}  // namespace

bool parseKernelMetadata(const std::string& jsonText, std::vector<KernelMeta>& kernels, std::string& error) {
  kernels.clear();
  json doc = json::parse(jsonText, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    error = "malformed kernel metadata: not valid JSON";
    return false;
  }
  try {
    int64_t version = integer(member(doc, "version", "the document"), "\"version\"");
    if (version != kKnownMetadataVersion) {
      error = "kernel metadata version " + std::to_string(version) + " is not supported (this runtime reads version " +
              std::to_string(kKnownMetadataVersion) + ")";
      return false;
    }
    if (!doc.contains("kernels")) malformed("the document has no \"kernels\"");
    const json& list = doc.at("kernels");
    if (!list.is_array()) malformed("\"kernels\" is not an array");
    for (const json& k : list) kernels.push_back(parseKernel(k));
  } catch (const MetaError& e) {
    error = e.message;
    kernels.clear();
    return false;
  } catch (const std::exception& e) {
    error = std::string("malformed kernel metadata: ") + e.what();
    kernels.clear();
    return false;
  }
  return true;
}

bool planLaunch(const KernelMeta& kernel, const std::map<std::string, int64_t>& sizes, LaunchPlan& plan,
                std::string& error) {
  plan = LaunchPlan{};
  for (const std::string& s : kernel.sizes) {
    auto it = sizes.find(s);
    if (it == sizes.end()) {
      error = "kernel '" + kernel.name + "' needs a value for size " + s;
      return false;
    }
    if (it->second < 0 || it->second > INT32_MAX) {
      error = "size " + s + "=" + std::to_string(it->second) + " does not fit the kernel's i32 size parameter";
      return false;
    }
    plan.sizes[s] = it->second;
  }
  for (const MetaRequirement& r : kernel.requirements) {
    int64_t holds = 0;
    std::string why;
    if (!r.condition.evaluate(plan.sizes, holds, why)) {
      error = "kernel '" + kernel.name + "': requirement '" + r.conditionText + "' cannot be evaluated: " + why;
      return false;
    }
    if (!holds) {
      error = "kernel '" + kernel.name + "': requirement '" + (r.conditionText.empty() ? r.text : r.conditionText) +
              "' does not hold for " + sizesText(plan.sizes);
      if (!r.text.empty() && r.text != r.conditionText) error += " (" + r.text + ")";
      return false;
    }
  }
  unsigned* extents[3] = {&plan.grid.x, &plan.grid.y, &plan.grid.z};
  for (int d = 0; d < 3; ++d) {
    int64_t v = 0;
    std::string why;
    if (!kernel.grid[d].evaluate(plan.sizes, v, why)) {
      error = "kernel '" + kernel.name + "': grid dimension " + std::to_string(d) + " cannot be evaluated: " + why;
      return false;
    }
    int64_t limit = d == 0 ? INT32_MAX : 65535;
    if (v < 1 || v > limit) {
      std::string text = static_cast<size_t>(d) < kernel.gridText.size() ? " (" + kernel.gridText[static_cast<size_t>(d)] + ")" : "";
      error = "kernel '" + kernel.name + "': grid dimension " + std::to_string(d) + text + " is " + std::to_string(v) +
              " for " + sizesText(plan.sizes) + "; it must be between 1 and " + std::to_string(limit);
      return false;
    }
    if (d == 0 && v % kernel.cluster != 0) {
      std::string text = kernel.gridText.empty() ? "" : " (" + kernel.gridText[0] + ")";
      error = "kernel '" + kernel.name + "': grid dimension 0" + text + " is " + std::to_string(v) + " for " +
              sizesText(plan.sizes) + ", but the kernel runs in clusters of " + std::to_string(kernel.cluster) +
              " blocks along it; it must be a multiple of " + std::to_string(kernel.cluster);
      return false;
    }
    *extents[d] = static_cast<unsigned>(v);
  }
  plan.block = Dim3{static_cast<unsigned>(kernel.threads), 1, 1};
  plan.dynamicSharedBytes = static_cast<unsigned>(kernel.dynamicSharedBytes);
  for (const MetaParam& p : kernel.params) {
    std::vector<int64_t> shape;
    size_t bytes = 0;
    if (p.kind == MetaParam::Kind::Tensor) {
      bytes = static_cast<size_t>(p.dtype.bytes);
      for (const MetaDim& d : p.dims) {
        int64_t extent = d.constant;
        if (extent < 0) {
          auto it = plan.sizes.find(d.size);
          if (it == plan.sizes.end()) {
            error = "tensor '" + p.name + "' has a dimension '" + d.size + "' that is not one of the kernel's sizes";
            return false;
          }
          extent = it->second;
        }
        if (__builtin_mul_overflow(bytes, static_cast<size_t>(extent), &bytes)) {
          error = "tensor '" + p.name + "' is too large to address";
          return false;
        }
        shape.push_back(extent);
      }
    }
    plan.shapes.push_back(std::move(shape));
    plan.tensorBytes.push_back(bytes);
  }
  return true;
}

bool packArguments(const KernelMeta& kernel, const LaunchPlan& plan,
                   const std::map<std::string, TensorBinding>& tensors,
                   const std::map<std::string, std::vector<uint8_t>>& scalars, KernelArgs& args,
                   std::string& error, const TensorMapEncoder& encoder) {
  args = KernelArgs{};
  if (plan.tensorBytes.size() != kernel.params.size()) {
    error = "the launch plan does not belong to kernel '" + kernel.name + "'";
    return false;
  }
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const MetaParam& p = kernel.params[i];
    switch (p.kind) {
      case MetaParam::Kind::Tensor: {
        auto it = tensors.find(p.name);
        if (it == tensors.end()) {
          error = "no buffer for tensor '" + p.name + "'";
          return false;
        }
        if (it->second.bytes < plan.tensorBytes[i]) {
          error = "the buffer for tensor '" + p.name + "' holds " + std::to_string(it->second.bytes) +
                  " bytes; the tensor needs " + std::to_string(plan.tensorBytes[i]);
          return false;
        }
        args.addPointer(it->second.address);
        break;
      }
      case MetaParam::Kind::Scalar: {
        auto it = scalars.find(p.name);
        if (it == scalars.end()) {
          error = "no value for scalar '" + p.name + "'";
          return false;
        }
        if (it->second.size() != static_cast<size_t>(p.dtype.bytes)) {
          error = "scalar '" + p.name + "' of type " + p.dtype.name + " needs " + std::to_string(p.dtype.bytes) +
                  " bytes, got " + std::to_string(it->second.size());
          return false;
        }
        args.addBytes(it->second.data(), it->second.size(), it->second.size());
        break;
      }
      case MetaParam::Kind::Size: {
        auto it = plan.sizes.find(p.name);
        if (it == plan.sizes.end()) {
          error = "no value for size '" + p.name + "'";
          return false;
        }
        args.addI32(static_cast<int32_t>(it->second));
        break;
      }
    }
  }
  if (!kernel.tensorMaps.empty() && !encoder) {
    error = "kernel '" + kernel.name + "' copies with TMA and needs tensor maps, which this launcher cannot encode";
    return false;
  }
  for (size_t m = 0; m < kernel.tensorMaps.size(); ++m) {
    cu::TensorMap map{};
    TensorMapEncoding encoding;
    std::string why;
    if (!planKernelTensorMap(kernel, plan, m, tensors, encoding, why)) {
      if (!kernel.tensorMaps[m].store) {
        error = why;
        return false;
      }
      // A store map TMA cannot describe (MetaTensorMap::store): the kernel tests the
      // same conditions and stores without it, so zeros go in its place.
      args.addTensorMap(map);
      continue;
    }
    if (!encoder(encoding, map, error)) {
      error = "kernel '" + kernel.name + "', tensor '" + kernel.tensorMaps[m].param + "': " + error;
      return false;
    }
    args.addTensorMap(map);
  }
  return true;
}

bool planKernelTensorMap(const KernelMeta& kernel, const LaunchPlan& plan, size_t mapIndex,
                         const std::map<std::string, TensorBinding>& tensors, TensorMapEncoding& out,
                         std::string& error) {
  if (mapIndex >= kernel.tensorMaps.size() || plan.shapes.size() != kernel.params.size()) {
    error = "the launch plan does not belong to kernel '" + kernel.name + "'";
    return false;
  }
  const MetaTensorMap& map = kernel.tensorMaps[mapIndex];
  const MetaParam& param = kernel.params.at(map.paramIndex);
  auto bound = tensors.find(param.name);
  if (bound == tensors.end()) {
    error = "no buffer for tensor '" + param.name + "'";
    return false;
  }
  TensorMapTarget target;
  target.tensorName = param.name;
  target.dtype = param.dtype;
  target.shape = plan.shapes[map.paramIndex];
  for (const MetaDim& d : param.dims) target.dimNames.push_back(d.constant >= 0 ? std::string() : d.size);
  target.address = bound->second.address;
  if (!planTensorMap(target, map.box, map.swizzleBytes, out, error)) {
    error = "kernel '" + kernel.name + "': " + error;
    return false;
  }
  return true;
}

bool launchFromMetadata(GpuRuntime& runtime, const GpuKernel& gpuKernel, const KernelMeta& kernel,
                        const std::map<std::string, int64_t>& sizes,
                        const std::map<std::string, TensorBinding>& tensors,
                        const std::map<std::string, std::vector<uint8_t>>& scalars, std::string& error) {
  LaunchPlan plan;
  KernelArgs args;
  return planLaunch(kernel, sizes, plan, error) &&
         packArguments(kernel, plan, tensors, scalars, args, error, runtime.tensorMapEncoder()) &&
         runtime.launch(gpuKernel, plan.grid, plan.block, plan.dynamicSharedBytes, args, error);
}

std::unique_ptr<MetadataLauncher> MetadataLauncher::create(GpuRuntime& runtime, const std::string& moduleImage,
                                                           const std::string& metadataJson,
                                                           const std::string& kernelName, std::string& error) {
  std::vector<KernelMeta> kernels;
  if (!parseKernelMetadata(metadataJson, kernels, error)) return nullptr;
  auto it = std::find_if(kernels.begin(), kernels.end(), [&](const KernelMeta& k) { return k.name == kernelName; });
  if (it == kernels.end()) {
    error = "the metadata has no kernel '" + kernelName + "'";
    return nullptr;
  }
  std::shared_ptr<GpuModule> module = runtime.loadModule(moduleImage, error);
  if (!module) return nullptr;
  std::unique_ptr<GpuKernel> kernel = module->kernel(kernelName, error);
  if (!kernel) return nullptr;
  return std::unique_ptr<MetadataLauncher>(new MetadataLauncher(runtime, std::move(*it), std::move(kernel)));
}

bool MetadataLauncher::launch(const std::map<std::string, int64_t>& sizes,
                              const std::map<std::string, const DeviceBuffer*>& tensors,
                              const std::map<std::string, std::vector<uint8_t>>& scalars, std::string& error) {
  std::map<std::string, TensorBinding> bindings;
  for (const auto& [name, buffer] : tensors)
    if (buffer) bindings[name] = TensorBinding{buffer->address(), buffer->bytes()};
  return launchFromMetadata(runtime_, *kernel_, meta_, sizes, bindings, scalars, error);
}

}  // namespace argus::gpu

// Launch metadata as JSON (see metadata.h for the format).
#include "driver/metadata.h"

#include "codegen/codegen.h"

#include <nlohmann/json.hpp>

#include "ir/bulk.h"
#include "ir/ir.h"

namespace argus {
namespace {

using json = nlohmann::ordered_json;

const char* launchOpName(ir::LaunchExpr::Kind k) {
  using K = ir::LaunchExpr::Kind;
  switch (k) {
    case K::Add: return "add";
    case K::Sub: return "sub";
    case K::Mul: return "mul";
    case K::FloorDiv: return "floordiv";
    case K::CeilDiv: return "cdiv";
    case K::Mod: return "mod";
    case K::Min: return "min";
    case K::Max: return "max";
    case K::Lt: return "lt";
    case K::Le: return "le";
    case K::Gt: return "gt";
    case K::Ge: return "ge";
    case K::Eq: return "eq";
    case K::Ne: return "ne";
    case K::And: return "and";
    case K::Or: return "or";
    case K::Not: return "not";
    case K::Const: case K::Size: break;
  }
  return "invalid";
}

json launchExprJson(const ir::LaunchExpr& e, const std::vector<std::string>& sizeNames) {
  if (e.kind == ir::LaunchExpr::Kind::Const) return json{{"const", e.value}};
  if (e.kind == ir::LaunchExpr::Kind::Size) {
    if (e.value >= 0 && static_cast<size_t>(e.value) < sizeNames.size())
      return json{{"size", sizeNames[static_cast<size_t>(e.value)]}};
    return json{{"op", "invalid"}, {"args", json::array()}};  // a malformed tree stays visible
  }
  json args = json::array();
  for (const ir::LaunchExpr& operand : e.operands) args.push_back(launchExprJson(operand, sizeNames));
  return json{{"op", launchOpName(e.kind)}, {"args", std::move(args)}};
}

const char* paramKindName(ir::ParamKind k) {
  switch (k) {
    case ir::ParamKind::Tensor: return "tensor";
    case ir::ParamKind::Scalar: return "scalar";
    case ir::ParamKind::Size: return "size";
  }
  return "invalid";
}

json paramJson(const ir::Param& p, const std::vector<std::string>& sizeNames) {
  json j{{"name", p.name}, {"kind", paramKindName(p.kind)}, {"dtype", ir::dtypeName(p.dtype)}};
  if (p.kind == ir::ParamKind::Tensor) {
    json dims = json::array();
    for (const ir::DimRef& d : p.dims) {
      if (d.constant >= 0) dims.push_back(json{{"const", d.constant}});
      else if (d.sizeIndex >= 0 && static_cast<size_t>(d.sizeIndex) < sizeNames.size())
        dims.push_back(json{{"size", sizeNames[static_cast<size_t>(d.sizeIndex)]}});
      else dims.push_back(json{{"size", nullptr}});
    }
    j["dims"] = std::move(dims);
  }
  // Integers and bools as JSON integers, so that 64-bit defaults below 2^53 read back exactly.
  if (p.kind == ir::ParamKind::Scalar && p.defaultValue) {
    if (ir::isFloat(p.dtype)) j["default"] = *p.defaultValue;
    else j["default"] = static_cast<long long>(*p.defaultValue);
  }
  return j;
}

long long sharedBytesIn(const ir::Function& fn, const ir::Block& block) {
  long long total = 0;
  for (const auto& op : block.ops) {
    if (op->kind == ir::OpKind::AllocShared && !op->results.empty() && op->results[0] < fn.values.size()) {
      const ir::Type& t = fn.typeOf(op->results[0]);
      total += static_cast<long long>(t.numElements()) * ((ir::dtypeBits(t.dtype) + 7) / 8);
    }
    for (const ir::Block& region : op->regions) total += sharedBytesIn(fn, region);
  }
  return total;
}

// One entry per codegen::kernelTensorMaps map, in its (the ABI's) order; a
// store's map is marked optional ("store": the runtime passes zeros where TMA
// cannot describe the tensor, and the kernel then stores without it).
json tensorMapsJson(const ir::Function& fn, const std::string& arch) {
  json maps = json::array();
  for (const ir::TensorMapUse& use : codegen::kernelTensorMaps(fn, arch)) {
    if (use.param >= fn.params.size()) continue;  // kernelTensorMaps never yields one; stay safe on bad IR
    json map{{"param", fn.params[use.param].name}, {"box", use.box}, {"swizzle_bytes", use.swizzleBytes}};
    if (use.store) map["store"] = true;
    maps.push_back(std::move(map));
  }
  return maps;
}

json kernelJson(const ir::Function& fn, const std::string& arch) {
  json params = json::array();
  for (const ir::Param& p : fn.params) params.push_back(paramJson(p, fn.sizeNames));
  json grid = json::array(), gridText = json::array();
  for (const ir::LaunchExpr& g : fn.grid) {
    grid.push_back(launchExprJson(g, fn.sizeNames));
    gridText.push_back(g.str(fn.sizeNames));
  }
  json requirements = json::array();
  for (const ir::Requirement& r : fn.requirements)
    requirements.push_back(json{{"condition", launchExprJson(r.condition, fn.sizeNames)},
                                {"condition_text", r.condition.str(fn.sizeNames)},
                                {"text", r.text}});
  json constants = json::object();
  for (const auto& [name, value] : fn.constants) constants[name] = value;
  return json{{"name", fn.name},
              {"warps", fn.numWarps},
              {"threads", fn.launchThreads()},
              {"producer_warps", fn.producerWarps},
              {"cluster", fn.clusterSize},
              {"params", std::move(params)},
              {"sizes", fn.sizeNames},
              {"grid", std::move(grid)},
              {"grid_text", std::move(gridText)},
              {"requirements", std::move(requirements)},
              {"static_shared_bytes", staticSharedBytes(fn)},
              {"dynamic_shared_bytes", codegen::dynamicSharedBytes(fn, arch)},
              {"tensor_maps", tensorMapsJson(fn, arch)},
              {"constants", std::move(constants)}};
}

}  // namespace

long long staticSharedBytes(const ir::Function& fn) { return sharedBytesIn(fn, fn.body); }

std::string kernelMetadataJson(const ir::Module& module, const std::string& arch) {
  json kernels = json::array();
  for (const auto& fn : module.functions)
    if (fn) kernels.push_back(kernelJson(*fn, arch));
  json doc{{"version", kKernelMetadataVersion}, {"kernels", std::move(kernels)}};
  // Replace invalid UTF-8 (names come from source text, which is validated, but
  // a library never throws at its user).
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string metadataPathFor(const std::string& outputPath) {
  std::string base = outputPath;
  size_t slash = base.find_last_of('/');
  size_t dot = base.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)) {
    std::string ext = base.substr(dot);
    if (ext == ".ptx" || ext == ".cubin") base.resize(dot);
  }
  return base + ".meta.json";
}

}  // namespace argus

#include "tools/run_io.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/interp/npy.h"

namespace argus::cli {
namespace {

std::string paramText(const ir::Function& fn, const ir::Param& p) {
  std::string dims;
  for (size_t d = 0; d < p.dims.size(); ++d) {
    const ir::DimRef& ref = p.dims[d];
    dims += (d ? ", " : "") + (ref.constant >= 0 ? std::to_string(ref.constant)
                                                 : fn.sizeNames[static_cast<size_t>(ref.sizeIndex)]);
  }
  return "'" + p.name + ": Tensor[" + ir::dtypeName(p.dtype) + ", (" + dims + (p.dims.size() == 1 ? ",)]'" : ")]'");
}

const ir::Param* findParam(const ir::Function& fn, const std::string& name) {
  for (const ir::Param& p : fn.params)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t d = 0; d < shape.size(); ++d) text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

bool loadInputs(const ir::Function& fn, const std::map<std::string, std::string>& files,
                std::map<std::string, int64_t>& sizes, std::map<std::string, interp::HostTensor>& out,
                std::string& error) {
  std::map<std::string, std::string> sizeOrigin;  // size name -> where its value came from
  for (const auto& [name, value] : sizes) sizeOrigin[name] = "--size " + name + "=" + std::to_string(value);
  for (const auto& [name, path] : files) {
    const ir::Param* p = findParam(fn, name);
    if (!p || p->kind != ir::ParamKind::Tensor) {
      std::string tensors;
      for (const ir::Param& q : fn.params)
        if (q.kind == ir::ParamKind::Tensor) tensors += (tensors.empty() ? "" : ", ") + q.name;
      error = "--input " + name + ": kernel '" + fn.name + "' has no tensor parameter '" + name + "'" +
              (p && p->kind == ir::ParamKind::Scalar ? " ('" + name + "' is a scalar: give it with --arg " + name + "=VALUE)"
                                                     : " (its tensors: " + tensors + ")");
      return false;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      error = "--input " + name + ": cannot read '" + path + "'";
      return false;
    }
    std::ostringstream bytes;
    bytes << in.rdbuf();
    interp::NpyArray array;
    std::string why;
    if (!interp::parseNpy(bytes.str(), array, why) || !interp::npyToTensor(array, p->dtype, out[name], why)) {
      error = "--input " + name + ": '" + path + "' " + why;
      return false;
    }
    std::string where = "--input " + name + ": '" + path + "' holds shape " + shapeText(array.shape);
    if (array.shape.size() != p->dims.size()) {
      error = where + " but " + paramText(fn, *p) + " has " + std::to_string(p->dims.size()) + " dimension" +
              (p->dims.size() == 1 ? "" : "s");
      return false;
    }
    for (size_t d = 0; d < p->dims.size(); ++d) {
      const ir::DimRef& ref = p->dims[d];
      int64_t extent = array.shape[d];
      if (ref.constant >= 0) {
        if (extent != ref.constant) {
          error = where + " but dimension " + std::to_string(d) + " of " + paramText(fn, *p) + " is the constant " +
                  std::to_string(ref.constant);
          return false;
        }
        continue;
      }
      const std::string& size = fn.sizeNames[static_cast<size_t>(ref.sizeIndex)];
      if (extent > (int64_t{1} << 31) - 1) {
        error = where + ": size " + size + " = " + std::to_string(extent) + " does not fit the kernel's i32 sizes";
        return false;
      }
      if (auto it = sizes.find(size); it != sizes.end() && it->second != extent) {
        error = where + ", so " + size + "=" + std::to_string(extent) + " (dimension " + std::to_string(d) + " of " +
                paramText(fn, *p) + "), but " + sizeOrigin[size] + " says " + size + "=" + std::to_string(it->second);
        return false;
      }
      sizes[size] = extent;
      sizeOrigin.emplace(size, "--input " + name + " ('" + path + "')");
    }
  }
  return true;
}

bool writeOutput(const std::string& dir, const std::string& name, const interp::HostTensor& t, std::string& error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string path = (std::filesystem::path(dir) / (name + ".npy")).string();
  std::ofstream out(path, std::ios::binary);
  out << interp::tensorToNpy(t);
  if (!out) {
    error = "cannot write '" + path + "'" + (ec ? " (" + ec.message() + ")" : "");
    return false;
  }
  return true;
}

}  // namespace argus::cli

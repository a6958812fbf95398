// run(): binds the arguments, derives the runtime sizes, checks requirements,
// evaluates the grid and runs every block (executor.cpp does the ops).
#include "runtime/interp/interpreter.h"

#include <limits>
#include <new>

#include "runtime/interp/executor.h"

namespace argus::interp {

namespace {

using detail::RtValue;

RunError argumentError(const ir::Param& p, std::string message) {
  RunError e;
  e.id = DiagId::RunArgumentMismatch;
  e.message = std::move(message);
  e.range = p.range;
  return e;
}

std::string shapeStr(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

struct SizeSource {
  std::string tensor;
  size_t dim = 0;
};

// Checks one tensor argument against its parameter and records runtime sizes.
std::optional<RunError> bindTensor(const ir::Function& fn, const ir::Param& p, HostTensor* t,
                                   std::vector<int64_t>& sizes, std::vector<SizeSource>& sources) {
  if (!t) return argumentError(p, "argument '" + p.name + "' must be a tensor, but it is a null pointer");
  if (t->dtype != p.dtype)
    return argumentError(p, "tensor '" + p.name + "' must hold " + ir::dtypeName(p.dtype) + ", but it holds " +
                                ir::dtypeName(t->dtype));
  if (t->shape.size() != p.dims.size())
    return argumentError(p, "tensor '" + p.name + "' must have rank " + std::to_string(p.dims.size()) +
                                ", but its shape is " + shapeStr(t->shape));
  for (size_t d = 0; d < p.dims.size(); ++d) {
    int64_t extent = t->shape[d];
    const ir::DimRef& dim = p.dims[d];
    std::string where = "tensor '" + p.name + "' dimension " + std::to_string(d);
    if (extent < 0 || extent > std::numeric_limits<int32_t>::max())
      return argumentError(p, where + " has extent " + std::to_string(extent) + ", outside 0 to 2^31-1");
    if (dim.constant >= 0) {
      if (extent != dim.constant)
        return argumentError(p, where + " must be " + std::to_string(dim.constant) + ", but it is " + std::to_string(extent));
      continue;
    }
    size_t s = static_cast<size_t>(dim.sizeIndex);
    if (s >= sizes.size()) return argumentError(p, where + " refers to an unknown size");
    if (sizes[s] < 0) {
      sizes[s] = extent;
      sources[s] = {p.name, d};
    } else if (sizes[s] != extent) {
      return argumentError(p, where + " is " + fn.sizeNames[s] + " and must be " + std::to_string(sizes[s]) +
                                  " (as tensor '" + sources[s].tensor + "' dimension " + std::to_string(sources[s].dim) +
                                  "), but it is " + std::to_string(extent));
    }
  }
  if (t->bytes.size() != t->size() * t->elementBytes())
    return argumentError(p, "tensor '" + p.name + "' has " + std::to_string(t->bytes.size()) + " bytes of data for shape " +
                                shapeStr(t->shape) + ", which needs " + std::to_string(t->size() * t->elementBytes()));
  return std::nullopt;
}

std::string sizesStr(const ir::Function& fn, const std::vector<int64_t>& sizes) {
  std::string s;
  for (size_t i = 0; i < sizes.size() && i < fn.sizeNames.size(); ++i)
    s += (i ? ", " : "") + fn.sizeNames[i] + " = " + std::to_string(sizes[i]);
  return s;
}

std::optional<RunError> runChecked(const ir::Function& fn, std::vector<ArgValue>& args, const RunOptions& opts) {
  std::vector<std::string> problems = ir::verify(fn);
  if (!problems.empty()) {
    RunError e;
    e.message = "internal error: the kernel's IR is invalid: " + problems[0];
    e.range = fn.range;
    return e;
  }
  size_t expected = 0;
  std::string names;
  for (const ir::Param& p : fn.params)
    if (p.kind != ir::ParamKind::Size) names += (expected++ ? ", " : "") + p.name;
  if (args.size() != expected) {
    RunError e;
    e.id = DiagId::RunArgumentMismatch;
    e.message = "kernel '" + fn.name + "' takes " + std::to_string(expected) + " arguments (" + names + "), but " +
                std::to_string(args.size()) + " were given";
    e.range = fn.range;
    return e;
  }

  std::vector<int64_t> sizes(fn.sizeNames.size(), -1);
  std::vector<SizeSource> sources(fn.sizeNames.size());
  std::vector<RtValue> params(fn.params.size());
  size_t next = 0;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ir::Param& p = fn.params[i];
    if (p.kind == ir::ParamKind::Size) continue;
    ArgValue& arg = args[next++];
    RtValue& v = params[i];
    if (p.kind == ir::ParamKind::Tensor) {
      HostTensor* const* t = std::get_if<HostTensor*>(&arg.value);
      if (!t) return argumentError(p, "argument '" + p.name + "' must be a tensor, but a scalar was given");
      if (auto error = bindTensor(fn, p, *t, sizes, sources)) return error;
      v.kind = ir::TypeKind::Tensor;
      v.tensor = *t;
      continue;
    }
    v.kind = ir::TypeKind::Scalar;
    if (const double* d = std::get_if<double>(&arg.value)) {
      v.scalar = num::fromDouble(p.dtype, *d);
    } else if (const int64_t* n = std::get_if<int64_t>(&arg.value)) {
      Elem e;
      e.i = *n;
      v.scalar = num::cast(ir::DType::I64, p.dtype, e);
    } else {
      return argumentError(p, "argument '" + p.name + "' must be a " + ir::dtypeName(p.dtype) + " scalar, but a tensor was given");
    }
  }
  for (size_t s = 0; s < sizes.size(); ++s)
    if (sizes[s] < 0) {
      RunError e;
      e.id = DiagId::RunArgumentMismatch;
      e.message = "no tensor gives the size '" + fn.sizeNames[s] + "'";
      e.range = fn.range;
      return e;
    }
  // Size params come in sizeNames order and carry the size's name.
  size_t sizeOrder = 0;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    if (fn.params[i].kind != ir::ParamKind::Size) continue;
    size_t index = sizeOrder++;
    for (size_t k = 0; k < fn.sizeNames.size(); ++k)
      if (fn.sizeNames[k] == fn.params[i].name) index = k;
    params[i].kind = ir::TypeKind::Scalar;
    params[i].scalar.i = index < sizes.size() ? sizes[index] : 0;
  }

  for (const ir::Requirement& r : fn.requirements) {
    int64_t holds = 0;
    std::string error;
    if (!r.condition.evaluate(sizes, holds, &error) || !holds) {
      RunError e;
      e.id = DiagId::RunRequirementFailed;
      e.message = formatMessage(diagInfo(e.id).format,
                                {r.text, sizesStr(fn, sizes), error.empty() ? std::string() : " (" + error + ")"});
      e.range = r.range;
      return e;
    }
  }

  std::array<int64_t, 3> grid{1, 1, 1};
  for (int axis = 0; axis < 3; ++axis) {
    std::string error;
    if (!fn.grid[axis].evaluate(sizes, grid[axis], &error) || grid[axis] < 0 ||
        grid[axis] > std::numeric_limits<int32_t>::max()) {
      RunError e;
      e.id = DiagId::RunArgumentMismatch;
      e.message = "grid axis " + std::to_string(axis) + " (" + fn.grid[axis].str(fn.sizeNames) + ") is " +
                  (error.empty() ? std::to_string(grid[axis]) : error) + " for " + sizesStr(fn, sizes);
      e.range = fn.range;
      return e;
    }
  }

  detail::LayoutCache layouts(fn.numWarps);
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        detail::BlockContext ctx;
        ctx.blockId = {x, y, z};
        ctx.grid = grid;
        ctx.linearBlock = x + grid[0] * (y + grid[1] * z);
        detail::BlockExecutor block(fn, opts, layouts, ctx);
        try {
          block.run(params);
        } catch (detail::Fault& fault) {
          RunError e = std::move(fault.error);
          e.message = "block (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + "): " + e.message;
          return e;
        }
      }
  return std::nullopt;
}

}  // namespace

std::optional<RunError> run(const ir::Function& fn, std::vector<ArgValue>& args, const RunOptions& opts) {
  try {
    return runChecked(fn, args, opts);
  } catch (const std::bad_alloc&) {
    RunError e;
    e.message = "the interpreter ran out of memory running kernel '" + fn.name + "'";
    e.range = fn.range;
    return e;
  } catch (...) {
    RunError e;
    e.message = "internal error in the interpreter running kernel '" + fn.name + "'";
    e.range = fn.range;
    return e;
  }
}

Diagnostic toDiagnostic(const RunError& error) {
  Diagnostic d;
  d.id = error.id;
  d.severity = diagInfo(error.id).severity;
  d.range = error.range;
  d.message = error.message;
  d.labels = error.labels;
  if (error.block || error.thread) {
    Counterexample c;
    c.block = error.block;
    c.thread = error.thread;
    if (error.thread) {
      c.warp = *error.thread / 32;
      c.lane = *error.thread % 32;
    }
    if (error.otherThread)
      c.facts.push_back({"other thread", std::to_string(*error.otherThread) + " (warp " + std::to_string(*error.otherThread / 32) +
                                             ", lane " + std::to_string(*error.otherThread % 32) + ")"});
    d.counterexample = std::move(c);
  }
  return d;
}

}  // namespace argus::interp

// set_params: new defaults for `NAME: const = V` parameters (tile sizes, warp
// grids, stages); set_stages: the depth of the pipelined() loop.
#include "agent/rewrite_internal.h"

namespace argus::agent::detail {

namespace {

// Edits the defaults in `values`; `description` lists what changed.
RewriteResult changeDefaults(const std::string& source, const ParsedKernel& p,
                             const std::vector<std::pair<std::string, int64_t>>& values) {
  std::vector<Edit> edits;
  std::string description, unchanged;
  const std::map<std::string, int64_t> current = constIntDefaults(*p.kernel);
  for (const auto& [name, value] : values) {
    const ast::Param* param = constParam(*p.kernel, name);
    if (!param) {
      std::string known;
      for (const ast::Param& q : p.kernel->params)
        if (constParam(*p.kernel, q.name)) known += (known.empty() ? "" : ", ") + q.name;
      return notApplied("kernel '" + p.kernel->name + "' has no const parameter '" + name + "'" +
                        (known.empty() ? "" : " (it has " + known + ")"));
    }
    std::string newText = std::to_string(value);
    if (param->defaultValue) {
      auto it = current.find(name);
      if (it != current.end() && it->second == value) {
        unchanged += (unchanged.empty() ? "" : ", ") + name + " is already " + newText;
        continue;
      }
      std::string old = p.slice(*param->defaultValue);
      edits.push_back({param->defaultValue->range.begin, param->defaultValue->range.end, newText});
      description += (description.empty() ? "" : ", ") + name + " " + old + " -> " + newText;
    } else {
      edits.push_back({param->range.end, param->range.end, " = " + newText});
      description += (description.empty() ? "" : ", ") + name + " = " + newText;
    }
  }
  if (edits.empty()) return notApplied(unchanged.empty() ? "no parameters given" : unchanged);
  return finishRewrite(source, std::move(edits), description);
}

}  // namespace

RewriteResult setParams(const std::string& source, const nlohmann::json& args) {
  if (!args.is_object() || args.empty())
    return notApplied("set_params takes an object of NAME: integer, e.g. {\"BM\": 128}");
  std::vector<std::pair<std::string, int64_t>> values;
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (!it.value().is_number_integer())
      return notApplied("set_params: the value of '" + it.key() + "' must be an integer, not " + it.value().dump());
    values.emplace_back(it.key(), it.value().get<int64_t>());
  }
  std::string why;
  std::optional<ParsedKernel> p = parseKernel(source, why);
  if (!p) return notApplied(why);
  return changeDefaults(source, *p, values);
}

RewriteResult setStages(const std::string& source, const nlohmann::json& args) {
  nlohmann::json stages = args;
  if (args.is_object()) stages = args.contains("stages") ? args["stages"] : args.value("STAGES", nlohmann::json());
  if (!stages.is_number_integer()) return notApplied("set_stages takes {\"stages\": S} with S an integer from 2 to 8");
  int64_t s = stages.get<int64_t>();
  if (s < 2 || s > 8) return notApplied("a pipeline has 2 to 8 stages, not " + std::to_string(s));
  std::string why;
  std::optional<ParsedKernel> p = parseKernel(source, why);
  if (!p) return notApplied(why);
  std::vector<const ast::ForStmt*> loops;
  collectLoops(p->kernel->body, loops);
  for (const ast::ForStmt* loop : loops) {
    const ast::CallExpr* pipelined = asCall(loop->iter.get(), "pipelined");
    if (!pipelined) continue;
    const ast::Argument* arg = keywordArg(*pipelined, "stages");
    if (!arg) arg = positionalArg(*pipelined, 1);
    if (!arg) return notApplied("the pipelined() loop has no stages argument");
    if (const ast::NameExpr* name = asName(arg->value.get()); name && constParam(*p->kernel, name->name))
      return changeDefaults(source, *p, {{name->name, s}});
    if (arg->value->kind == ast::ExprKind::Int) {
      std::string old = p->slice(*arg->value);
      if (old == std::to_string(s)) return notApplied("the pipeline already has " + old + " stages");
      return finishRewrite(source, {{arg->value->range.begin, arg->value->range.end, std::to_string(s)}},
                           "stages " + old + " -> " + std::to_string(s));
    }
    return notApplied("the stages of the pipelined() loop are '" + p->slice(*arg->value) +
                      "', neither a number nor a const parameter");
  }
  return notApplied("the kernel has no pipelined() loop; apply async_pipeline first");
}

}  // namespace argus::agent::detail

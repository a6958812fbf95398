// rasterize_grid: grouped block order for L2 reuse (Triton's "grouped
// ordering"). A 2-D grid (G0, G1) becomes the 1-D grid (G0 * G1,), and the
// block's tile coordinates are computed so that GROUP_M consecutive blocks
// walk down a column of GROUP_M row tiles, sharing their B tiles in L2:
//
//     pid = program_id(0)
//     group = GROUP_M * G1
//     first_m = pid // group * GROUP_M
//     rows = minimum(G0 - first_m, GROUP_M)
//     pm = first_m + pid % group % rows
//     pn = pid % group // rows
//
// Every program_id(0) of the body becomes pm and every program_id(1) pn. The
// map from pid to (pm, pn) is a bijection onto [0, G0) x [0, G1), so each
// output tile is still computed by exactly one block.
#include "agent/rewrite_internal.h"

namespace argus::agent::detail {

RewriteResult rasterizeGrid(const std::string& source, const nlohmann::json& args) {
  int64_t groupM = 8;
  if (args.is_object() && args.contains("GROUP_M")) groupM = args["GROUP_M"].get<int64_t>();
  if (groupM < 1) return notApplied("GROUP_M must be at least 1");
  std::string why;
  std::optional<ParsedKernel> p = parseKernel(source, why);
  if (!p) return notApplied(why);
  const ast::Decorator* deco = kernelDecorator(*p->kernel);
  const ast::Argument* grid = nullptr;
  if (deco->args)
    for (const ast::Argument& a : *deco->args)
      if (a.keyword && *a.keyword == "grid" && a.value) grid = &a;
  if (!grid || grid->value->kind != ast::ExprKind::Tuple)
    return notApplied("the @kernel decorator has no grid=(...) tuple");
  const auto& axes = static_cast<const ast::TupleExpr&>(*grid->value).elements;
  if (axes.size() != 2)
    return notApplied("rasterization reorders a 2-D grid of (row tiles, column tiles), but the grid has " +
                      std::to_string(axes.size()) + (axes.size() == 1 ? " axis" : " axes"));
  if (hasName(*p->kernel, "GROUP_M")) return notApplied("the kernel already uses the name GROUP_M");

  std::vector<const ast::CallExpr*> calls;
  collectCalls(p->kernel->body, calls);
  std::vector<const ast::CallExpr*> pids[2];
  for (const ast::CallExpr* call : calls) {
    std::string name = calleeName(*call);
    if (name == "num_programs") return notApplied("the kernel reads num_programs(), which the 1-D grid would change");
    if (name != "program_id") continue;
    const ast::Argument* axis = positionalArg(*call, 0);
    std::optional<int64_t> v = axis ? evalInt(*axis->value, {}) : std::nullopt;
    if (!v || *v < 0 || *v > 1) return notApplied("program_id(" + (axis ? p->slice(*axis->value) : "") + ") is not axis 0 or 1");
    pids[*v].push_back(call);
  }
  if (pids[0].empty() || pids[1].empty())
    return notApplied("the kernel does not use both program_id(0) and program_id(1) as tile coordinates");

  const ast::FunctionDef& fn = *p->kernel;
  const std::string pid = freshName(fn, "pid"), group = freshName(fn, "group"), first = freshName(fn, "first_m"),
                    rows = freshName(fn, "rows"), pm = freshName(fn, "pm"), pn = freshName(fn, "pn");
  const std::string g0 = p->slice(*axes[0]), g1 = p->slice(*axes[1]);
  std::vector<Edit> edits;
  edits.push_back({grid->value->range.begin, grid->value->range.end, "(" + g0 + " * " + g1 + ",)"});
  // The coordinates, after the shared() declarations that open the body.
  const ast::Block& body = fn.body;
  size_t at = 0;
  while (at < body.size() && body[at]->kind == ast::StmtKind::Assign &&
         asCall(static_cast<const ast::AssignStmt&>(*body[at]).value.get(), "shared"))
    ++at;
  if (at == body.size()) return notApplied("the kernel body has nothing after its shared buffers");
  const std::string ind = indentAt(*p->text, body[at]->range.begin);
  uint32_t insertAt = lineStartOf(*p->text, body[at]->range.begin);
  std::string block;
  block += ind + pid + " = program_id(0)\n";
  block += ind + group + " = GROUP_M * " + g1 + "\n";
  block += ind + first + " = " + pid + " // " + group + " * GROUP_M\n";
  block += ind + rows + " = minimum(" + g0 + " - " + first + ", GROUP_M)\n";
  block += ind + pm + " = " + first + " + " + pid + " % " + group + " % " + rows + "\n";
  block += ind + pn + " = " + pid + " % " + group + " // " + rows + "\n";
  for (int axis = 0; axis < 2; ++axis)
    for (const ast::CallExpr* call : pids[axis])
      if (call->range.begin < insertAt) return notApplied("a shared buffer declaration reads program_id()");
  edits.push_back({insertAt, insertAt, block});
  for (int axis = 0; axis < 2; ++axis)
    for (const ast::CallExpr* call : pids[axis]) edits.push_back({call->range.begin, call->range.end, axis ? pn : pm});
  edits.push_back(addConstParams(*p, {{"GROUP_M", groupM}}));
  return finishRewrite(source, std::move(edits),
                       "grouped block order: 1-D grid, GROUP_M = " + std::to_string(groupM) + " row tiles per group");
}

}  // namespace argus::agent::detail

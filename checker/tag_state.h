// Tag flow (internal to the checker): what tags each register tile and each
// shared slot carries at a program point, as Z3 terms over the element's
// coordinates, the loop iterations and the launch (docs/checker.md, "Tags").
//
// A tile's tags are terms over its coordinate variables c0, c1, ...; a shared
// buffer's over its slot variables p0, p1, ... Each tag is a pair (value,
// known): `known` false means the checker cannot describe it there (a merge of
// disagreeing tags, a reduction, a loop it could not summarize), and an
// assertion that reads it is "cannot prove", never "holds".
#pragma once

#include <z3++.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "checker/checker.h"
#include "checker/solver_budget.h"
#include "ir/ir.h"

namespace argus::checker {

// Per element: `present` says whether the element carries the tag at all (a
// slot stored without it, an accumulator before its first update); where it
// does, `known` says whether `value` describes it.
struct TagTerm {
  z3::expr value;    // bv32
  z3::expr known;    // bool
  z3::expr present;  // bool
  std::vector<Label> why;  // where it may have become unknown (a few)
};

// Which tensor axis one component of `origin` indexes: origin[d] is a
// coordinate along axis `axis` of tensor parameter `tensor`.
struct OriginAxis {
  int tensor = -1;
  int64_t axis = -1;
  bool operator==(const OriginAxis&) const = default;
};

struct TagMap {
  std::map<std::string, TagTerm> tags;  // "origin[0]", "origin[1]", ..., user tag names
  int originTensor = -1;                // parameter index of the tensor `origin` refers to; -1: none or mixed
  // Per component of `origin`, the tensor axis it indexes: a load's are the
  // axes of one tensor, a dot result's the rows of A and the columns of B.
  // Empty: none, or different on different paths.
  std::vector<OriginAxis> originAxes;
  std::vector<Label> trace;             // where the data was loaded and stored (a few)
};

std::string originKey(int64_t dim);
// The tag every write into a shared slot sets (present: the slot was written
// at least once); stripped from what a load returns. Not a name a user can write.
inline const char* const kWrittenKey = "written!";
// The origin sources of a merge of two tag maps (either may carry no tags).
void mergeOrigins(TagMap& out, const TagMap& a, const TagMap& b);
// Simultaneous substitution of variables by terms.
z3::expr substitute(const z3::expr& e, const std::vector<z3::expr>& from, const std::vector<z3::expr>& to);
// Applies `f` to the value, known and present terms of every tag of `map`.
void mapTerms(TagMap& map, const std::function<z3::expr(const z3::expr&)>& f);
// Appends the labels not already there, up to `cap` in all.
void addLabels(std::vector<Label>& into, const std::vector<Label>& from, size_t cap);
// Of an op that writes the view it takes as operand 0 (ir::writesOperand(kind, 0)): that view
// (a store's view, a copy's destination) and what it writes there (a store's tile, a copy's
// source). kNoValue for any other op: every op ir/ops.def declares such a write of is listed.
ir::ValueId writtenView(const ir::Op& op);
ir::ValueId writtenSource(const ir::Op& op);

// Per tag of two maps (either may lack it), combined by `f`; the owner
// ("c<i>" or "b<id>") prefixes the component key passed to `f`.
using Combine = std::function<TagTerm(const std::string& component, const TagTerm* a, const TagTerm* b)>;
TagMap combineMaps(const std::string& owner, const TagMap& a, const TagMap& b, const Combine& f);

// One For op being walked: its iteration variable j and induction value.
struct LoopFrame {
  const ir::Op* op = nullptr;
  z3::expr j, iv, valid, tripCount;  // valid: 0 <= j and lb + step * j < ub
  std::string name;                  // the loop variable as written
};

class TagFlow {
 public:
  // Called on each Assert op, each Store into a global tensor and each Dot of
  // the final walk, with the state before it.
  using AssertHook = std::function<void(const ir::Op&)>;

  TagFlow(z3::context& ctx, const ir::Function& fn, const Options& options, const SourceFile* file)
      : ctx_(ctx), fn_(fn), options_(options), file_(file) {}

  void run(const AssertHook& hook);

  // State at the current program point (valid inside the hook).
  const TagMap* tilesTags(ir::ValueId id) const;
  // The tags of a dot's result: origin[0] the rows of A, origin[1] the columns of B.
  TagMap dotTags(const ir::Op& op);
  const TagMap* bufferTags(ir::ValueId buffer) const;
  const std::vector<LoopFrame>& loops() const { return loopStack_; }
  // Launch and loop constraints every query assumes.
  z3::expr assumptions() const;
  z3::expr launchAssumptions() const;  // the launch's alone, no loop
  z3::expr scalar(ir::ValueId id);
  z3::expr scalarTerm(ir::ValueId id);  // scalar() once its inputs are known
  std::vector<ir::ValueId> scalarInputs(ir::ValueId id) const;
  z3::expr bv(int64_t v) { return ctx_.bv_val(v, 32); }
  z3::expr coordVar(size_t d) { return ctx_.bv_const(("c" + std::to_string(d)).c_str(), 32); }
  z3::expr slotVar(size_t d) { return ctx_.bv_const(("p" + std::to_string(d)).c_str(), 32); }
  // The tags of a shared view's element c (terms over the coordinate variables).
  TagMap viewTags(ir::ValueId view);
  // Track only these origins (tensor parameter index -> axes) and leave every
  // dot's result untagged: enough for the built-in K check, and cheaper.
  // With `dotResults`, dots still tag their results (rows of A, columns of
  // B), for the built-in "a stored dot result lands at its origin".
  void trackOnly(std::map<int, std::set<int64_t>> origins, bool dotResults = false) {
    onlyOrigins_ = std::move(origins);
    kOnly_ = !dotResults;
    filterOrigins_ = true;
    exactDots_ = dotResults;
    dotResultsAtFirstK_ = dotResults;
  }
  // The launch parameters the encoding introduced (for counterexamples).
  const std::vector<std::pair<std::string, z3::expr>>& launchTerms() const { return launch_; }
  // Whether a launch term (launchTerms()) is a runtime size rather than a program id or a
  // grid extent: the terms a witness's size bounds apply to.
  static bool isRuntimeSize(const std::string& launchName) {
    return launchName.rfind("num_programs", 0) != 0 && launchName.rfind("program_id", 0) != 0;
  }
  std::string position(SourceRange range) const;
  z3::context& context() { return ctx_; }
  // The launch values of a model ("N = 64, program_id(0) = 1"), and a narrowing
  // of a satisfiable solver to early iterations of a small launch.
  std::string launchText(const std::optional<z3::model>& model) const;
  z3::check_result preferSmall(z3::solver& solver);
  // The launch (sizes, program ids, iterations) of a model of solver's assertions and `bound`, from a fresh solver.
  std::optional<z3::expr> launchInFreshSolver(z3::solver& solver, const z3::expr& bound);
  std::string valueName(ir::ValueId id) const;  // as written, for messages
  bool check(const z3::expr& formula);          // true when unsat (proven)
  // The resource limits of every query of this walk and its checks (solver_budget.h).
  SolverBudget& budget() { return budget_; }

 private:
  void declareLaunch();
  void walk(const ir::Block& block);
  void step(const ir::Op& op);
  void walkFor(const ir::Op& op);
  void walkIf(const ir::Op& op);
  void store(ir::ValueId view, const TagMap& tile, const ir::Op& op);
  TagMap loadTags(ir::ValueId view, const ir::Op& op);
  bool readsShared(ir::ValueId view) const;
  TagMap elementwise(const ir::Op& op);
  TagMap reduceTags(const TagMap& in, int64_t axis, const ir::Op& op);
  bool independent(const z3::expr& term, const z3::expr& k, int64_t extent, const std::vector<z3::expr>& bounds);
  z3::expr opaque(ir::ValueId id);
  std::optional<z3::expr> truth(ir::ValueId id);

  struct State {
    std::vector<TagMap> carried;
    std::map<ir::ValueId, TagMap> buffers;
  };
  // Whether some tag of `yield` depends on the iteration index `j` where `head`'s does not.
  static bool dependsOnIteration(const State& head, const State& yield, const z3::expr& j);
  // The components (carried tile "c<i>" or buffer "b<id>", with a tag) of a loop's state.
  struct Component {
    std::string key;
    TagMap* map;
    const std::vector<z3::expr>* bounds;  // of its coordinate variables
  };
  State loopHead(const State& entry, const State& yield, const LoopFrame& loop, const std::set<std::string>& giveUp,
                 const ir::Op& op);
  // The ring guess (tag_rings.cpp): the last S iterations unrolled over
  // "unknown"; nullopt when the induction query refutes it.
  static constexpr int64_t kMaxRingDepth = 16;
  int ringDepth(const ir::Op& loopOp) const;
  std::optional<State> ringGuess(const State& entry, const State& firstYield, const LoopFrame& loop, const ir::Op& op);
  State ringBottom(const State& entry, const State& firstYield, const LoopFrame& loop, const ir::Op& op);
  State headFrom(const State& entry, const State& yield, const LoopFrame& loop);
  State loopExit(const State& entry, const State& last, const LoopFrame& loop, const ir::Op& op);
  // The failing claims; with `which` false, only whether some claim fails ({"*"}).
  std::set<std::string> failingClaims(const State& head, const State& yield, const LoopFrame& loop, const ir::Op& op,
                                      bool which);
  State walkBody(const ir::Op& op, const State& head, const LoopFrame& loop, bool record);
  // Component by component (carried tile i, each buffer `other` has), the
  // entry's tags and another state's (a yield, the last iteration) through `f`.
  static State combineStates(const State& entry, const State& other, const Combine& f);
  std::vector<z3::expr> boundsOf(const ir::Type& type, bool slots);

  z3::context& ctx_;
  const ir::Function& fn_;
  const Options& options_;
  const SourceFile* file_;
  SolverBudget budget_{options_};
  AssertHook hook_;
  bool recording_ = true;
  bool kOnly_ = false;          // dots leave their results untagged
  bool filterOrigins_ = false;  // loads tag only the axes of onlyOrigins_
  // A dot result's origin is its operands' at k = 0, unchecked along K: only
  // the built-in AG2019 reads it, and a violation there at k = 0 is a
  // violation whatever the other k do (an assertion would need more).
  bool dotResultsAtFirstK_ = false;
  std::map<int, std::set<int64_t>> onlyOrigins_;
  bool exactDots_ = true;  // false: a dot's result tags are unknown, no query (the ring guess's early rounds)
  std::unordered_map<ir::ValueId, TagMap> tiles_;
  std::map<ir::ValueId, TagMap> buffers_;
  std::vector<LoopFrame> loopStack_;
  void prepass(const ir::Block& block, std::vector<const ir::Op*>& enclosing);
  std::unordered_map<ir::ValueId, std::vector<const ir::Op*>> valueLoops_;  // loops enclosing a definition
  std::unordered_map<const ir::Op*, z3::expr> loopJ_;
  std::unordered_map<ir::ValueId, z3::expr> scalars_;
  std::unordered_map<const ir::Op*, size_t> loopIndex_;
  std::vector<z3::expr> launchConstraints_;
  std::unordered_map<unsigned, std::pair<z3::expr, bool>> proven_;  // formula id -> unsat (the expr keeps the id alive)
  std::vector<std::pair<std::string, z3::expr>> launch_;
};



// Where an index of a dot operand comes from: the tensor axis it runs along,
// and the component of the operand's origin that holds it (a tile of a
// tensor: the axis itself; an earlier dot's result in registers: 0 for its
// rows, 1 for its columns, with the tensor axis those came from).
struct OperandAxis {
  int tensor = -1;
  int64_t axis = -1;
  int64_t key = -1;
  bool fromDot = false;
};
// The K index of both operands of a dot.
struct DotK {
  OperandAxis a, b;
};
// The built-in "the operands of a dot agree in K" (AG2035, tag_dot.cpp): the
// K axes of a dot it concerns (each operand traced to loads of a tensor, or to
// an earlier dot whose operands are, with K extents of the same size), and the
// check in the state of the walk.
std::optional<DotK> dotK(const ir::Function& fn, const ir::Op& op);
// The tags of a dot operand: a register tile's, or a shared view's.
TagMap dotOperandTags(TagFlow& flow, const ir::Function& fn, ir::ValueId operand);
// Names in `cx` the lowest thread holding `coordinate` of a tile of `layout`, and its value index.
void nameLowestThreadHolding(Counterexample& cx, const ir::Function& fn, const ir::Layout& layout,
                             const std::vector<int64_t>& coordinate);
// The tensor parameter whose loads `value` comes from, through shared memory,
// copies and casts; -1 when it is not that simple.
int traceOrigin(const ir::Function& fn, ir::ValueId value, int depth);
// Every known origin component of `tags` at tile coordinate `to` lies inside its tensor.
z3::expr insideTensor(TagFlow& flow, const ir::Function& fn, const TagMap& tags, const ir::Param& tensor,
                      const std::vector<z3::expr>& coords, const std::vector<z3::expr>& to);
// The built-in "the operands of a dot come from one batch" (AG2044, tag_batch.cpp).
void checkDotOperandsShareBatch(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const ir::Op& op);
// The one dot whose result `value` is through elementwise ops, casts, selects
// and ifs (not through a broadcast or a reduction); null for none or several.
const ir::Op* producingDot(const ir::Function& fn, ir::ValueId value);
// The built-in "a dot adds its products to the accumulator elements they
// belong to" (AG2043, tag_accumulate.cpp), at a Dot of the final walk.
void checkDotAccumulatorAgrees(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const ir::Op& op);
// The built-in "a dot result's epilogue pairs each element with the tensor
// elements it belongs with" (AG2046, tag_epilogue.cpp), at an element-wise op of
// the final walk; the origins it needs (every axis of each tensor an epilogue
// combines with a product) and whether a kernel has such an op.
void checkEpilogueOperandsAgree(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const ir::Op& op);
void addEpilogueOrigins(const ir::Function& fn, const ir::Block& block, std::map<int, std::set<int64_t>>& origins);
bool hasEpilogue(const ir::Function& fn, const ir::Block& block);
// Narrows a satisfiable solver to the first rows m and columns n that keep it
// satisfiable (thread 0 holds element (0, 0)); false when it no longer is.
bool narrowToFirstElements(TagFlow& flow, z3::solver& solver, const z3::expr& m, const z3::expr& n);
// A violation at element (m, n) of a tile of `shape`: a model of `violated` under the walk's
// assumptions, narrowed to the first elements. Nothing when the query proves there is none;
// when the solver gives up, the warning "cannot prove `property`" at `op`, and nothing.
std::optional<z3::model> elementViolation(TagFlow& flow, DiagnosticSink& diags, const ir::Op& op,
                                          const std::string& property, const z3::expr& m, const z3::expr& n,
                                          const std::vector<int64_t>& shape, const z3::expr& violated);
// The loop iterations of a model, into the counterexample and as text ("kt = 1, j = 0").
std::string iterationsOf(TagFlow& flow, const z3::model& model, Counterexample& cx);
// An element of a named tile as `name[m, n]`, of an unnamed one as "element (m, n) of the <what>".
std::string tileElementText(const std::string& name, int64_t m, int64_t n, const std::string& what);
// "row 5" / "column 5" along a tensor's last two axes, else "index 5 along axis d".
std::string axisText(const ir::Param& tensor, int64_t axis, int64_t value);
// Whether a dot the check concerns reads another dot's result (P @ V).
bool readsDotResult(const ir::Function& fn, const ir::Block& block);
// The K axes of every tensor some checked dot reads (TagFlow::trackOnly).
std::map<int, std::set<int64_t>> kOrigins(const ir::Function& fn, const ir::Block& block);
// Whether some store may write a dot's result into a tensor whose axes are as
// long as A's rows and B's columns (the built-in AG2019 concerns it).
bool storesDotResult(const ir::Function& fn, const ir::Block& block);
void checkDotOperandsAgreeInK(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const Options& options,
                              const ir::Op& op);
// The built-in "an accumulated dot sums the whole K axis" (AG2039), at a Dot of the final walk.
void checkDotCoversK(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const ir::Op& op);

// A model's value of a bit-vector term, as a signed 32-bit integer.
int64_t modelValue(const z3::model& model, const z3::expr& e);
// Kernels worth a tag-flow walk: with an assertion, or a store into a tensor of
// a tile that may come from a load of a tensor with the same extents.
// With `countDots` false, only assertions and stores count: a kernel that
// needs the walk only for the dots' K check tracks the K origins alone.
bool tagFlowNeeded(const ir::Function& fn, const ir::Block& block, bool countDots = true);
// The built-in "a read of shared memory reads written elements" (AG2041,
// tag_written.cpp) for the load or dot `op` reading the shared view `view`.
void checkSharedReadWritten(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const ir::Op& op,
                            ir::ValueId view);
// The built-in "a stored element lands where its origin says" (AG2018) for one
// Store into global memory, in the state of the walk.
void checkStoreLandsAtOrigin(TagFlow& flow, const ir::Function& fn, DiagnosticSink& diags, const Options& options,
                             const ir::Op& op);

}  // namespace argus::checker

// Internals of semantic analysis, shared by frontend/sema*.cpp only.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frontend/sema.h"
#include "ir/ops.h"

namespace argus::sema::detail {

// A compile-time constant. Weak constants (literals, const parameters and
// expressions over them) take the dtype of the operand they meet.
struct Constant {
  enum class Kind : uint8_t { Int, Float, Bool };
  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0.0;
  ir::DType dtype = ir::DType::I32;
  bool weak = true;

  static Constant ofInt(int64_t v);  // i32 when it fits, else i64
  static Constant ofFloat(double v);
  static Constant ofBool(bool v);
  double asDouble() const { return kind == Kind::Float ? f : static_cast<double>(i); }
  std::string str() const;  // as the user would write it: 64, 2.5, True, inf
};

// What an expression evaluates to during analysis.
struct Val {
  enum class Kind : uint8_t {
    Error,    // already reported; silences follow-up errors
    Value,    // an IR value: scalar, tile, tensor, shared buffer or view
    Const,    // compile-time constant (materialized on use)
    DType,    // a dtype name such as f32
    Tuple,    // (a, b, ...)
    String,
    None,
    Tiling,   // x.tile(shape): subscript it to get a view
    Device,   // a @device function
    Kernel,   // a @kernel (not callable)
    Builtin,  // a builtin function
  };
  Kind kind = Kind::Error;
  ir::ValueId id = ir::kNoValue;  // Value
  Constant c;                     // Const
  ir::DType dtype = ir::DType::F32;  // DType
  std::vector<Val> elems;         // Tuple; Tiling: elems[0] is the base
  std::vector<int64_t> shape;     // Tiling: the tile shape
  std::string text;               // String; name of Device/Kernel/Builtin
  const ast::FunctionDef* def = nullptr;  // Device
  int builtin = -1;               // Builtin

  static Val error() { return {}; }
  static Val value(ir::ValueId v) { Val x; x.kind = Kind::Value; x.id = v; return x; }
  static Val constant(Constant c) { Val x; x.kind = Kind::Const; x.c = c; return x; }
  static Val none() { Val x; x.kind = Kind::None; return x; }
  bool isError() const { return kind == Kind::Error; }
};

// An evaluated operand with the source it came from (for messages and fix-its).
struct Operand {
  Val val;
  SourceRange range;
};

// A name bound in a function's scope.
struct Binding {
  // Unmergeable: assigned different views (or other non-values) in the branches of a runtime if.
  enum class State : uint8_t { Defined, OnlyInLoop, OnlyInBranch, Unmergeable };
  Val val;
  Symbol::Kind kind = Symbol::Kind::Local;
  State state = State::Defined;
  int symbol = -1;       // index into Result::symbols
  uint32_t version = 0;  // changes on every (re)binding
  uint32_t line = 0;     // OnlyInLoop / OnlyInBranch: line of the loop or if
};

// One function activation: a kernel, or one inlined call of a device function.
struct Frame {
  const ast::FunctionDef* def = nullptr;
  bool isKernel = false;
  std::unordered_map<std::string, Binding> env;
  std::optional<Val> returnValue;
  SourceRange callRange;  // device functions: the call being inlined
};

// One enumerator per row of frontend/builtins.def, in its order.
enum class Builtin : int {
#define ARGUS_BUILTIN(Id, ...) Id,
#include "frontend/builtins.def"
  Count_
};
// A builtin as sema binds its arguments (from its row of builtins.def).
struct BuiltinInfo {
  Builtin id;
  const char* name;
  std::vector<std::string> params;  // names, defaults stripped
  size_t required;
  std::string signature;  // for hover: "load(view, other=0) -> tile"
};
const std::vector<BuiltinInfo>& builtinTable();
const BuiltinInfo* findBuiltin(std::string_view name);

// Names of tile shapes for messages: (64, 64) and (64,).
std::string shapeText(const std::vector<int64_t>& shape);
size_t editDistance(std::string_view a, std::string_view b);
bool isPowerOfTwo(int64_t x);
// 'text' (built by appending: GCC 12 warns falsely on "'" + std::string).
inline std::string quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '\'';
  out += s;
  out += '\'';
  return out;
}

class Analyzer {
 public:
  Analyzer(const ast::Module& module, const SourceFile& file, const Options& options,
           DiagnosticSink& diags, Result& result);
  void run();

  // ---- diagnostics (sema.cpp)
  // Reports unless the same diagnostic was already reported (inlined device
  // functions are analysed once per call). Returns null for a duplicate.
  Diagnostic* report(DiagId id, SourceRange range, std::vector<std::string> args = {});
  void addFixIt(Diagnostic* d, SourceRange range, std::string replacement, std::string message);
  std::string text(SourceRange r) const { return std::string(file_.slice(r)); }
  uint32_t lineOf(SourceRange r) const { return file_.lineCol(r.begin).line; }

 private:
  friend struct AnalyzerAccess;
  // ---- module and kernels (sema.cpp)
  void collectFunctions();
  void parseDefines();
  void analyzeKernel(const ast::FunctionDef& def);
  void analyzeUncalledDevice(const ast::FunctionDef& def);
  bool setupKernelParams(const ast::FunctionDef& def);
  bool checkDecorators(const ast::FunctionDef& def, bool& isKernel, const ast::Decorator*& kernelDecorator);
  std::optional<Constant> constParamValue(const ast::Param& p);
  std::optional<double> scalarDefault(const ast::Param& p, ir::DType dtype);
  bool parseTensorAnnotation(const ast::Expr& annotation, ir::DType& dtype,
                             std::vector<const ast::Expr*>& dims);

  // ---- names, scopes, symbols (sema_names.cpp)
  Val lookup(const ast::NameExpr& name);
  Binding* findBinding(const std::string& name);
  void bind(const std::string& name, Val val, SourceRange range, Symbol::Kind kind);
  void bindLocal(const ast::NameExpr& target, Val val);
  std::string suggestion(std::string_view name, const std::vector<std::string>& candidates) const;
  std::vector<std::string> namesInScope(bool callee) const;
  void reportUnknownName(const std::string& name, SourceRange range, const std::vector<std::string>& extra = {},
                         bool callee = false);
  int defineSymbol(Symbol::Kind kind, const std::string& name, SourceRange def, std::string description);
  void addReference(int symbol, SourceRange range);
  int builtinSymbol(const std::string& name, const std::string& description);
  static void collectAssigned(const ast::Block& block, std::vector<std::string>& out);
  static void collectTargets(const ast::Expr& target, std::vector<std::string>& out);

  // ---- types, constants and descriptions (sema_types.cpp)
  std::string describe(const Val& v) const;
  std::string symbolDescription(const Val& v) const;  // describe() without the article, for hover
  std::string describeType(const ir::Type& t, ir::ValueId id = ir::kNoValue) const;
  std::string dtypeOfText(const Val& v) const;
  const ir::Type* typeOf(const Val& v) const;
  bool isValueLike(const Val& v) const;  // scalar, tile or constant
  std::optional<ir::DType> dtypeOf(const Val& v) const;
  bool canAdapt(const Constant& c, ir::DType to) const;
  std::optional<Constant> convertConstant(const Constant& c, ir::DType to) const;
  std::optional<ir::DType> annotationDType(const ast::Expr& e, bool report);
  std::optional<std::vector<int64_t>> evalShape(const ast::Expr& e, bool registerTile, const char* what);
  bool checkTileExtent(int64_t extent, SourceRange range, bool registerTile, const char* what);
  std::optional<int64_t> constIntArg(const ast::Expr& e, const char* fn, const char* param);
  std::optional<Constant> foldBinary(ast::BinaryOp op, const Constant& a, const Constant& b,
                                     ir::DType dtype, bool weak, SourceRange range);
  Constant wrapConstant(Constant c) const;

  // ---- runtime values, broadcasting (sema_values.cpp)
  ir::ValueId materialize(const Val& v, std::optional<ir::DType> dtype, SourceRange range);
  std::optional<ir::DType> unifyDTypes(std::vector<Operand*>& ops, const std::string& opName);
  bool broadcast(std::vector<ir::ValueId>& values, const std::string& opName, SourceRange range,
                 const ir::Layout* target = nullptr);
  ir::ValueId toLayout(ir::ValueId v, const ir::Layout& target, SourceRange range);
  ir::ValueId convertLayout(ir::ValueId v, const ir::Layout& target, SourceRange range);
  ir::ValueId rematerialize(ir::ValueId v, const ir::Layout& target, int depth = 0);
  ir::ValueId coerceTo(ir::ValueId v, const ir::Type& want, SourceRange range);
  std::optional<std::vector<ir::ValueId>> elementwiseOperands(std::vector<Operand*> ops, const std::string& opName,
                                                               SourceRange range, ir::DType& dtype);
  Val emitBinary(ir::BinaryKind kind, ir::ValueId a, ir::ValueId b, SourceRange range);
  Val emitUnary(ir::UnaryKind kind, ir::ValueId a, SourceRange range);
  Val indexArith(ast::BinaryOp op, const Val& a, const Val& b, SourceRange range);
  Val valOf(ir::ValueId v) const;

  // ---- expressions (sema_exprs.cpp)
 public:
  Val eval(const ast::Expr& e);
 private:
  Val evalUncached(const ast::Expr& e);
  Val evalBinary(const ast::BinaryExpr& e);
  Val binaryOp(ast::BinaryOp op, Operand lhs, Operand rhs, SourceRange opRange, SourceRange range);
  Val evalUnary(const ast::UnaryExpr& e);
  Val evalAttribute(const ast::AttributeExpr& e);
  Val evalSubscript(const ast::SubscriptExpr& e);
  Val evalCall(const ast::CallExpr& e);
  Val evalMethod(const ast::CallExpr& call, const ast::AttributeExpr& callee);
  Val makeView(const Val& base, std::vector<Val> offsets, std::vector<int64_t> shape, SourceRange range);
  Val asView(const Val& v, SourceRange range, const char* fn, const char* param);
  int logicalRank(const Val& v) const;
  std::vector<int64_t> logicalShape(const Val& v) const;
  bool checkIndex(const Val& idx, SourceRange range);

  // ---- builtins (sema_builtins.cpp, sema_builtins_math.cpp)
  Val callBuiltin(const BuiltinInfo& info, const ast::CallExpr& call);
  bool bindArguments(const ast::CallExpr& call, const std::string& fname, const std::vector<std::string>& params,
                     size_t required, std::vector<const ast::Argument*>& slots);
  Val builtinMemory(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);
  Val builtinCreation(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);
  Val builtinReduce(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);
  Val builtinMath(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);
  Val builtinDot(const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);
  Val stageDotOperand(const Val& v, SourceRange range, const char* name,
                      std::vector<std::pair<ir::ValueId, ir::ValueId>>& stores);
  // `layout=mma(warps=(WM, WN))` of zeros() (sema_mma.cpp).
  std::optional<ir::Layout> mmaLayoutArg(const ast::Expr& e, const std::vector<int64_t>& shape);
  Val builtinCast(const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);
  Val builtinWhere(const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);
  Val builtinCdiv(const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);
  Val storeValue(const Val& view, Operand value, SourceRange range, const char* verb);
  Val builtinAsync(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);
  Val builtinCopyBulk(const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);  // sema_hopper.cpp
  bool panelsFit(const Val& dst, int swizzleBytes, int64_t rowBytes) const;
  void storeInPanels(const Val& dst, int64_t panelCols);
  bool requireTmaRows(const Val& src, const ast::Expr& where);
  std::optional<std::pair<Val, Val>> globalToSharedViews(const char* name, const std::vector<const ast::Argument*>& a);
  std::optional<ir::Layout> wgmmaLayoutArg(const ast::CallExpr& call, const std::vector<int64_t>& shape);
  std::optional<ir::Swizzle> swizzleArgument(const ast::Argument& arg, const std::vector<int64_t>& shape);

  // ---- new axes and reshapes (sema_reshape.cpp), random numbers (sema_random.cpp)
  Val reshapeTile(const Val& x, const std::vector<int64_t>& shape, SourceRange range);
  Val builtinReshape(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);
  Val subscriptTile(const ast::SubscriptExpr& e, const Val& base);
  // The four words of Philox 4x32-10 for counters (offsets, 0, 0, 0) and the key of a seed.
  std::array<ir::ValueId, 4> philox(ir::ValueId offsets, ir::ValueId seed, SourceRange range);
  Val builtinRandom(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);

  // ---- habits from Triton (sema_triton.cpp): each reported once, then analysed as the Argus spelling
  std::string argusNameForTriton(const std::string& name) const;
  std::optional<Val> tritonQualifiedName(const ast::AttributeExpr& e);           // tl.float32
  std::optional<Val> tritonQualifiedCall(const ast::CallExpr& call, const ast::AttributeExpr& callee);  // tl.load(...)
  std::optional<Val> pythonConversion(const ast::CallExpr& call, const std::string& fn);  // float("inf"), int(x)
  std::optional<Val> tritonTileMethod(const ast::CallExpr& call, const ast::AttributeExpr& callee, const Val& base);
  bool tritonMaskArgument(const std::string& fname, const ast::CallExpr& call, const ast::Argument& a);
  std::optional<Val> tritonZerosOrder(const ast::CallExpr& call);  // zeros((BN,), dtype=f32)

  // ---- launch geometry (sema_launch.cpp)
  struct LaunchVal {
    ir::LaunchExpr expr;
    bool isBool = false;
  };
  std::optional<LaunchVal> evalLaunch(const ast::Expr& e, const char* context);
  bool analyzeLaunch(const ast::FunctionDef& def, const ast::Decorator& decorator);
  bool analyzeCluster(const ast::Expr& e);
  std::optional<bool> multicastArg(const ast::Expr& e, const ir::Type& view);
  Val builtinRequire(const ast::CallExpr& call, const std::vector<const ast::Argument*>& a);

  // ---- statements (sema_stmts.cpp, sema_control.cpp)
  void analyzeBlock(const ast::Block& block, bool functionTop);
  void analyzeStmt(const ast::Stmt& s, bool lastOfFunction);
  void analyzeStmtAtDepth(const ast::Stmt& s, bool lastOfFunction);  // analyzeStmt() inside the depth check
  void analyzeAssign(const ast::AssignStmt& s);
  void analyzeAugAssign(const ast::AugAssignStmt& s);
  void assignTo(const ast::Expr& target, const Val& value, SourceRange valueRange);
  void analyzeFor(const ast::ForStmt& s);
  struct PipelinedIterator {  // pipelined(n, stages=S): bounds (0, n, 1)
    std::vector<Val> bounds;
    int64_t stages = 0;
    bool specialize = false;  // specialize=True: a producer warpgroup issues the copy_bulk copies
  };
  std::optional<PipelinedIterator> analyzePipelinedIterator(const ast::CallExpr& call);
  void analyzeLoopBody(const ast::ForStmt& s, const std::vector<Val>& bounds, int64_t stages, bool specialize = false);
  void reportPipeliningProblems(const ast::ForStmt& s, const ir::Op& loop);
  void analyzeIf(const ast::IfStmt& s);
  bool checkCondition(const Val& cond, SourceRange range, const char* keyword);
  std::optional<ir::ValueId> carriedValue(const std::string& name, const Val& v, const ir::Type* want,
                                          SourceRange range, bool loop);
  Val callDevice(const ast::FunctionDef& def, const ast::CallExpr& call);

  // ---- tags and tag assertions (sema_tags.cpp)
  Val evalTagCall(const ast::CallExpr& call);
  void analyzeAssert(const ast::AssertStmt& s);

  // ---- state
  const ast::Module& module_;
  const SourceFile& file_;
  const Options& options_;
  DiagnosticSink& diags_;
  Result& result_;

  std::unordered_map<std::string, const ast::FunctionDef*> devices_;
  std::unordered_map<std::string, const ast::FunctionDef*> kernels_;
  std::unordered_map<std::string, Constant> defines_;
  std::unordered_set<std::string> usedDefines_;
  std::unordered_set<std::string> reported_;  // dedup keys of reported diagnostics
  // Named extents (`BLOCK`) already reported as not a power of two: one report per name.
  std::unordered_set<std::string> reportedExtentNames_;

  // Current kernel.
  ir::Function* fn_ = nullptr;
  std::optional<ir::Builder> builder_;
  Frame* frame_ = nullptr;
  size_t errors_ = 0;                 // errors reported in the current kernel
  size_t poisonedReads_ = 0;          // reads of names bound to an erroneous value (already reported)
  int quiet_ = 0;                     // > 0 inside functions with syntax errors: count, do not report
  int controlDepth_ = 0;              // loops and runtime ifs around the current statement
  int pipelinedDepth_ = 0;            // pipelined loops around the current statement
  bool inSpecializedPipeline_ = false; // the innermost pipelined loop has specialize=True
  int gridRank_ = 3;
  std::unordered_map<std::string, int> sizeIndex_;
  std::unordered_map<ir::ValueId, std::vector<std::string>> tensorDims_;  // extents as written
  std::vector<const ast::FunctionDef*> inlineStack_;
  std::unordered_set<const ast::FunctionDef*> inlined_;  // device functions analysed at a call
  std::vector<SourceRange> callStack_;
  size_t analysisDepth_ = 0;  // eval() and analyzeStmt() calls on the stack (frontend/limits.h)
  bool enterAnalysis(SourceRange range, const char* what);  // false past kMaxAnalysisDepth (reported)

  std::unordered_map<uint64_t, int> symbolIndex_;  // (definition.begin, kind) -> symbol
  std::unordered_map<std::string, int> builtinSymbols_;
  std::unordered_set<uint64_t> references_;  // (symbol, begin) recorded inside inlined calls
  uint32_t nextVersion_ = 1;

  ir::Builder& b() { return *builder_; }
};

}  // namespace argus::sema::detail

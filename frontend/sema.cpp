// Semantic analysis, module level: functions, decorators, -D defines, kernel
// parameters and the kernel driver loop. See sema_internal.h for the layout.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "frontend/sema_internal.h"

namespace argus::sema {

const char* symbolKindName(Symbol::Kind kind) {
  switch (kind) {
    case Symbol::Kind::Kernel: return "kernel";
    case Symbol::Kind::DeviceFunction: return "device function";
    case Symbol::Kind::Parameter: return "parameter";
    case Symbol::Kind::Const: return "const parameter";
    case Symbol::Kind::Size: return "runtime size";
    case Symbol::Kind::Local: return "local variable";
    case Symbol::Kind::LoopVar: return "loop variable";
    case Symbol::Kind::Builtin: return "builtin";
  }
  return "name";
}

Result analyze(const ast::Module& module, const SourceFile& file, const Options& options,
               DiagnosticSink& diags) {
  Result result;
  result.module = std::make_unique<ir::Module>();
  detail::Analyzer analyzer(module, file, options, diags, result);
  analyzer.run();
  return result;
}

namespace detail {

Analyzer::Analyzer(const ast::Module& module, const SourceFile& file, const Options& options,
                   DiagnosticSink& diags, Result& result)
    : module_(module), file_(file), options_(options), diags_(diags), result_(result) {}

Diagnostic* Analyzer::report(DiagId id, SourceRange range, std::vector<std::string> args) {
  const DiagKindInfo& info = diagInfo(id);
  if (info.severity == Severity::Error) ++errors_;
  // A function the parser could not fully understand would only produce follow-on errors.
  if (quiet_ > 0) return nullptr;
  std::string key = std::to_string(static_cast<int>(id)) + ":" + std::to_string(range.begin) + ":" +
                    std::to_string(range.end) + ":" + formatMessage(info.format, args);
  if (!reported_.insert(std::move(key)).second) return nullptr;
  Diagnostic& d = diags_.report(id, range, std::move(args));
  // Inside an inlined device function, point at the calls that led here.
  for (auto it = callStack_.rbegin(); it != callStack_.rend(); ++it)
    d.labels.push_back({*it, "in this call"});
  return &d;
}

void Analyzer::addFixIt(Diagnostic* d, SourceRange range, std::string replacement, std::string message) {
  if (d) d->fixits.push_back({range, std::move(replacement), std::move(message)});
}

namespace {

// Parses the value of `-D NAME=VALUE`: an integer (decimal, 0x, 0b), a float or a bool.
std::optional<Constant> parseDefineValue(const std::string& text) {
  if (text == "True" || text == "true") return Constant::ofBool(true);
  if (text == "False" || text == "false") return Constant::ofBool(false);
  if (text.empty()) return std::nullopt;
  std::string digits;
  for (char c : text)
    if (c != '_') digits += c;
  errno = 0;
  char* end = nullptr;
  int base = 10;
  const char* start = digits.c_str();
  bool negative = false;
  if (*start == '-' || *start == '+') { negative = *start == '-'; ++start; }
  if (start[0] == '0' && (start[1] == 'x' || start[1] == 'X')) { base = 16; start += 2; }
  else if (start[0] == '0' && (start[1] == 'b' || start[1] == 'B')) { base = 2; start += 2; }
  if (*start >= '0' && *start <= '9') {
    long long v = std::strtoll(start, &end, base);
    if (end && *end == '\0' && errno == 0) return Constant::ofInt(negative ? -v : v);
  }
  if (base != 10) return std::nullopt;
  errno = 0;
  double d = std::strtod(digits.c_str(), &end);
  if (end && *end == '\0' && errno == 0 && std::isfinite(d)) return Constant::ofFloat(d);
  return std::nullopt;
}

}  // namespace

void Analyzer::parseDefines() {
  auto isName = [](const std::string& text) {
    return !text.empty() && !std::isdigit(static_cast<unsigned char>(text[0])) &&
           std::all_of(text.begin(), text.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
  };
  for (const auto& [name, value] : options_.defines) {
    if (!isName(name)) {  // from the command line or an editor's settings: nothing in a kernel can be called that
      report(DiagId::BadDefine, {}, {name + "=" + value, quote(name) + " is not a name; -D sets a const parameter, as in -D BM=128"});
      usedDefines_.insert(name);
      continue;
    }
    std::optional<Constant> c = parseDefineValue(value);
    if (!c) {
      report(DiagId::BadDefine, {}, {name + "=" + value, quote(value) + " is not an integer, a float or a bool"});
      usedDefines_.insert(name);  // reported already; do not also warn that it is unused
      continue;
    }
    defines_[name] = *c;
  }
}

void Analyzer::run() {
  result_.exprTypes.reserve(module_.exprCount);
  parseDefines();
  collectFunctions();
  for (const ast::StmtPtr& s : module_.strayStatements)
    if (s && s->kind != ast::StmtKind::Error) report(DiagId::StrayStatement, s->range);
  for (const auto& def : module_.functions)
    if (def && kernels_.count(def->name) && kernels_[def->name] == def.get()) analyzeKernel(*def);
  for (const auto& def : module_.functions)
    if (def && devices_.count(def->name) && devices_[def->name] == def.get() && !inlined_.count(def.get()))
      analyzeUncalledDevice(*def);
  for (const auto& [name, value] : options_.defines) {
    bool known = false;
    for (const auto& [kname, def] : kernels_)
      for (const ast::Param& p : def->params)
        if (p.name == name && p.annotation && p.annotation->kind == ast::ExprKind::Name &&
            static_cast<const ast::NameExpr&>(*p.annotation).name == "const")
          known = true;
    if (!known && !usedDefines_.count(name)) report(DiagId::DefineUnused, {}, {name});
  }
}

bool Analyzer::checkDecorators(const ast::FunctionDef& def, bool& isKernel, const ast::Decorator*& kernelDecorator) {
  isKernel = false;
  kernelDecorator = nullptr;
  bool known = false, unknown = false;
  for (const ast::Decorator& d : def.decorators) {
    if (d.name == "kernel") {
      isKernel = true;
      known = true;
      if (!kernelDecorator) kernelDecorator = &d;
    } else if (d.name == "device") {
      known = true;
      if (d.args && !d.args->empty())
        report(DiagId::ArgumentCount, d.range, {"@device", "no arguments",
               std::to_string(d.args->size()) + (d.args->size() == 1 ? " was" : " were")});
    } else if (d.name.empty()) {
      unknown = true;  // the parser could not read it, and its syntax error says so
    } else {
      unknown = true;
      std::string hint = suggestion(d.name, {"kernel", "device"});
      Diagnostic* diag = report(DiagId::UnknownDecorator, d.nameRange,
                                {d.name, hint.empty() ? "a function is '@kernel(...)' or '@device'"
                                                      : "did you mean '@" + hint + "'?"});
      if (!hint.empty()) addFixIt(diag, d.nameRange, hint, "replace with '@" + hint + "'");
    }
  }
  if (!known && !unknown && !def.name.empty()) {  // a nameless def is a syntax error already
    Diagnostic* diag = report(DiagId::MissingDecorator, def.nameRange, {def.name});
    addFixIt(diag, {def.range.begin, def.range.begin}, "@device\n", "make it a device function");
  }
  return known;
}

void Analyzer::collectFunctions() {
  for (const auto& defPtr : module_.functions) {
    if (!defPtr) continue;
    const ast::FunctionDef& def = *defPtr;
    bool isKernel = false;
    const ast::Decorator* kernelDecorator = nullptr;
    checkDecorators(def, isKernel, kernelDecorator);
    if (def.name.empty()) continue;  // its syntax error is the whole story: nothing can call it
    const ast::FunctionDef* previous = nullptr;
    if (auto it = kernels_.find(def.name); it != kernels_.end()) previous = it->second;
    if (auto it = devices_.find(def.name); it != devices_.end()) previous = it->second;
    if (previous) {
      report(DiagId::Redefinition, def.nameRange,
             {def.name, "; the first definition is on line " + std::to_string(lineOf(previous->nameRange))});
      continue;
    }
    if (findBuiltin(def.name) || ir::dtypeFromName(def.name)) {
      report(DiagId::Redefinition, def.nameRange, {def.name, " as a builtin; choose another name"});
      continue;
    }
    if (isKernel) {
      kernels_[def.name] = &def;
      defineSymbol(Symbol::Kind::Kernel, def.name, def.nameRange, "@kernel " + def.name);
    } else {
      devices_[def.name] = &def;
      std::string params;
      for (const ast::Param& p : def.params) params += (params.empty() ? "" : ", ") + p.name;
      defineSymbol(Symbol::Kind::DeviceFunction, def.name, def.nameRange, "@device " + def.name + "(" + params + ")");
    }
  }
}

std::optional<Constant> Analyzer::constParamValue(const ast::Param& p) {
  if (auto it = defines_.find(p.name); it != defines_.end()) {
    usedDefines_.insert(p.name);
    return it->second;
  }
  if (!p.defaultValue) {
    report(DiagId::MissingConstValue, p.range, {p.name});
    return std::nullopt;
  }
  Val v = eval(*p.defaultValue);
  if (v.isError()) return std::nullopt;
  if (v.kind != Val::Kind::Const) {
    report(DiagId::NotConstant, p.defaultValue->range, {"the value of const parameter '" + p.name + "'", describe(v)});
    return std::nullopt;
  }
  return v.c;
}

// The declared default of a scalar parameter ('eps: f32 = 1e-5'): a constant
// (constants may use the const parameters, bound before), as a double; what the
// host passes when the caller gives no value (argusc run, the Python launcher).
std::optional<double> Analyzer::scalarDefault(const ast::Param& p, ir::DType dtype) {
  Val v = eval(*p.defaultValue);
  if (v.isError()) return std::nullopt;
  if (v.kind != Val::Kind::Const) {
    report(DiagId::NotConstant, p.defaultValue->range, {"the default of scalar parameter '" + p.name + "'", describe(v)});
    return std::nullopt;
  }
  bool fits = dtype == ir::DType::Bool ? v.c.kind == Constant::Kind::Bool
              : ir::isFloat(dtype)     ? v.c.kind != Constant::Kind::Bool
                                       : v.c.kind == Constant::Kind::Int;
  if (!fits) {
    report(DiagId::BadParamType, p.defaultValue->range,
           {"the default of '" + p.name + ": " + ir::dtypeName(dtype) + "' is " + v.c.str() + ", not " +
            (dtype == ir::DType::Bool ? "True or False" : ir::isFloat(dtype) ? "a number" : "an integer")});
    return std::nullopt;
  }
  return v.c.asDouble();
}

bool Analyzer::parseTensorAnnotation(const ast::Expr& annotation, ir::DType& dtype,
                                     std::vector<const ast::Expr*>& dims) {
  const auto& sub = static_cast<const ast::SubscriptExpr&>(annotation);
  if (sub.indices.size() != 2 || !sub.indices[0] || !sub.indices[1]) {
    report(DiagId::BadParamType, annotation.range,
           {quote(text(annotation.range)) + " is not a tensor type: write Tensor[dtype, (d0, ...)]"});
    return false;
  }
  std::optional<ir::DType> dt = annotationDType(*sub.indices[0], true);
  if (!dt) return false;
  dtype = *dt;
  const ast::Expr& shape = *sub.indices[1];
  if (shape.kind == ast::ExprKind::Tuple || shape.kind == ast::ExprKind::List) {
    const auto& elems = shape.kind == ast::ExprKind::Tuple ? static_cast<const ast::TupleExpr&>(shape).elements
                                                           : static_cast<const ast::ListExpr&>(shape).elements;
    for (const ast::ExprPtr& e : elems)
      if (e) dims.push_back(e.get());
  } else {
    dims.push_back(&shape);
  }
  if (dims.empty()) {
    report(DiagId::BadParamType, shape.range, {"a tensor needs at least one extent"});
    return false;
  }
  return true;
}

bool Analyzer::setupKernelParams(const ast::FunctionDef& def) {
  enum class PKind { Tensor, Scalar, Const, Bad };
  struct Info {
    const ast::Param* p;
    PKind kind = PKind::Bad;
    ir::DType dtype = ir::DType::F32;
    std::vector<const ast::Expr*> dims;
  };
  std::vector<Info> infos;
  std::unordered_map<std::string, const ast::Param*> byName;
  for (const ast::Param& p : def.params) {
    if (byName.count(p.name)) {
      report(DiagId::Redefinition, p.nameRange, {p.name, " as a parameter of '" + def.name + "'"});
      continue;
    }
    byName[p.name] = &p;
    Info info;
    info.p = &p;
    if (!p.annotation) {
      report(DiagId::BadParamType, p.nameRange, {"parameter '" + p.name + "' has no type"});
    } else if (p.annotation->kind == ast::ExprKind::Name &&
               static_cast<const ast::NameExpr&>(*p.annotation).name == "const") {
      info.kind = PKind::Const;
    } else if (p.annotation->kind == ast::ExprKind::Subscript &&
               static_cast<const ast::SubscriptExpr&>(*p.annotation).base &&
               static_cast<const ast::SubscriptExpr&>(*p.annotation).base->kind == ast::ExprKind::Name &&
               static_cast<const ast::NameExpr&>(*static_cast<const ast::SubscriptExpr&>(*p.annotation).base).name == "Tensor") {
      if (parseTensorAnnotation(*p.annotation, info.dtype, info.dims)) info.kind = PKind::Tensor;
    } else if (std::optional<ir::DType> dt = annotationDType(*p.annotation, false)) {
      info.kind = PKind::Scalar;
      info.dtype = *dt;
    } else if (p.annotation->kind == ast::ExprKind::Name) {
      annotationDType(*p.annotation, true);  // reports the unknown dtype with a suggestion
    } else {
      report(DiagId::BadParamType, p.annotation->range, {quote(text(p.annotation->range)) + " is not a parameter type"});
    }
    if (p.defaultValue && info.kind == PKind::Tensor)
      report(DiagId::BadParamType, p.defaultValue->range,
             {"only const and scalar parameters have default values, and '" + p.name + "' is a tensor"});
    infos.push_back(std::move(info));
  }

  // Constants first: tensor shapes and later defaults may use them.
  for (Info& info : infos) {
    if (info.kind != PKind::Const) continue;
    const ast::Param& p = *info.p;
    std::optional<Constant> c = constParamValue(p);
    Val v = c ? Val::constant(*c) : Val::error();
    bind(p.name, v, p.nameRange, Symbol::Kind::Const);
    if (c && c->kind != Constant::Kind::Float) fn_->constants.push_back({p.name, c->i});
  }

  // Tensor extents: constants, or runtime sizes in order of first appearance.
  std::vector<std::pair<std::string, SourceRange>> sizes;
  std::vector<std::vector<ir::DimRef>> tensorDims(infos.size());
  std::vector<std::vector<std::string>> tensorDimText(infos.size());
  for (size_t k = 0; k < infos.size(); ++k) {
    Info& info = infos[k];
    if (info.kind != PKind::Tensor) continue;
    for (const ast::Expr* d : info.dims) {
      ir::DimRef ref;
      tensorDimText[k].push_back(text(d->range));
      if (d->kind == ast::ExprKind::Int) {
        int64_t v = static_cast<const ast::IntExpr&>(*d).value;
        if (v <= 0) {
          report(DiagId::NonPositiveExtent, d->range, {"a tensor", std::to_string(v)});
          info.kind = PKind::Bad;
        }
        ref.constant = v;
      } else if (d->kind == ast::ExprKind::Name) {
        const std::string& name = static_cast<const ast::NameExpr&>(*d).name;
        auto pit = byName.find(name);
        Binding* bnd = findBinding(name);
        if (bnd && bnd->kind == Symbol::Kind::Const) {
          addReference(bnd->symbol, d->range);
          if (bnd->val.kind != Val::Kind::Const || bnd->val.c.kind != Constant::Kind::Int || bnd->val.c.i <= 0) {
            if (bnd->val.kind == Val::Kind::Const)
              report(DiagId::NonPositiveExtent, d->range, {"a tensor", bnd->val.c.str()});
            info.kind = PKind::Bad;
          } else {
            ref.constant = bnd->val.c.i;
          }
        } else if (pit != byName.end()) {
          Diagnostic* diag = report(DiagId::SizeIsParameter, d->range, {name});
          if (diag) diag->labels.push_back({pit->second->nameRange, "declared as a parameter here"});
          info.kind = PKind::Bad;
        } else {
          auto it = sizeIndex_.find(name);
          if (it == sizeIndex_.end()) {
            it = sizeIndex_.emplace(name, static_cast<int>(sizes.size())).first;
            sizes.push_back({name, d->range});
          }
          ref.sizeIndex = it->second;
        }
      } else {
        report(DiagId::BadParamType, d->range,
               {quote(text(d->range)) + " is not a tensor extent: use a size name such as N or an integer constant"});
        info.kind = PKind::Bad;
      }
      tensorDims[k].push_back(ref);
    }
  }

  // Block arguments in ABI order: tensors and scalars as written, then sizes.
  for (size_t k = 0; k < infos.size(); ++k) {
    Info& info = infos[k];
    const ast::Param& p = *info.p;
    if (info.kind == PKind::Const) continue;
    if (info.kind == PKind::Bad) {
      bind(p.name, Val::error(), p.nameRange, Symbol::Kind::Parameter);
      continue;
    }
    ir::Param param;
    param.name = p.name;
    param.dtype = info.dtype;
    param.range = p.range;
    ir::Type type;
    if (info.kind == PKind::Tensor) {
      param.kind = ir::ParamKind::Tensor;
      param.dims = tensorDims[k];
      std::vector<int64_t> shape;
      for (const ir::DimRef& d : param.dims) shape.push_back(d.constant >= 0 ? d.constant : -1);
      type = ir::Type::tensor(info.dtype, shape);
    } else {
      param.kind = ir::ParamKind::Scalar;
      type = ir::Type::scalar(info.dtype);
      if (p.defaultValue) param.defaultValue = scalarDefault(p, info.dtype);
    }
    param.value = b().addBlockArg(fn_->body, type, p.name, p.nameRange);
    if (info.kind == PKind::Tensor) tensorDims_[param.value] = tensorDimText[k];
    fn_->params.push_back(param);
    bind(p.name, Val::value(param.value), p.nameRange, Symbol::Kind::Parameter);
  }
  for (const auto& [name, range] : sizes) {
    ir::Param param;
    param.kind = ir::ParamKind::Size;
    param.name = name;
    param.dtype = ir::DType::I32;
    param.range = range;
    param.value = b().addBlockArg(fn_->body, ir::Type::scalar(ir::DType::I32), name, range);
    fn_->params.push_back(param);
    fn_->sizeNames.push_back(name);
    bind(name, Val::value(param.value), range, Symbol::Kind::Size);
  }
  // Later mentions of a size in other tensor types are references to it.
  for (const Info& info : infos)
    for (const ast::Expr* d : info.dims)
      if (d->kind == ast::ExprKind::Name && sizeIndex_.count(static_cast<const ast::NameExpr&>(*d).name)) {
        Binding* bnd = findBinding(static_cast<const ast::NameExpr&>(*d).name);
        if (bnd && result_.symbols[static_cast<size_t>(bnd->symbol)].definition != d->range)
          addReference(bnd->symbol, d->range);
      }
  return true;
}

void Analyzer::analyzeKernel(const ast::FunctionDef& def) {
  auto fn = std::make_unique<ir::Function>();
  fn->name = def.name;
  fn->range = def.range;
  fn_ = fn.get();
  builder_.emplace(*fn_, &fn_->body);
  Frame frame;
  frame.def = &def;
  frame.isKernel = true;
  frame_ = &frame;
  errors_ = 0;
  controlDepth_ = 0;
  gridRank_ = 3;
  sizeIndex_.clear();
  tensorDims_.clear();

  quiet_ = def.hasSyntaxErrors ? 1 : 0;
  if (def.hasSyntaxErrors) ++errors_;  // its IR would miss what the parser could not read
  setupKernelParams(def);
  const ast::Decorator* decorator = nullptr;
  for (const ast::Decorator& d : def.decorators)
    if (d.name == "kernel") { decorator = &d; break; }
  if (!decorator || !decorator->args) {
    report(DiagId::MissingGrid, decorator ? decorator->range : def.nameRange, {def.name});
  } else {
    analyzeLaunch(def, *decorator);
  }
  analyzeBlock(def.body, true);

  if (errors_ == 0) {
    std::vector<std::string> problems = ir::verify(*fn_);
    if (!problems.empty()) {
      report(DiagId::SemaInternalError, def.nameRange, {def.name, problems.front()});
    } else {
      result_.module->functions.push_back(std::move(fn));
    }
  }
  frame_ = nullptr;
  fn_ = nullptr;
  builder_.reset();
  quiet_ = 0;
}

// A device function no kernel calls is still checked, as far as it can be
// without argument types: parameters annotated with a dtype are scalars of
// that dtype, the others are unknown (and silence what depends on them).
// Unknown names, misused builtins and the like are reported; no IR is kept.
void Analyzer::analyzeUncalledDevice(const ast::FunctionDef& def) {
  ir::Function scratch;
  scratch.name = def.name;
  fn_ = &scratch;
  builder_.emplace(scratch, &scratch.body);
  Frame frame;
  frame.def = &def;
  frame_ = &frame;
  quiet_ = def.hasSyntaxErrors ? 1 : 0;
  controlDepth_ = 0;
  gridRank_ = 3;
  sizeIndex_.clear();
  tensorDims_.clear();
  inlineStack_.push_back(&def);
  for (const ast::Param& p : def.params) {
    Val v = Val::error();
    if (p.annotation)
      if (std::optional<ir::DType> dt = annotationDType(*p.annotation, false))
        v = Val::value(b().addBlockArg(scratch.body, ir::Type::scalar(*dt), p.name, p.nameRange));
    bind(p.name, v, p.nameRange, Symbol::Kind::Parameter);
  }
  analyzeBlock(def.body, true);
  inlineStack_.pop_back();
  frame_ = nullptr;
  fn_ = nullptr;
  builder_.reset();
  quiet_ = 0;
}

}  // namespace detail
}  // namespace argus::sema

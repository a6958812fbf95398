#include "runtime/interp/npy.h"

#include <cctype>
#include <cstring>

namespace argus::interp {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;

// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
struct HeaderReader {
  const std::string& text;
  size_t pos = 0;

  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  }
  bool take(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) { ++pos; return true; }
    return false;
  }
  bool string(std::string& out) {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"')) return false;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos) return false;
    out = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
  }
  bool word(std::string& out) {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos]))) ++pos;
    out = text.substr(start, pos - start);
    return !out.empty();
  }
  bool integer(int64_t& out) {
    skipSpace();
    size_t start = pos;
    out = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      if (out > (int64_t{1} << 53)) return false;
      out = out * 10 + (text[pos++] - '0');
    }
    if (pos < text.size() && text[pos] == 'L') ++pos;  // Python 2's long suffix
    return pos > start;
  }
  bool tuple(std::vector<int64_t>& out) {
    if (!take('(')) return false;
    while (!take(')')) {
      int64_t v = 0;
      if (!integer(v)) return false;
      out.push_back(v);
      if (!take(',')) return take(')');
    }
    return true;
  }
};

const char* typeNameOf(char kind, int bytes) {
  switch (kind) {
    case 'f': return bytes == 2 ? "float16" : bytes == 4 ? "float32" : bytes == 8 ? "float64" : nullptr;
    case 'i': return bytes == 1 ? "int8" : bytes == 2 ? "int16" : bytes == 4 ? "int32" : bytes == 8 ? "int64" : nullptr;
    case 'u': return bytes == 1 ? "uint8" : bytes == 2 ? "uint16" : bytes == 4 ? "uint32" : bytes == 8 ? "uint64" : nullptr;
    case 'b': return bytes == 1 ? "bool" : nullptr;
    default: return nullptr;
  }
}

// numpy's kind and size of the type a tensor of `dtype` is stored as exactly.
void exactType(ir::DType dtype, char& kind, int& bytes) {
  bytes = ir::dtypeBits(dtype) / 8;
  kind = dtype == ir::DType::Bool ? 'b' : ir::isFloat(dtype) ? 'f' : ir::isSigned(dtype) ? 'i' : 'u';
  if (dtype == ir::DType::Bool) bytes = 1;
}

bool narrowFloat(ir::DType dtype) {
  return dtype == ir::DType::BF16 || dtype == ir::DType::F8E4M3 || dtype == ir::DType::F8E5M2;
}

// Row-major element index -> element index in a Fortran-order (column-major) array.
size_t fortranIndex(size_t rowMajor, const std::vector<int64_t>& shape) {
  size_t offset = 0, stride = 1;
  std::vector<size_t> coords(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = rowMajor % static_cast<size_t>(shape[d]);
    rowMajor /= static_cast<size_t>(shape[d]);
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    offset += coords[d] * stride;
    stride *= static_cast<size_t>(shape[d]);
  }
  return offset;
}

}  // namespace

std::string NpyArray::typeName() const {
  const char* name = typeNameOf(kind, itemBytes);
  return name ? name : std::string(1, kind) + std::to_string(itemBytes);
}

std::string npyTypeNameFor(ir::DType dtype) {
  if (narrowFloat(dtype)) return "float32";
  char kind;
  int bytes;
  exactType(dtype, kind, bytes);
  return typeNameOf(kind, bytes);
}

bool parseNpy(const std::string& bytes, NpyArray& out, std::string& error) {
  out = NpyArray{};
  if (bytes.size() < kMagicBytes + 4 || bytes.compare(0, kMagicBytes, kMagic, kMagicBytes) != 0) {
    error = "not a .npy file (it does not start with numpy's magic string; write it with numpy.save)";
    return false;
  }
  int major = static_cast<unsigned char>(bytes[6]);
  size_t headerLength = 0, headerStart = 0;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) { error = "is truncated in its header"; return false; }
    for (int b = 0; b < 4; ++b) headerLength |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + b])) << (8 * b);
    headerStart = 12;
  } else {
    error = "is .npy format version " + std::to_string(major) + "." +
            std::to_string(static_cast<unsigned char>(bytes[7])) + "; this reader knows versions 1.0 to 3.0";
    return false;
  }
  if (headerStart + headerLength > bytes.size()) { error = "is truncated in its header"; return false; }
  std::string header = bytes.substr(headerStart, headerLength);
  HeaderReader r{header};
  std::string descr;
  bool fortran = false, haveDescr = false, haveShape = false;
  bool ok = r.take('{');
  while (ok && !r.take('}')) {
    std::string key;
    ok = r.string(key) && r.take(':');
    if (!ok) break;
    if (key == "descr") {
      if (!r.string(descr)) {
        error = "holds a structured array (its dtype is a list of fields); save one plain array per file";
        return false;
      }
      haveDescr = true;
    } else if (key == "fortran_order") {
      std::string word;
      ok = r.word(word) && (word == "True" || word == "False");
      fortran = word == "True";
    } else if (key == "shape") {
      ok = r.tuple(out.shape);
      haveShape = ok;
    } else {
      ok = false;
    }
    if (ok && !r.take(',')) {
      ok = r.take('}');
      break;
    }
  }
  if (!ok || !haveDescr || !haveShape) {
    error = "has a header numpy would not write ('" + header.substr(0, header.find_last_not_of(" \n") + 1) + "')";
    return false;
  }
  // descr: byte order ('<' little, '>' big, '|' not applicable, '=' native), kind, bytes.
  char order = descr.empty() ? '?' : descr[0];
  char kind = descr.size() > 1 ? descr[1] : '?';
  int itemBytes = descr.size() > 2 ? std::atoi(descr.c_str() + 2) : 0;
  if (!std::strchr("<>|=", order) || !typeNameOf(kind, itemBytes)) {
    std::string what = kind == 'c' ? "complex numbers" : kind == 'V' ? "raw bytes (numpy 'V' type; ml_dtypes' bfloat16 is saved so: save t.view(numpy.uint16) instead)"
                     : kind == 'U' || kind == 'S' ? "strings" : kind == 'O' ? "Python objects" : "an unknown type";
    error = "holds " + what + " (dtype '" + descr + "'); Argus tensors read bool, int8..int64, uint8..uint64 and float16..float64";
    return false;
  }
  out.kind = kind;
  out.itemBytes = itemBytes;
  size_t count = 1;
  for (int64_t e : out.shape) {
    if (__builtin_mul_overflow(count, static_cast<size_t>(e), &count)) { error = "has an impossible shape"; return false; }
  }
  size_t dataBytes = 0;
  if (__builtin_mul_overflow(count, static_cast<size_t>(itemBytes), &dataBytes)) { error = "has an impossible shape"; return false; }
  size_t available = bytes.size() - headerStart - headerLength;
  if (available != dataBytes) {
    error = (available < dataBytes ? "is truncated: " : "has extra bytes: ") + std::to_string(dataBytes) +
            " bytes of data expected for its shape and dtype, " + std::to_string(available) + " found";
    return false;
  }
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data() + headerStart + headerLength);
  out.data.assign(dataBytes, 0);
  bool swap = order == '>';
  for (size_t i = 0; i < count; ++i) {
    size_t from = (fortran ? fortranIndex(i, out.shape) : i) * static_cast<size_t>(itemBytes);
    for (int b = 0; b < itemBytes; ++b)
      out.data[i * static_cast<size_t>(itemBytes) + static_cast<size_t>(b)] =
          data[from + static_cast<size_t>(swap ? itemBytes - 1 - b : b)];
  }
  return true;
}

bool npyToTensor(const NpyArray& array, ir::DType dtype, HostTensor& out, std::string& error) {
  out = HostTensor::zeros(dtype, array.shape);
  char kind;
  int bytes;
  exactType(dtype, kind, bytes);
  if (narrowFloat(dtype)) {
    // Raw bits in the unsigned integer of the same width, or float32 values rounded.
    if (array.kind == 'u' && array.itemBytes == bytes) {
      out.bytes = array.data;
      return true;
    }
    if (array.kind == 'f' && array.itemBytes == 4) {
      for (size_t i = 0; i < out.size(); ++i) {
        float v;
        std::memcpy(&v, array.data.data() + 4 * i, 4);
        out.set(i, static_cast<double>(v));
      }
      return true;
    }
    error = "holds " + array.typeName() + " where the kernel's tensor is " + ir::dtypeName(dtype) +
            ": save float32 values (rounded to " + ir::dtypeName(dtype) + " on reading) or the raw " +
            ir::dtypeName(dtype) + " bits as " + typeNameOf('u', bytes);
    return false;
  }
  if (array.kind != kind || array.itemBytes != bytes) {
    error = "holds " + array.typeName() + " where the kernel's tensor is " + ir::dtypeName(dtype) +
            ": save it with .astype(numpy." + typeNameOf(kind, bytes) + (kind == 'b' ? "_" : "") + ")";
    return false;
  }
  out.bytes = array.data;
  if (dtype == ir::DType::Bool)
    for (uint8_t& b : out.bytes) b = b != 0;
  return true;
}

std::string tensorToNpy(const HostTensor& t) {
  char kind;
  int bytes;
  exactType(t.dtype, kind, bytes);
  bool widen = narrowFloat(t.dtype);
  if (widen) { kind = 'f'; bytes = 4; }
  std::string shape = "(";
  for (size_t d = 0; d < t.shape.size(); ++d) shape += (d ? ", " : "") + std::to_string(t.shape[d]);
  shape += t.shape.size() == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + (bytes == 1 ? '|' : '<') + kind + std::to_string(bytes) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // numpy pads the header with spaces and a newline so that the data starts 64-byte aligned.
  size_t total = kMagicBytes + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string file(kMagic, kMagicBytes);
  file += '\x01';
  file += '\x00';
  file += static_cast<char>(header.size() & 0xFF);
  file += static_cast<char>(header.size() >> 8);
  file += header;
  if (!widen) {
    file.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
    return file;
  }
  for (size_t i = 0; i < t.size(); ++i) {
    float v = static_cast<float>(t.get(i));
    char raw[4];
    std::memcpy(raw, &v, 4);
    file.append(raw, 4);
  }
  return file;
}

}  // namespace argus::interp

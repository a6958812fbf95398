// NumPy .npy reading and writing (runtime/interp/npy.h): the header versions,
// byte orders and orders numpy writes, the dtype conventions, and a clear
// message for every file that does not fit.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "runtime/interp/npy.h"

namespace argus::interp {
namespace {

// A .npy file as numpy writes it: magic, version, header length, header, data.
std::string npyFile(const std::string& header, const std::string& data, int major = 1) {
  std::string file = "\x93NUMPY";
  file += static_cast<char>(major);
  file += '\0';
  std::string padded = header + "\n";
  if (major == 1) {
    file += static_cast<char>(padded.size() & 0xFF);
    file += static_cast<char>(padded.size() >> 8);
  } else {
    for (int b = 0; b < 4; ++b) file += static_cast<char>((padded.size() >> (8 * b)) & 0xFF);
  }
  return file + padded + data;
}

std::string floats(std::initializer_list<float> values) {
  std::string out;
  for (float v : values) out.append(reinterpret_cast<const char*>(&v), 4);
  return out;
}

TEST(Npy, ReadsVersionOneFloat32) {
  NpyArray a;
  std::string error;
  ASSERT_TRUE(parseNpy(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                               floats({1, 2, 3, 4})), a, error)) << error;
  EXPECT_EQ(a.typeName(), "float32");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2}));
  HostTensor t;
  ASSERT_TRUE(npyToTensor(a, ir::DType::F32, t, error)) << error;
  EXPECT_EQ(t.get(3), 4.0);
}

TEST(Npy, ReadsVersionsTwoAndThreeAndScalarsOfRankZero) {
  for (int major : {2, 3}) {
    NpyArray a;
    std::string error;
    ASSERT_TRUE(parseNpy(npyFile("{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": (1,)}",
                                 std::string("\x07\0\0\0\0\0\0\0", 8), major), a, error)) << error;
    EXPECT_EQ(a.typeName(), "int64");
  }
  NpyArray scalar;
  std::string error;
  ASSERT_TRUE(parseNpy(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", floats({5})), scalar, error));
  EXPECT_TRUE(scalar.shape.empty());
}

TEST(Npy, BigEndianAndFortranOrderBecomeRowMajorLittleEndian) {
  // [[1, 2, 3], [4, 5, 6]] stored column by column, big-endian int16.
  std::string data;
  for (int v : {1, 4, 2, 5, 3, 6}) data += {static_cast<char>(0), static_cast<char>(v)};
  NpyArray a;
  std::string error;
  ASSERT_TRUE(parseNpy(npyFile("{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }", data), a, error)) << error;
  HostTensor t;
  ASSERT_TRUE(npyToTensor(a, ir::DType::I16, t, error)) << error;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.getInt(static_cast<size_t>(i)), i + 1) << i;
}

TEST(Npy, Bf16ReadsFloat32RoundedOrItsRawBits) {
  NpyArray f;
  std::string error;
  // 1 + 2^-9 is halfway between two bf16 values: rounds to even (1.0); 3.0 is exact.
  ASSERT_TRUE(parseNpy(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                               floats({1.0f + 1.0f / 512, 3.0f})), f, error));
  HostTensor t;
  ASSERT_TRUE(npyToTensor(f, ir::DType::BF16, t, error)) << error;
  EXPECT_EQ(t.get(0), 1.0);
  EXPECT_EQ(t.getBits(1), 0x4040u);
  NpyArray bits;
  ASSERT_TRUE(parseNpy(npyFile("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", std::string("\x40\x40", 2)),
                       bits, error));
  ASSERT_TRUE(npyToTensor(bits, ir::DType::BF16, t, error)) << error;
  EXPECT_EQ(t.get(0), 3.0);
  // float64 is neither: the message says what to save.
  NpyArray wide;
  ASSERT_TRUE(parseNpy(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }", ""), wide, error));
  EXPECT_FALSE(npyToTensor(wide, ir::DType::BF16, t, error));
  EXPECT_EQ(error, "holds float64 where the kernel's tensor is bf16: save float32 values (rounded to bf16 on "
                   "reading) or the raw bf16 bits as uint16");
}

TEST(Npy, MismatchedDtypesSayHowToConvert) {
  NpyArray a;
  std::string error;
  ASSERT_TRUE(parseNpy(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0')), a, error));
  HostTensor t;
  EXPECT_FALSE(npyToTensor(a, ir::DType::F32, t, error));
  EXPECT_EQ(error, "holds float64 where the kernel's tensor is f32: save it with .astype(numpy.float32)");
  EXPECT_FALSE(npyToTensor(a, ir::DType::Bool, t, error));
  EXPECT_EQ(error, "holds float64 where the kernel's tensor is bool: save it with .astype(numpy.bool_)");
  EXPECT_FALSE(npyToTensor(a, ir::DType::F16, t, error));
  EXPECT_EQ(error, "holds float64 where the kernel's tensor is f16: save it with .astype(numpy.float16)");
}

TEST(Npy, RejectsWhatItCannotRead) {
  NpyArray a;
  std::string error;
  EXPECT_FALSE(parseNpy("PK\x03\x04 not numpy", a, error));
  EXPECT_NE(error.find("not a .npy file"), std::string::npos) << error;
  EXPECT_FALSE(parseNpy(npyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0')), a, error));
  EXPECT_EQ(error.rfind("holds complex numbers (dtype '<c8')", 0), 0u) << error;
  EXPECT_FALSE(parseNpy(npyFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", floats({1})), a, error));
  EXPECT_NE(error.find("structured array"), std::string::npos) << error;
  EXPECT_FALSE(parseNpy(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", floats({1, 2})), a, error));
  EXPECT_EQ(error, "is truncated: 12 bytes of data expected for its shape and dtype, 8 found");
  EXPECT_FALSE(parseNpy(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", floats({1, 2})), a, error));
  EXPECT_EQ(error, "has extra bytes: 4 bytes of data expected for its shape and dtype, 8 found");
  // Without 'fortran_order' (numpy always writes it) the order is C.
  EXPECT_TRUE(parseNpy(npyFile("{'descr': '<f4', 'shape': (1,), }", floats({1})), a, error)) << error;
  EXPECT_FALSE(parseNpy(npyFile("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", floats({1})), a, error));
  EXPECT_NE(error.find("has a header numpy would not write"), std::string::npos) << error;
  std::string future = npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", floats({1}), 4);
  EXPECT_FALSE(parseNpy(future, a, error));
  EXPECT_EQ(error, "is .npy format version 4.0; this reader knows versions 1.0 to 3.0");
}

TEST(Npy, WritesWhatItReadsBackAlignedAsNumpyDoes) {
  for (ir::DType dtype : {ir::DType::F32, ir::DType::F64, ir::DType::F16, ir::DType::I8, ir::DType::U32,
                          ir::DType::I64, ir::DType::Bool, ir::DType::BF16, ir::DType::F8E4M3}) {
    HostTensor t = HostTensor::zeros(dtype, {2, 3});
    for (size_t i = 0; i < t.size(); ++i) t.set(i, dtype == ir::DType::Bool ? static_cast<double>(i % 2) : static_cast<double>(i));
    std::string file = tensorToNpy(t);
    size_t headerLength = static_cast<unsigned char>(file[8]) | static_cast<size_t>(static_cast<unsigned char>(file[9])) << 8;
    EXPECT_EQ((10 + headerLength) % 64, 0u) << ir::dtypeName(dtype);
    NpyArray a;
    std::string error;
    ASSERT_TRUE(parseNpy(file, a, error)) << ir::dtypeName(dtype) << ": " << error;
    EXPECT_EQ(a.typeName(), npyTypeNameFor(dtype));
    EXPECT_EQ(a.shape, t.shape);
    HostTensor back;
    ASSERT_TRUE(npyToTensor(a, dtype, back, error)) << ir::dtypeName(dtype) << ": " << error;
    EXPECT_EQ(back.bytes, t.bytes) << ir::dtypeName(dtype);
  }
  EXPECT_EQ(npyTypeNameFor(ir::DType::BF16), "float32");
}

}  // namespace
}  // namespace argus::interp

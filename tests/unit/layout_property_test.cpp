// Property tests of the layout algebra over many random small layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include "layout/algebra.h"
#include "layout/swizzle.h"

namespace argus::layout {
namespace {

// Random layout of depth <= 2 with extents 1..4 and strides 0..12.
Layout randomLayout(std::mt19937& rng, int maxModes = 3) {
  std::uniform_int_distribution<int> modes(1, maxModes), extent(1, 4), stride(0, 12), coin(0, 3);
  auto leafOrNested = [&](IntTuple& shape, IntTuple& strides) {
    if (coin(rng) == 0) {
      shape = IntTuple::tuple({extent(rng), extent(rng)});
      strides = IntTuple::tuple({stride(rng), stride(rng)});
    } else {
      shape = extent(rng);
      strides = stride(rng);
    }
  };
  int count = modes(rng);
  if (count == 1) {
    IntTuple s, d;
    leafOrNested(s, d);
    return Layout(s, d);
  }
  std::vector<IntTuple> shapes(count), strides(count);
  for (int i = 0; i < count; ++i) leafOrNested(shapes[i], strides[i]);
  return Layout(IntTuple::tuple(shapes), IntTuple::tuple(strides));
}

// Random injective, complementable layout: a permutation of compact modes with gaps.
Layout randomInjective(std::mt19937& rng, int64_t& span) {
  std::uniform_int_distribution<int> modes(1, 3), extent(2, 4), gap(1, 3);
  int count = modes(rng);
  std::vector<int64_t> shapes(count), strides(count);
  std::vector<int> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  int64_t current = 1;
  for (int i : order) {
    current *= gap(rng);
    shapes[i] = extent(rng);
    strides[i] = current;
    current *= shapes[i];
  }
  span = current;
  if (count == 1) return Layout(shapes[0], strides[0]);
  return Layout(IntTuple::tuple({shapes.begin(), shapes.end()}), IntTuple::tuple({strides.begin(), strides.end()}));
}

bool injective(const Layout& l) {
  std::set<int64_t> seen;
  for (int64_t i = 0; i < l.size(); ++i)
    if (!seen.insert(l(i)).second) return false;
  return true;
}

TEST(LayoutProperties, CoalescePreservesTheFunction) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 2000; ++trial) {
    Layout l = randomLayout(rng);
    Layout c = coalesce(l);
    ASSERT_EQ(c.size(), l.size()) << toString(l);
    ASSERT_LE(c.depth(), 1) << toString(l);
    for (int64_t i = 0; i < l.size(); ++i) ASSERT_EQ(c(i), l(i)) << toString(l) << " -> " << toString(c);
    Layout byMode = coalesceModes(l);
    ASSERT_EQ(byMode.rank(), l.rank());
    for (int64_t i = 0; i < l.size(); ++i) ASSERT_EQ(byMode(i), l(i)) << toString(l);
    Layout f = flatten(l);
    for (int64_t i = 0; i < l.size(); ++i) ASSERT_EQ(f(i), l(i));
  }
}

TEST(LayoutProperties, SizeAndCosize) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 1000; ++trial) {
    Layout l = randomLayout(rng);
    int64_t highest = 0;
    for (int64_t i = 0; i < l.size(); ++i) highest = std::max(highest, l(i));
    ASSERT_EQ(l.cosize(), highest + 1) << toString(l);
    ASSERT_EQ(l.size(), product(l.shape()));
    // Natural coordinates round-trip through the index.
    for (int64_t i = 0; i < l.size(); ++i) ASSERT_EQ(*l(l.coordinateOf(i)), l(i));
  }
}

TEST(LayoutProperties, CompositionIsExactOrAnError) {
  std::mt19937 rng(3);
  int composed = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Layout a = randomLayout(rng), b = randomLayout(rng, 2);
    Result<Layout> r = composition(a, b);
    if (!r) continue;
    ASSERT_EQ(r->size(), b.size());
    // Composition is defined on B's image inside A's domain (beyond it, CuTe's
    // result follows the coalesced A's unbounded last mode, not A's).
    bool insideDomain = true;
    for (int64_t i = 0; i < b.size(); ++i) insideDomain = insideDomain && b(i) < a.size();
    if (!insideDomain) continue;
    ++composed;
    for (int64_t i = 0; i < b.size(); ++i)
      ASSERT_EQ((*r)(i), a(b(i))) << toString(a) << " o " << toString(b) << " = " << toString(*r);
  }
  EXPECT_GT(composed, 300);
}

TEST(LayoutProperties, RightInverseIsIdentityOnTheImage) {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 2000; ++trial) {
    Layout l = randomLayout(rng);
    Layout inverse = rightInverse(l);
    for (int64_t i = 0; i < inverse.size(); ++i) ASSERT_EQ(l(inverse(i)), i) << toString(l) << " " << toString(inverse);
    Result<Layout> identity = composition(l, inverse);
    ASSERT_TRUE(identity.ok()) << toString(l);
    for (int64_t i = 0; i < inverse.size(); ++i) ASSERT_EQ((*identity)(i), i);
  }
}

TEST(LayoutProperties, LeftInverseIsIdentityOnTheDomain) {
  std::mt19937 rng(5);
  int inverted = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    int64_t span = 0;
    Layout l = trial % 2 ? randomInjective(rng, span) : randomLayout(rng);
    if (!injective(l)) continue;
    Result<Layout> inverse = leftInverse(l);
    if (!inverse) continue;  // strides that are not multiples of each other
    ++inverted;
    for (int64_t i = 0; i < l.size(); ++i) ASSERT_EQ((*inverse)(l(i)), i) << toString(l) << " " << toString(*inverse);
  }
  EXPECT_GT(inverted, 800);
}

TEST(LayoutProperties, ComplementIsDisjointAndFillsTheCodomain) {
  std::mt19937 rng(6);
  for (int trial = 0; trial < 2000; ++trial) {
    int64_t span = 0;
    Layout l = randomInjective(rng, span);
    int64_t cotarget = span * (1 + trial % 3);
    Result<Layout> c = complement(l, cotarget);
    ASSERT_TRUE(c.ok()) << toString(l);
    // (L, complement) is a bijection onto [0, cotarget).
    Layout both = concatenate({l, *c});
    ASSERT_EQ(both.size(), cotarget) << toString(l) << " " << toString(*c);
    std::set<int64_t> image;
    for (int64_t i = 0; i < both.size(); ++i) image.insert(both(i));
    ASSERT_EQ(static_cast<int64_t>(image.size()), cotarget) << toString(l) << " " << toString(*c);
    ASSERT_EQ(*image.rbegin(), cotarget - 1);
    // Ordered: strides of the complement increase.
    std::vector<int64_t> strides = leaves(c->stride());
    ASSERT_TRUE(std::is_sorted(strides.begin(), strides.end()));
  }
}

TEST(LayoutProperties, DivideAndProductKeepTheElements) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 1000; ++trial) {
    int64_t span = 0;
    Layout tile = randomInjective(rng, span);
    Layout whole = Layout(span * 2, 1);
    Result<Layout> divided = logicalDivide(whole, Tiler::whole(tile));
    ASSERT_TRUE(divided.ok()) << toString(tile);
    // The first mode is the tile itself, and every offset appears exactly once.
    for (int64_t i = 0; i < tile.size(); ++i) ASSERT_EQ(divided->mode(0)(i), tile(i));
    std::set<int64_t> offsets;
    for (int64_t i = 0; i < divided->size(); ++i) offsets.insert((*divided)(i));
    ASSERT_EQ(static_cast<int64_t>(offsets.size()), divided->size());
    Result<Layout> product = logicalProduct(tile, Tiler::whole(Layout(2, 1)));
    ASSERT_TRUE(product.ok());
    ASSERT_EQ(product->size(), tile.size() * 2);
    ASSERT_TRUE(injective(*product)) << toString(*product);
  }
}

TEST(LayoutProperties, IndexTermsReproduceTheFunction) {
  std::mt19937 rng(8);
  for (int trial = 0; trial < 1000; ++trial) {
    Layout l = randomLayout(rng);
    std::vector<IndexTerm> terms = indexTerms(l);
    for (int64_t i = 0; i < 2 * l.size(); ++i) {  // past size() too: the last mode is unbounded
      int64_t offset = 0;
      for (const IndexTerm& t : terms) offset += (t.modulus ? (i / t.divisor) % t.modulus : i / t.divisor) * t.stride;
      ASSERT_EQ(offset, l(i)) << toString(l) << " at " << i;
    }
  }
}

TEST(LayoutProperties, SwizzleIsAnInvolutiveBijection) {
  for (int bits = 0; bits <= 3; ++bits)
    for (int base = 0; base <= 4; ++base)
      for (int shift : {-4, -3, 3, 4, 5}) {
        Result<Swizzle> sw = Swizzle::make(bits, base, shift);
        if (std::abs(shift) < bits) {
          EXPECT_FALSE(sw.ok());
          continue;
        }
        ASSERT_TRUE(sw.ok());
        int64_t domain = int64_t{1} << (bits + base + std::abs(shift));
        std::set<int64_t> image;
        for (int64_t x = 0; x < domain; ++x) {
          int64_t y = (*sw)(x);
          ASSERT_LT(y, domain);
          ASSERT_EQ((*sw)(y), x);  // its own inverse
          image.insert(y);
        }
        ASSERT_EQ(static_cast<int64_t>(image.size()), domain);
      }
}

TEST(Swizzle, MatchesCuTeBitFields) {
  Swizzle sw = *Swizzle::make(3, 3, 3);  // Sw<3,3,3>: bits [6,9) XORed into [3,6)
  EXPECT_EQ(sw.yyyMask(), 0b111000000);
  EXPECT_EQ(sw.zzzMask(), 0b000111000);
  EXPECT_EQ(sw(0), 0);
  EXPECT_EQ(sw(64), 64 + 8);           // row 1 of a 64-wide tile: chunk 0 -> chunk 1
  EXPECT_EQ(sw(64 * 3 + 8), 192 + 16);  // row 3, chunk 1 -> chunk 1 ^ 3 = 2
  EXPECT_EQ(toString(sw), "Sw<3,3,3>");
  ComposedLayout composed{sw, 0, Layout(IntTuple::tuple({8, 64}), IntTuple::tuple({64, 1}))};
  EXPECT_EQ(toString(composed), "Sw<3,3,3> o 0 o (8,64):(64,1)");
  // Element (row 1, col 0) of the swizzled (8,64) tile: offset 64 -> 72.
  EXPECT_EQ(composed(1), 72);
}

}  // namespace
}  // namespace argus::layout

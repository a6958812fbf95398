// The speed plot of a run, drawn into an RGB raster and written with libpng:
// no plotting library, so the axes, ticks and their digits are drawn here.
#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <memory>
#include <vector>

#include "agent/report.h"

namespace argus::agent {

namespace {

struct Color {
  uint8_t r, g, b;
};
constexpr Color kWhite{255, 255, 255}, kBlack{0, 0, 0}, kGrey{170, 170, 170}, kBlue{31, 119, 180},
    kRed{214, 39, 40}, kGreen{44, 160, 44};

class Canvas {
 public:
  Canvas(int width, int height) : width_(width), height_(height), pixels_(size_t(width) * height * 3, 255) {}
  int width() const { return width_; }
  int height() const { return height_; }

  void set(int x, int y, Color c) {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
    uint8_t* p = &pixels_[(size_t(y) * width_ + x) * 3];
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
  }
  // Bresenham, `thickness` pixels wide; `dash` > 0 draws dash-on/dash-off.
  void line(int x0, int y0, int x1, int y1, Color c, int thickness = 1, int dash = 0) {
    int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, err = dx + dy, step = 0;
    while (true) {
      if (dash == 0 || (step / dash) % 2 == 0) dot(x0, y0, c, thickness);
      ++step;
      if (x0 == x1 && y0 == y1) break;
      int e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        x0 += sx;
      }
      if (e2 <= dx) {
        err += dx;
        y0 += sy;
      }
    }
  }
  void dot(int x, int y, Color c, int thickness) {
    int lo = -(thickness - 1) / 2, hi = thickness / 2;
    for (int oy = lo; oy <= hi; ++oy)
      for (int ox = lo; ox <= hi; ++ox) set(x + ox, y + oy, c);
  }
  void disc(int cx, int cy, int radius, Color c) {
    for (int y = -radius; y <= radius; ++y)
      for (int x = -radius; x <= radius; ++x)
        if (x * x + y * y <= radius * radius) set(cx + x, cy + y, c);
  }
  void cross(int cx, int cy, int half, Color c) {
    line(cx - half, cy - half, cx + half, cy + half, c, 2);
    line(cx - half, cy + half, cx + half, cy - half, c, 2);
  }
  // Digits, '.', '-' and 'x' from a 3x5 font, `scale` pixels per font pixel.
  void text(int x, int y, const std::string& s, Color c, int scale = 2) {
    for (char ch : s) {
      const uint8_t* rows = glyph(ch);
      for (int row = 0; rows && row < 5; ++row)
        for (int col = 0; col < 3; ++col)
          if (rows[row] & (4 >> col))
            for (int py = 0; py < scale; ++py)
              for (int px = 0; px < scale; ++px) set(x + col * scale + px, y + row * scale + py, c);
      x += 4 * scale;
    }
  }
  static int textWidth(const std::string& s, int scale = 2) { return static_cast<int>(s.size()) * 4 * scale - scale; }

  bool writePng(const std::string& path, std::string& error) const {
    FILE* file = std::fopen(path.c_str(), "wb");
    if (!file) {
      error = "cannot write " + path;
      return false;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png ? png_create_info_struct(png) : nullptr;
    if (!png || !info) {
      png_destroy_write_struct(&png, &info);
      std::fclose(file);
      error = "libpng could not start";
      return false;
    }
    // libpng reports errors by longjmp; nothing with a destructor lives
    // between here and the end of the write.
    if (setjmp(png_jmpbuf(png))) {
      png_destroy_write_struct(&png, &info);
      std::fclose(file);
      error = "libpng failed writing " + path;
      return false;
    }
    png_init_io(png, file);
    png_set_IHDR(png, info, width_, height_, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < height_; ++y)
      png_write_row(png, const_cast<png_bytep>(&pixels_[size_t(y) * width_ * 3]));
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    if (std::fclose(file) != 0) {
      error = "cannot write " + path;
      return false;
    }
    return true;
  }

 private:
  static const uint8_t* glyph(char c) {
    static const uint8_t digits[10][5] = {{7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7},
                                          {5, 5, 7, 1, 1}, {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1},
                                          {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7}};
    static const uint8_t point[5] = {0, 0, 0, 0, 2}, minus[5] = {0, 0, 7, 0, 0}, times[5] = {0, 5, 2, 5, 0};
    if (c >= '0' && c <= '9') return digits[c - '0'];
    if (c == '.') return point;
    if (c == '-') return minus;
    if (c == 'x') return times;
    return nullptr;
  }

  int width_, height_;
  std::vector<uint8_t> pixels_;
};

// 1, 2 or 5 times a power of ten, so that about `target` steps span `range`.
double niceStep(double range, int target) {
  double raw = range / std::max(1, target);
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

std::string tickLabel(double value, double step) {
  char buffer[32];
  int digits = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

}  // namespace

bool writeSpeedPlot(const LoopResult& result, const std::string& path, std::string& error) {
  constexpr int kWidth = 800, kHeight = 480, kLeft = 70, kRight = 20, kTop = 20, kBottom = 50;
  Canvas canvas(kWidth, kHeight);
  const int plotWidth = kWidth - kLeft - kRight, plotHeight = kHeight - kTop - kBottom;
  const int count = std::max<int>(2, static_cast<int>(result.candidates.size()));

  double top = 1.2;
  for (const auto& record : result.candidates) {
    if (record.speedup && std::isfinite(*record.speedup)) top = std::max(top, *record.speedup * 1.1);
  }
  const double yStep = niceStep(top, 6);
  top = std::ceil(top / yStep - 1e-9) * yStep;

  auto xOf = [&](double index) { return kLeft + static_cast<int>(std::lround(index * plotWidth / (count - 1))); };
  auto yOf = [&](double speedup) {
    double clamped = std::clamp(speedup, 0.0, top);
    return kTop + plotHeight - static_cast<int>(std::lround(clamped / top * plotHeight));
  };

  // Axes, ticks and their labels; the dashed line marks the baseline's speed.
  canvas.line(kLeft, kTop, kLeft, kTop + plotHeight, kBlack, 2);
  canvas.line(kLeft, kTop + plotHeight, kLeft + plotWidth, kTop + plotHeight, kBlack, 2);
  for (double y = 0; y <= top + 1e-9; y += yStep) {
    int py = yOf(y);
    canvas.line(kLeft - 6, py, kLeft, py, kBlack, 1);
    std::string label = tickLabel(y, yStep);
    canvas.text(kLeft - 10 - Canvas::textWidth(label), py - 5, label, kBlack);
  }
  canvas.text(6, kTop, "x", kBlack);  // the y axis is a speedup
  const double xStep = std::max(1.0, niceStep(count - 1, 10));
  for (double x = 0; x <= count - 1 + 1e-9; x += xStep) {
    int px = xOf(x);
    canvas.line(px, kTop + plotHeight, px, kTop + plotHeight + 6, kBlack, 1);
    std::string label = tickLabel(x, xStep);
    canvas.text(px - Canvas::textWidth(label) / 2, kTop + plotHeight + 12, label, kBlack);
  }
  if (result.baselineMs()) canvas.line(kLeft, yOf(1.0), kLeft + plotWidth, yOf(1.0), kGrey, 1, 6);

  // The incumbent as a step line: flat until the next improvement.
  std::optional<std::pair<int, int>> previous;
  for (const auto& record : result.candidates) {
    if (!record.incumbentSpeedup) continue;
    int px = xOf(record.index), py = yOf(*record.incumbentSpeedup);
    if (previous) {
      canvas.line(previous->first, previous->second, px, previous->second, kGreen, 2);
      canvas.line(px, previous->second, px, py, kGreen, 2);
    }
    previous = {px, py};
  }
  if (previous) canvas.line(previous->first, previous->second, xOf(count - 1), previous->second, kGreen, 2);

  for (const auto& record : result.candidates) {
    int px = xOf(record.index);
    if (record.evaluation.verdict != Verdict::Ok) {
      canvas.cross(px, kTop + plotHeight - 8, 5, kRed);
    } else if (record.speedup) {
      canvas.disc(px, yOf(*record.speedup), 4, kBlue);
    }
  }
  return canvas.writePng(path, error);
}

}  // namespace argus::agent

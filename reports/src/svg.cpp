// SPDX-License-Identifier: GPL-2.0-or-later
#include "svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "format_util.h"

namespace lockscope::reports::svg {

namespace {
std::string num(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

std::string rgb(double r, double g, double b)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "rgb(%d,%d,%d)", int(std::lround(r)), int(std::lround(g)), int(std::lround(b)));
    return buf;
}
} // namespace

std::string histogram(const Log2Hist& before, const Log2Hist* after, const std::string& title)
{
    const auto [lo, hi] = fmt::bucketRange(before, after);
    const double W = 520, H = 150, left = 50, bottom = 30, top = 18;
    std::string s = "<svg class=\"hist\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" +
                    num(H) + "\" viewBox=\"0 0 " + num(W) + " " + num(H) + "\" role=\"img\"><title>" +
                    fmt::htmlEscape(title) + "</title>";
    s += "<text x=\"" + num(left) + "\" y=\"12\" class=\"ht\">" + fmt::htmlEscape(title) + "</text>";
    if (lo > hi) {
        s += "<text x=\"" + num(left) + "\" y=\"" + num(H / 2) + "\">no events</text></svg>";
        return s;
    }
    const unsigned n = hi - lo + 1;
    const double plotW = W - left - 10, plotH = H - bottom - top;
    const double bw = plotW / n;
    const Log2Hist* sides[2] = {&before, after};
    const char* colors[2] = {after ? "rgba(40,90,220,0.55)" : "rgba(230,110,40,0.85)", "rgba(220,40,40,0.55)"};
    for (int mode = 0; mode < 2; ++mode) {
        double peak = 0;
        for (const Log2Hist* h : sides) {
            if (!h)
                continue;
            for (unsigned i = lo; i <= hi; ++i) {
                const double v = mode == 0 ? double(h->bucket(i))
                                           : (h->count() ? double(h->bucket(i)) / double(h->count()) : 0.0);
                peak = std::max(peak, v);
            }
        }
        s += std::string("<g class=\"") + (mode == 0 ? "abs" : "norm") + "\">";
        for (int side = 0; side < 2; ++side) {
            const Log2Hist* h = sides[side];
            if (!h)
                continue;
            for (unsigned i = lo; i <= hi; ++i) {
                const uint64_t c = h->bucket(i);
                if (!c)
                    continue;
                const double v = mode == 0 ? double(c) : double(c) / double(h->count());
                const double bh = peak > 0 ? v / peak * plotH : 0;
                const double x = left + (i - lo) * bw + (after ? side * bw * 0.15 : 0);
                s += "<rect x=\"" + num(x) + "\" y=\"" + num(top + plotH - bh) + "\" width=\"" +
                     num(std::max(1.0, bw * (after ? 0.8 : 0.9))) + "\" height=\"" + num(bh) + "\" fill=\"" +
                     colors[side] + "\"><title>" + (after ? (side ? "after " : "before ") : "") + "[" +
                     std::to_string(Log2Hist::bucketLow(i)) + ", " + std::to_string(Log2Hist::bucketHigh(i)) +
                     "] ns: " + std::to_string(c) + " (" + fmt::percent(double(c) / double(h->count())) +
                     ")</title></rect>";
            }
        }
        s += "<text x=\"4\" y=\"" + num(top + 8) + "\" class=\"ax\">" +
             (mode == 0 ? fmt::number(peak) : fmt::percent(peak)) + "</text></g>";
    }
    s += "<line x1=\"" + num(left) + "\" y1=\"" + num(top + plotH) + "\" x2=\"" + num(W - 10) + "\" y2=\"" +
         num(top + plotH) + "\" stroke=\"#444\"/>";
    const unsigned step = std::max(1u, n / 10);
    for (unsigned i = lo; i <= hi; i += step)
        s += "<text x=\"" + num(left + (i - lo) * bw) + "\" y=\"" + num(H - bottom + 14) + "\" class=\"ax\">" +
             fmt::bucketLabel(i) + "</text>";
    s += "<text x=\"" + num(W - 60) + "\" y=\"" + num(H - 2) + "\" class=\"ax\">(log2)</text>";
    if (after)
        s += "<rect x=\"" + num(W - 150) + "\" y=\"4\" width=\"10\" height=\"10\" fill=\"" + colors[0] +
             "\"/><text x=\"" + num(W - 136) + "\" y=\"13\" class=\"ax\">before</text><rect x=\"" + num(W - 90) +
             "\" y=\"4\" width=\"10\" height=\"10\" fill=\"" + colors[1] + "\"/><text x=\"" + num(W - 76) +
             "\" y=\"13\" class=\"ax\">after</text>";
    return s + "</svg>";
}

constexpr double kFlameWidth = 1200;

bool flameFrameDrawn(double weight, double root)
{
    return weight / root * kFlameWidth >= 0.5;
}

std::string flameGraph(const std::vector<FlameNode>& nodes, bool diff, const std::string& title)
{
    const double W = kFlameWidth, rowH = 17;
    if (nodes.empty() || nodes[0].before + nodes[0].after <= 0)
        return "<p class=\"muted\">" + fmt::htmlEscape(title) + ": no call-path data.</p>";
    const double rootW = nodes[0].before + nodes[0].after;
    struct Box {
        uint32_t id;
        unsigned depth;
        double x, w;
    };
    std::vector<Box> boxes;
    unsigned maxDepth = 0;
    std::function<void(uint32_t, unsigned, double)> layout = [&](uint32_t id, unsigned depth, double x) {
        const FlameNode& n = nodes[id];
        const double w = (n.before + n.after) / rootW * W;
        if (!flameFrameDrawn(n.before + n.after, rootW) || depth > 80)
            return;
        boxes.push_back({id, depth, x, w});
        maxDepth = std::max(maxDepth, depth);
        std::vector<uint32_t> kids = n.children;
        std::sort(kids.begin(), kids.end(), [&](uint32_t a, uint32_t b) { return nodes[a].label < nodes[b].label; });
        double cx = x;
        for (uint32_t c : kids) {
            layout(c, depth + 1, cx);
            cx += (nodes[c].before + nodes[c].after) / rootW * W;
        }
    };
    layout(0, 0, 0);
    const double H = (maxDepth + 1) * rowH + 24;
    std::string s = "<svg class=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" width=\"100%\" viewBox=\"0 0 " +
                    num(W) + " " + num(H) + "\" preserveAspectRatio=\"xMinYMin meet\" role=\"img\"><title>" +
                    fmt::htmlEscape(title) + "</title>";
    for (const Box& b : boxes) {
        const FlameNode& n = nodes[b.id];
        std::string fill;
        if (diff) {
            const double t = (n.after - n.before) / (n.after + n.before);  // -1 (gone) .. +1 (new)
            fill = t >= 0 ? rgb(245 - 25 * t, 245 - 205 * t, 245 - 205 * t) : rgb(245 + 205 * t, 245 + 165 * t, 245 + 25 * t);
        } else {
            const size_t h = std::hash<std::string>{}(n.label);
            fill = rgb(205 + double(h % 50), 80 + double((h >> 8) % 130), 40 + double((h >> 16) % 40));
        }
        const double y = H - 24 - (b.depth + 1) * rowH;
        std::string tip = b.id == 0 ? std::string("all") : n.label;
        if (diff)
            tip += ": before " + fmt::duration(n.before) + ", after " + fmt::duration(n.after) + " (" +
                   fmt::pct(Delta{n.before, n.after}) + ")";
        else
            tip += ": " + fmt::duration(n.before) + " (" + fmt::percent(n.before * 2 / rootW) + ")";
        s += "<g><title>" + fmt::htmlEscape(tip) + "</title><rect x=\"" + num(b.x) + "\" y=\"" + num(y) +
             "\" width=\"" + num(b.w) + "\" height=\"" + num(rowH - 1) + "\" fill=\"" + fill +
             "\" rx=\"2\"/>";
        const size_t chars = size_t(b.w / 7);
        if (chars >= 4)
            s += "<text x=\"" + num(b.x + 3) + "\" y=\"" + num(y + rowH - 5) + "\">" +
                 fmt::htmlEscape(fmt::truncate(b.id == 0 ? std::string("all") : n.label, chars)) + "</text>";
        s += "</g>";
    }
    if (diff)
        s += "<text x=\"4\" y=\"" + num(H - 6) +
             "\" class=\"ax\">width: before + after wait; red: gained wait, blue: lost wait</text>";
    return s + "</svg>";
}

std::string scalingChart(const ScalingChart& chart)
{
    const double W = 560, H = 300, left = 70, bottom = 40, top = 24, right = 120;
    double xmax = 0, ymax = 0, xmin = 1e300;
    for (const auto& s : chart.series)
        for (const auto& p : s.points) {
            xmax = std::max(xmax, p.x);
            xmin = std::min(xmin, p.x);
            ymax = std::max(ymax, p.y);
        }
    std::string out = "<svg class=\"scaling\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) +
                      "\" height=\"" + num(H) + "\" role=\"img\"><title>" + fmt::htmlEscape(chart.title) +
                      "</title><text x=\"" + num(left) + "\" y=\"14\" class=\"ht\">" + fmt::htmlEscape(chart.title) +
                      "</text>";
    if (ymax <= 0 || xmax <= xmin)
        xmin = 0;
    if (ymax <= 0 || xmax <= 0)
        return out + "<text x=\"" + num(left) + "\" y=\"" + num(H / 2) + "\">no data</text></svg>";
    const double pw = W - left - right, ph = H - top - bottom;
    auto X = [&](double x) { return left + (xmax > xmin ? (x - xmin) / (xmax - xmin) : 0.5) * pw; };
    auto Y = [&](double y) { return top + ph - y / ymax * ph; };
    out += "<line x1=\"" + num(left) + "\" y1=\"" + num(top + ph) + "\" x2=\"" + num(left + pw) + "\" y2=\"" +
           num(top + ph) + "\" stroke=\"#444\"/><line x1=\"" + num(left) + "\" y1=\"" + num(top) + "\" x2=\"" +
           num(left) + "\" y2=\"" + num(top + ph) + "\" stroke=\"#444\"/>";
    out += "<text x=\"2\" y=\"" + num(top + 8) + "\" class=\"ax\">" + fmt::number(std::round(ymax)) + "</text>";
    out += "<text x=\"2\" y=\"" + num(top + ph) + "\" class=\"ax\">0</text>";
    out += "<text x=\"" + num(left) + "\" y=\"" + num(H - 6) + "\" class=\"ax\">" + fmt::htmlEscape(chart.x_label) +
           " " + fmt::number(xmin) + " … " + fmt::number(xmax) + "; y: " + fmt::htmlEscape(chart.y_label) + "</text>";
    static const char* kColors[] = {"#2a5bd7", "#d62f2f", "#2e9e44", "#9b4dca", "#e08a00", "#00a0a0"};
    for (size_t i = 0; i < chart.series.size(); ++i) {
        const auto& s = chart.series[i];
        const char* color = kColors[i % 6];
        std::string pts;
        for (const auto& p : s.points)
            pts += num(X(p.x)) + "," + num(Y(p.y)) + " ";
        out += "<polyline fill=\"none\" stroke=\"" + std::string(color) + "\" stroke-width=\"2\" points=\"" + pts + "\"/>";
        for (const auto& p : s.points)
            out += "<circle cx=\"" + num(X(p.x)) + "\" cy=\"" + num(Y(p.y)) + "\" r=\"3\" fill=\"" + color +
                   "\"><title>" + fmt::htmlEscape(s.name) + ": " + fmt::number(p.x) + " → " + fmt::number(p.y) +
                   "</title></circle>";
        out += "<text x=\"" + num(left + pw + 8) + "\" y=\"" + num(top + 14 + 16 * double(i)) + "\" fill=\"" + color +
               "\">" + fmt::htmlEscape(s.name) + "</text>";
    }
    return out + "</svg>";
}

} // namespace lockscope::reports::svg

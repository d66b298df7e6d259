// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/units.h"

#include <cmath>
#include <string>

#include <QTextDocument>

#include "lockscope/capture/histogram.h"

namespace lockscope::gui {

namespace {
QString threeDigits(double v, const char* unit)
{
    const int decimals = v >= 100.0 ? 0 : v >= 10.0 ? 1 : 2;
    return QString::number(v, 'f', decimals) + QLatin1Char(' ') + QString::fromUtf8(unit);
}
} // namespace

QString formatNs(uint64_t ns)
{
    const auto v = static_cast<double>(ns);
    if (ns < 1000)
        return QString::number(ns) + QStringLiteral(" ns");
    if (v < 1e6)
        return threeDigits(v / 1e3, "µs");
    if (v < 1e9)
        return threeDigits(v / 1e6, "ms");
    return threeDigits(v / 1e9, "s");
}

QString formatCount(uint64_t n)
{
    // Thousands separators make counts of very different sizes readable.
    QString s = QString::number(n);
    for (qsizetype i = s.size() - 3; i > 0; i -= 3)
        s.insert(i, QChar(0x202F));
    return s;
}

QString formatPercent(double fraction)
{
    if (!std::isfinite(fraction))
        return QStringLiteral("–");
    return QString::number(fraction * 100.0, 'f', 1) + QStringLiteral(" %");
}

QString bucketLabel(unsigned bucket)
{
    const uint64_t low = Log2Hist::bucketLow(bucket);
    if (low < 1000)
        return QString::number(low) + QStringLiteral("ns");
    const char* units[] = {"µs", "ms", "s"};
    double v = static_cast<double>(low) / 1e3;
    int u = 0;
    while (v >= 1000.0 && u < 2) {
        v /= 1000.0;
        ++u;
    }
    return QString::number(v, 'g', 3) + QString::fromUtf8(units[u]);
}

QString fromStd(const std::string& s)
{
    return QString::fromStdString(s);
}

QString plainToolTip(const QString& text)
{
    return Qt::convertFromPlainText(text, Qt::WhiteSpacePre);
}

} // namespace lockscope::gui

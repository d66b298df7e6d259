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

QString formatFigure(double v, const std::string& unit)
{
    if (unit == "ns")
        return formatNs(static_cast<uint64_t>(std::max(0.0, v)));
    if (unit == "ns/s")
        return formatNs(static_cast<uint64_t>(std::max(0.0, v))) + QStringLiteral("/s");
    if (unit == "%")
        return QString::number(v, 'f', 2) + QStringLiteral(" %");
    QString s = std::fabs(v) >= 100 || v == std::floor(v) ? formatCount(static_cast<uint64_t>(std::llround(std::fabs(v))))
                                                          : QString::number(std::fabs(v), 'g', 4);
    if (v < 0)
        s.prepend(QChar(0x2212));
    if (unit == "/s")
        return s + QStringLiteral("/s");
    return unit.empty() ? s : s + QLatin1Char(' ') + QString::fromStdString(unit);
}

QString judgementText(const reports::Judgement& j)
{
    QString t = QString::fromUtf8(reports::toString(j.verdict));
    if (j.test != reports::TestKind::None && j.p_value)
        t += QStringLiteral(" — %1, p = %2").arg(QString::fromUtf8(reports::toString(j.test)),
                                                 QString::number(*j.p_value, 'g', 3));
    if (!j.basis.empty())
        t += QStringLiteral(" (on %1)").arg(QString::fromStdString(j.basis));
    if (j.below_effect_floor)
        t += QStringLiteral("\nthe test passed alpha, but the change is under the effect floor");
    if (!j.reason.empty())
        t += QStringLiteral("\n") + QString::fromStdString(j.reason);
    return t;
}

QString plainToolTip(const QString& text)
{
    return Qt::convertFromPlainText(text, Qt::WhiteSpacePre);
}

} // namespace lockscope::gui

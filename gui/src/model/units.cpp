// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/units.h"

#include <cmath>
#include <string>

#include <QTextDocument>

#include "lockscope/capture/units.h"

namespace lockscope::gui {

QString formatNs(uint64_t ns)
{
    return QString::fromStdString(units::duration(static_cast<double>(ns)));
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
    return QString::fromStdString(units::bucketLabel(bucket));
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
    if (unit == "ns/op")
        return formatNs(static_cast<uint64_t>(std::max(0.0, v))) + QStringLiteral("/op");
    if (unit == "/op")
        return QString::number(v, 'g', 3) + QStringLiteral("/op");
    if (unit == "/1k ops")
        return QString::number(v, 'g', 3) + QStringLiteral("/1k ops");
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

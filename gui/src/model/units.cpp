// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/units.h"

#include <string>

#include <QTextDocument>

#include "lockscope/capture/units.h"
#include "lockscope/reports/format.h"

namespace lockscope::gui {

QString formatNs(uint64_t ns)
{
    return QString::fromStdString(units::duration(static_cast<double>(ns)));
}

QString formatSeconds(double s)
{
    return fromStd(reports::fmt::fixed(s, 2, reports::fmt::kDisplay)) + QStringLiteral(" s");
}

QString formatCount(uint64_t n)
{
    // Thousands separators make counts of very different sizes readable.
    return fromStd(reports::fmt::grouped(n, reports::fmt::kDisplay.thousands));
}

QString formatPercent(double fraction)
{
    return fromStd(reports::fmt::percent(fraction, 1, reports::fmt::kDisplay));
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
    return fromStd(reports::fmt::figureValue(v, unit, reports::fmt::kDisplay));
}

QString formatP(double p, int digits)
{
    return p > 0.0 ? QString::number(p, 'g', digits) : QStringLiteral("<1e-300");
}

QString judgementText(const reports::Judgement& j)
{
    QString t = QString::fromUtf8(reports::toString(j.verdict));
    if (j.test != reports::TestKind::None && j.p_value)
        t += QStringLiteral(" — %1, p = %2").arg(QString::fromUtf8(reports::toString(j.test)), formatP(*j.p_value));
    if (!j.basis.empty())
        t += QStringLiteral(" (on %1)").arg(QString::fromStdString(reports::fmt::figureName(j.basis)));
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

// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/summaryview.h"

#include <algorithm>
#include <cmath>

#include <QStringList>

#include "lockscope/capture/virtualization.h"
#include "lockscope/reports/format.h"
#include "model/units.h"

namespace lockscope::gui {

namespace {
QString esc(const std::string& s)
{
    return QString::fromStdString(s).toHtmlEscaped();
}

QString joined(const std::vector<std::string>& parts)
{
    QStringList l;
    for (const auto& p : parts)
        l << QString::fromStdString(p);
    return l.join(QLatin1Char(' ')).toHtmlEscaped();
}

QString row(const QString& name, const QString& value)
{
    return QStringLiteral("<tr><th align=left>%1</th><td>%2</td></tr>").arg(name, value);
}

QString row3(const QString& name, const QString& a, const QString& b)
{
    const QString style = a == b ? QString() : QStringLiteral(" style='background:#fff3cd'");
    return QStringLiteral("<tr%4><th align=left>%1</th><td>%2</td><td>%3</td></tr>").arg(name, a, b, style);
}

QString workloadStatus(const Workload& w)
{
    if (w.command.empty())
        return QStringLiteral("none (system-wide capture)");
    QString s = joined(w.command);
    if (w.exit_status)
        s += QStringLiteral(" — exit %1").arg(*w.exit_status);
    if (w.signal)
        s += QStringLiteral(" — killed by signal %1").arg(*w.signal);
    return s;
}

QString probesHtml(const std::vector<ProbeStatus>& probes)
{
    if (probes.empty())
        return QStringLiteral("<p>No probe information.</p>");
    QString h = QStringLiteral("<table cellspacing=0 cellpadding=3 border=1><tr><th>probe</th><th>target</th>"
                               "<th>status</th><th>note</th></tr>");
    for (const auto& p : probes) {
        const QString status = p.attached ? QStringLiteral("<span style='color:#1a7f37'>attached (%1)</span>").arg(esc(p.hook))
                               : offByChoice(p) ? QStringLiteral("<span style='color:#777'>off</span>")
                                                : QStringLiteral("<span style='color:#b35900'>skipped</span>");
        h += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td></tr>")
                 .arg(esc(p.name), esc(p.target), status, esc(p.reason));
    }
    return h + QStringLiteral("</table>");
}

QString warningsHtml(const std::vector<std::string>& warnings)
{
    if (warnings.empty())
        return QStringLiteral("<p style='color:#1a7f37'>No data loss reported.</p>");
    QString h = QStringLiteral("<ul style='color:#b00020'>");
    for (const auto& w : warnings)
        h += QStringLiteral("<li>⚠ %1</li>").arg(esc(w));
    return h + QStringLiteral("</ul>");
}

// Normal sampling under the budgets: notes in the text colour, not the warnings' red.
QString notesHtml(const std::vector<std::string>& notes)
{
    if (notes.empty())
        return {};
    QString h = QStringLiteral("<h3>Notes</h3><ul>");
    for (const auto& n : notes)
        h += QStringLiteral("<li>%1</li>").arg(esc(n));
    return h + QStringLiteral("</ul>");
}

QString metricValue(double v, const std::string& unit)
{
    return formatFigure(v, unit);
}

// "1.25 ms ± 3.1 %" with runs, the mean alone with one run.
QString sideValue(const reports::MetricDelta& m, bool after)
{
    return fromStd(reports::fmt::sideWithSpread(m, after, reports::fmt::kDisplay));
}

QString pctText(const reports::MetricDelta& m)
{
    return fromStd(reports::fmt::change(m, reports::fmt::kDisplay));
}

QString metricsTable(const std::vector<reports::MetricDelta>& metrics)
{
    QString h = QStringLiteral("<table cellspacing=0 cellpadding=3 border=1><tr><th>figure</th><th>before (±CV)</th>"
                               "<th>after (±CV)</th><th>change</th><th>verdict (test, p)</th></tr>");
    for (const auto& m : metrics) {
        if (m.value.before == 0.0 && m.value.after == 0.0)
            continue;
        h += QStringLiteral("<tr><td>%1</td><td align=right>%2</td><td align=right>%3</td>"
                            "<td align=right style='color:%5'><b>%4</b></td><td style='color:%5'>%6</td></tr>")
                 .arg(esc(reports::fmt::figureName(m.name)), sideValue(m, false), sideValue(m, true), pctText(m),
                      verdictColor(m.judgement.verdict), esc(judgementText(m.judgement).toStdString()));
    }
    return h + QStringLiteral("</table>");
}
} // namespace

QString verdictColor(reports::Verdict verdict)
{
    switch (verdict) {
    case reports::Verdict::Improved:
        return QStringLiteral("#1a7f37");
    case reports::Verdict::Regressed:
        return QStringLiteral("#c62828");
    case reports::Verdict::OnlyAfter:
        return QStringLiteral("#8a4b00");
    case reports::Verdict::OnlyBefore:
        return QStringLiteral("#1f4e9c");
    default:
        return QStringLiteral("#555555");
    }
}

QString summaryHtml(const reports::Report& r)
{
    const Meta& m = r.meta;
    QString h = QStringLiteral("<h2>%1</h2><table cellpadding=2>").arg(m.label.empty() ? QStringLiteral("capture") : esc(m.label));
    h += row(QStringLiteral("Kernel"), esc(m.kernel_release) + QStringLiteral(" <small>%1</small>").arg(esc(m.kernel_version)));
    h += row(QStringLiteral("Build id"), m.kernel_build_id.empty() ? QStringLiteral("unknown") : esc(m.kernel_build_id));
    h += row(QStringLiteral("CPU"), QStringLiteral("%1 × %2").arg(m.cpu_count).arg(esc(m.cpu_model)));
    h += row(QStringLiteral("Host"), esc(m.hostname));
    if (auto where = describeVirtualization(m.virtualization); !where.empty())
        h += row(QStringLiteral("Recorded on"), esc(where));
    h += row(QStringLiteral("Started"), esc(m.start_time));
    h += row(QStringLiteral("Duration"), formatSeconds(m.duration_s));
    h += row(QStringLiteral("Command"), joined(m.command));
    h += row(QStringLiteral("Workload"), workloadStatus(r.workload));
    for (const auto& f : r.results)
        h += row(QStringLiteral("&nbsp;&nbsp;") + esc(f.name), metricValue(f.value, ""));
    h += row(esc(reports::fmt::kCpuLockLabel),
             r.cpu_lock_share ? QStringLiteral("<b>%1</b> of %2 samples").arg(formatPercent(*r.cpu_lock_share),
                                                                              formatCount(r.cpu.samples))
                              : QStringLiteral("not sampled"));
    if (r.cpu_bpf_share) // the observer's own cost, so that it is never read as the kernel's
        h += row(esc(reports::fmt::kCpuBpfLabel),
                 QStringLiteral("%1 of %2 samples").arg(formatPercent(*r.cpu_bpf_share), formatCount(r.cpu.samples)));
    h += row(QStringLiteral("Locks"), formatCount(r.lock_count));
    h += row(QStringLiteral("Contentions"), formatCount(r.total_contentions));
    h += row(QStringLiteral("Total wait"), formatNs(r.total_wait_ns));
    h += row(QStringLiteral("Total hold"), formatNs(r.total_hold_ns));
    h += row(QStringLiteral("Events / lost / map full"), QStringLiteral("%1 / %2 / %3")
                                                             .arg(formatCount(r.stats.events), formatCount(r.stats.lost),
                                                                  formatCount(r.stats.map_full)));
    // Both counts explain numbers elsewhere: a lock mostly "[stack not
    // sampled]", or locks a user saw in perf but not here.
    if (r.stats.stacks_unsampled)
        h += row(QStringLiteral("Waits and holds not walked (stack budget)"), formatCount(r.stats.stacks_unsampled) +
                     QStringLiteral(" <small>counted and timed, no call path</small>"));
    if (r.stats.own_lock_events)
        h += row(QStringLiteral("Own probe locks left out"), formatCount(r.stats.own_lock_events) +
                     QStringLiteral(" <small>taken inside lockscope's BPF programs</small>"));
    if (r.stats.waits_untimed)
        h += row(QStringLiteral("Waits not timed (timing budget)"), formatCount(r.stats.waits_untimed) +
                     QStringLiteral(" <small>counted; times estimated from the timed waits of their lock</small>"));
    // Beside Total hold, which leaves them out.
    if (r.stats.impossible_holds)
        h += row(QStringLiteral("Impossible holds dropped"), formatCount(r.stats.impossible_holds) +
                     QStringLiteral(" <small>released before they were acquired; hold counts undercount by that many</small>"));
    if (r.stats.syscalls_untimed)
        h += row(QStringLiteral("Syscalls not timed (syscall budget)"), formatCount(r.stats.syscalls_untimed) +
                     QStringLiteral(" <small>counted; latencies estimated from the timed calls of the same syscall</small>"));
    // An empty syscall table then means "not measured", not "no syscalls".
    if (const std::string why = syscallTimingNotMeasured(m, r.probes); !why.empty())
        h += row(QStringLiteral("Syscall latency"), QStringLiteral("<b>not measured</b> <small>%1</small>").arg(esc(why)));
    h += QStringLiteral("</table><h3>Warnings</h3>") + warningsHtml(r.warnings) + notesHtml(r.notes);
    h += QStringLiteral("<h3>Probes</h3>") + probesHtml(r.probes);
    return h;
}

QString compareSummaryHtml(const reports::Comparison& c)
{
    const Meta& a = c.before.meta;
    const Meta& b = c.after.meta;
    QString h = QStringLiteral("<h2>%1</h2>").arg(headlineText(c).toHtmlEscaped());
    h += QStringLiteral("<table cellspacing=0 cellpadding=3 border=1><tr><th></th><th>before</th><th>after</th></tr>");
    h += row3(QStringLiteral("Label"), esc(a.label), esc(b.label));
    h += row3(QStringLiteral("Kernel"), esc(a.kernel_release), esc(b.kernel_release));
    h += row3(QStringLiteral("Version"), esc(a.kernel_version), esc(b.kernel_version));
    h += row3(QStringLiteral("Build id"), esc(a.kernel_build_id), esc(b.kernel_build_id));
    h += row3(QStringLiteral("CPU"), QStringLiteral("%1 × %2").arg(a.cpu_count).arg(esc(a.cpu_model)),
              QStringLiteral("%1 × %2").arg(b.cpu_count).arg(esc(b.cpu_model)));
    h += row3(QStringLiteral("Host"), esc(a.hostname), esc(b.hostname));
    if (!a.virtualization.kind.empty() || !b.virtualization.kind.empty())
        h += row3(QStringLiteral("Recorded on"), esc(describeVirtualization(a.virtualization)),
                  esc(describeVirtualization(b.virtualization)));
    h += row3(QStringLiteral("Started"), esc(a.start_time), esc(b.start_time));
    h += row3(QStringLiteral("Duration"), formatSeconds(a.duration_s), formatSeconds(b.duration_s));
    h += row3(QStringLiteral("Workload"), workloadStatus(c.before.workload), workloadStatus(c.after.workload));
    h += row3(QStringLiteral("Events lost"), formatCount(c.before.stats.lost), formatCount(c.after.stats.lost));
    h += QStringLiteral("</table><h3>Headline</h3>") + metricsTable(c.headline);
    if (!c.workload.empty())
        h += QStringLiteral("<h3>Workload results</h3>") + metricsTable(c.workload);
    if (!c.cpu_leaves.empty())
        h += QStringLiteral("<h3>CPU share of hot leaves</h3>") + metricsTable(c.cpu_leaves);
    h += QStringLiteral("<p>%1</p>").arg(esc(reports::varianceNote(c)));
    h += QStringLiteral("<h3>Warnings</h3>") + warningsHtml(c.warnings) + notesHtml(c.notes);
    h += QStringLiteral("<table width=100%><tr><td valign=top><h3>Probes before</h3>%1</td>"
                        "<td valign=top><h3>Probes after</h3>%2</td></tr></table>")
             .arg(probesHtml(c.before.probes), probesHtml(c.after.probes));
    return h;
}

QString headlineText(const reports::Comparison& c)
{
    QStringList parts;
    auto add = [&parts](const reports::MetricDelta& m, const QString& label) {
        parts << label + QStringLiteral(" ") + metricValue(m.value.before, m.unit) + QStringLiteral(" → ") +
                     metricValue(m.value.after, m.unit) + QStringLiteral(" (") + pctText(m) +
                     QLatin1Char(')');
    };
    // Throughput first, as patch descriptions quote it, then the lock figures.
    for (const auto& m : c.workload) {
        const QString name = QString::fromStdString(m.name);
        if (name.endsWith(QLatin1String("per_sec")) || name.endsWith(QLatin1String("_per_s")) ||
            name.contains(QLatin1String("throughput")))
            add(m, name);
    }
    static const std::pair<const char*, const char*> lockFigures[] = {
        {"cpu_lock_share", "CPU in locks"}, {"total wait/s", "total wait"}, {"total hold/s", "total hold"},
        {"contentions/s", "contentions"}};
    for (const auto& [key, label] : lockFigures) {
        for (const auto& m : c.headline) {
            if (m.name == key)
                add(m, QString::fromUtf8(label));
        }
    }
    return parts.isEmpty() ? QStringLiteral("No figures to compare") : parts.join(QStringLiteral(" · "));
}

} // namespace lockscope::gui

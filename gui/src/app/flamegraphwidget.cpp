// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/flamegraphwidget.h"

#include <algorithm>
#include <cmath>

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include "model/units.h"

namespace lockscope::gui {

namespace {
constexpr double kMinBoxWidth = 0.5; // narrower frames are not drawn (nor their children)

QString formatValue(double v, FlameWeight w)
{
    const auto u = static_cast<uint64_t>(std::max(0.0, v));
    return w == FlameWeight::Count ? formatCount(u) : formatNs(u);
}
} // namespace

FlameGraphWidget::FlameGraphWidget(QWidget* parent) : QWidget(parent)
{
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void FlameGraphWidget::setData(FlameData data)
{
    setSharedData(std::make_shared<const FlameData>(std::move(data)));
}

void FlameGraphWidget::setSharedData(std::shared_ptr<const FlameData> data)
{
    data_ = data ? std::move(data) : std::make_shared<const FlameData>();
    zoom_ = 0;
    depth_.assign(data_->size(), 0);
    // A parent comes before its children (CallTree and DiffTree number them so).
    for (uint32_t i = 1; i < depth_.size(); ++i)
        depth_[i] = depth_[data_->parent(i)] + 1;
    search_ = searchFlame(*data_, searchText_);
    layout();
    updateGeometry();
    update();
}

void FlameGraphWidget::setSearch(const QString& text)
{
    searchText_ = text;
    search_ = searchFlame(*data_, text);
    update();
}

void FlameGraphWidget::zoomTo(uint32_t nodeId)
{
    if (nodeId >= data_->size() || nodeId == zoom_)
        return;
    zoom_ = nodeId;
    layout();
    update();
    emit zoomChanged(zoom_);
}

int FlameGraphWidget::maxDepth() const
{
    return depth_.empty() ? 0 : *std::max_element(depth_.begin(), depth_.end());
}

QSize FlameGraphWidget::sizeHint() const
{
    return {800, std::max(200, (maxDepth() + 1) * kRowHeight)};
}

QSize FlameGraphWidget::minimumSizeHint() const
{
    return {200, std::max(60, (maxDepth() + 1) * kRowHeight)};
}

void FlameGraphWidget::layout()
{
    boxes_.clear();
    if (data_->drawsNothing())
        return;
    const double w = width();
    // The zoomed node's ancestors span the full width above it.
    std::vector<uint32_t> path;
    for (uint32_t id = zoom_; id != 0; id = data_->parent(id))
        path.push_back(id);
    path.push_back(0);
    std::reverse(path.begin(), path.end());
    for (size_t d = 0; d + 1 < path.size(); ++d)
        boxes_.push_back({QRectF(0, static_cast<double>(d) * kRowHeight, w, kRowHeight), path[d]});
    layoutChildren(zoom_, 0.0, w, depth_[zoom_]);
}

void FlameGraphWidget::layoutChildren(uint32_t id, double x, double width, int depth)
{
    if (width < kMinBoxWidth)
        return;
    boxes_.push_back({QRectF(x, static_cast<double>(depth) * kRowHeight, width, kRowHeight), id});
    const double value = data_->value(id);
    if (value <= 0.0)
        return;
    double cx = x;
    for (uint32_t c : data_->children(id)) {
        const double cw = width * data_->value(c) / value;
        layoutChildren(c, cx, cw, depth + 1);
        cx += cw;
    }
}

QColor FlameGraphWidget::colorFor(uint32_t id) const
{
    const bool searching = !searchText_.isEmpty();
    if (searching && search_.matched[id])
        return QColor(0xd0, 0x40, 0xe0);
    if (data_->differential()) {
        const double delta = data_->relativeChange(id);
        // Fade from near-white (no change) to full red/blue (new or gone): +25% is
        // pale, doubled half way.
        const int fade = static_cast<int>(std::lround(235.0 * (1.0 - std::fabs(delta))));
        QColor c = delta > 0 ? QColor(255, fade, fade) : delta < 0 ? QColor(fade, fade, 255) : QColor(235, 235, 235);
        return searching ? c.lighter(115) : c;
    }
    // Stable warm colour per function name, as classic flame graphs do.
    const size_t h = qHash(data_->function(id));
    const int r = 205 + static_cast<int>(h % 50);
    const int g = 80 + static_cast<int>((h / 50) % 130);
    const int b = 40 + static_cast<int>((h / 6500) % 40);
    QColor c(r, g, b);
    if (searching)
        c = QColor::fromHsl(c.hslHue(), 20, 200);
    return c;
}

void FlameGraphWidget::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (data_->drawsNothing()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No stacks with %1 to show").arg(toDisplayString(data_->weight)));
        return;
    }
    const QFontMetrics fm = p.fontMetrics();
    for (const Box& b : boxes_) {
        const QRectF r = b.rect.adjusted(0, 0, -1, -1);
        const QColor fill = colorFor(b.id);
        p.fillRect(r, fill);
        if (r.width() < 3 * fm.averageCharWidth())
            continue;
        // Perceived luminance decides the text colour, so labels stay readable on deep blue.
        const double luma = 0.299 * fill.red() + 0.587 * fill.green() + 0.114 * fill.blue();
        p.setPen(luma < 140.0 ? Qt::white : Qt::black);
        const QString text =
            fm.elidedText(data_->function(b.id), Qt::ElideRight, static_cast<int>(r.width()) - 4);
        p.drawText(r.adjusted(2, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
    }
}

int FlameGraphWidget::nodeAt(QPointF pos) const
{
    for (const Box& b : boxes_) {
        if (b.rect.contains(pos))
            return static_cast<int>(b.id);
    }
    return -1;
}

QString FlameGraphWidget::describe(uint32_t id) const
{
    if (id >= data_->size())
        return {};
    QString s = data_->function(id);
    if (!data_->module(id).isEmpty())
        s += QStringLiteral(" [") + data_->module(id) + QLatin1Char(']');
    if (!data_->differential()) {
        const double value = data_->value(id);
        const double all = data_->value(0);
        const double share = all > 0 ? value / all : 0.0;
        return s
            + QStringLiteral("\n%1: %2 (%3 of all)")
                  .arg(toDisplayString(data_->weight), formatValue(value, data_->weight),
                      formatPercent(share));
    }
    const double before = data_->before(id);
    const double after = data_->after(id);
    const double delta = after - before;
    QString pct = before > 0 ? (delta >= 0 ? QStringLiteral("+") : QString()) + formatPercent(delta / before)
                             : QStringLiteral("new");
    if (after <= 0 && before > 0)
        pct = QStringLiteral("gone");
    return s
        + QStringLiteral("\n%1 before: %2\n%1 after: %3\nΔ %4%5 (%6)")
              .arg(toDisplayString(data_->weight), formatValue(before, data_->weight),
                  formatValue(after, data_->weight), delta < 0 ? QStringLiteral("−") : QStringLiteral("+"),
                  formatValue(std::fabs(delta), data_->weight), pct);
}

void FlameGraphWidget::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::RightButton) {
        zoomTo(data_->size() == 0 ? 0 : data_->parent(zoom_));
        return;
    }
    const int id = nodeAt(event->position());
    if (id >= 0)
        zoomTo(static_cast<uint32_t>(id));
}

void FlameGraphWidget::mouseDoubleClickEvent(QMouseEvent* event)
{
    if (nodeAt(event->position()) < 0)
        zoomTo(0);
}

void FlameGraphWidget::mouseMoveEvent(QMouseEvent* event)
{
    const int id = nodeAt(event->position());
    emit hovered(id >= 0 ? describe(static_cast<uint32_t>(id)).replace(QLatin1Char('\n'), QStringLiteral(" · "))
                         : QString());
}

void FlameGraphWidget::keyPressEvent(QKeyEvent* event)
{
    if (event->key() == Qt::Key_Escape || event->key() == Qt::Key_Home) {
        zoomTo(0);
        return;
    }
    if (event->key() == Qt::Key_Backspace && data_->size() > 0) {
        zoomTo(data_->parent(zoom_));
        return;
    }
    QWidget::keyPressEvent(event);
}

void FlameGraphWidget::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    layout();
}

bool FlameGraphWidget::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int id = nodeAt(help->pos());
        if (id >= 0)
            QToolTip::showText(help->globalPos(), plainToolTip(describe(static_cast<uint32_t>(id))), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

} // namespace lockscope::gui

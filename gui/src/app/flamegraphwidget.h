// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <memory>
#include <vector>

#include <QRectF>
#include <QWidget>

#include "model/flamedata.h"

namespace lockscope::gui {

// A flame graph drawn with QPainter (icicle layout: the root on top, callees
// below). Click a frame to zoom into it, click an ancestor row (or press
// Escape / double-click) to zoom back out; frames matching the search text are
// highlighted; hovering shows the figures. In differential mode widths come
// from one side and colour says what changed: red grew, blue shrank.
class FlameGraphWidget final : public QWidget {
    Q_OBJECT
public:
    // Row d (0: the root) spans [d, d + 1) * kRowHeight from the top.
    static constexpr int kRowHeight = 18;

    explicit FlameGraphWidget(QWidget* parent = nullptr);

    void setData(FlameData data);
    // The same for data made elsewhere (off the UI thread) and kept there too.
    void setSharedData(std::shared_ptr<const FlameData> data);
    const FlameData& data() const noexcept { return *data_; }
    void setSearch(const QString& text);
    double searchCoveredShare() const noexcept { return search_.coveredShare; }
    void zoomTo(uint32_t nodeId);
    uint32_t zoomNode() const noexcept { return zoom_; }
    // Node under a widget position, or -1.
    int nodeAt(QPointF pos) const;
    // Text shown by the tooltip for a node (for tests and the status line).
    QString describe(uint32_t nodeId) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void zoomChanged(uint32_t nodeId);
    void hovered(const QString& description);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Box {
        QRectF rect;
        uint32_t id;
    };
    void layout();
    void layoutChildren(uint32_t id, double x, double width, int depth);
    QColor colorFor(uint32_t id) const;
    int maxDepth() const;

    std::shared_ptr<const FlameData> data_ = std::make_shared<const FlameData>(); // never null
    FlameSearch search_;
    QString searchText_;
    uint32_t zoom_ = 0;
    std::vector<Box> boxes_;
    std::vector<int> depth_;
};

} // namespace lockscope::gui

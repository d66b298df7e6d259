// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <QAbstractItemModel>

namespace lockscope::gui {

// The index/parent bookkeeping of a tree model, written once. Traits say
// what the tree is and what a cell shows:
//   using Tree;                         node ids are uint32_t, 0 is the hidden root
//   static size_t size(const Tree&);
//   static std::span<const uint32_t> children(const Tree&, uint32_t id);
//   static uint32_t parent(const Tree&, uint32_t id);
//   static int columnCount();
//   static QVariant header(int column, int role);
//   static QVariant data(const Tree&, uint32_t id, int column, int role);
// The node id travels in QModelIndex::internalId, so indexes stay valid as
// long as the tree does (the model owns it through a shared_ptr).
template <class Traits>
class TreeModel final : public QAbstractItemModel {
public:
    using Tree = typename Traits::Tree;

    explicit TreeModel(QObject* parent = nullptr) : QAbstractItemModel(parent) {}

    void setTree(std::shared_ptr<const Tree> tree)
    {
        beginResetModel();
        tree_ = std::move(tree);
        rowInParent_.clear();
        if (tree_) {
            rowInParent_.assign(Traits::size(*tree_), 0);
            for (size_t id = 0; id < rowInParent_.size(); ++id) {
                const auto& kids = Traits::children(*tree_, static_cast<uint32_t>(id));
                for (size_t row = 0; row < kids.size(); ++row)
                    rowInParent_[kids[row]] = static_cast<int>(row);
            }
        }
        endResetModel();
    }
    const Tree* tree() const noexcept { return tree_.get(); }

    static uint32_t nodeId(const QModelIndex& index)
    {
        return index.isValid() ? static_cast<uint32_t>(index.internalId()) : 0;
    }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override
    {
        if (!tree_ || row < 0 || column < 0 || column >= Traits::columnCount())
            return {};
        const auto& kids = Traits::children(*tree_, nodeId(parent));
        if (static_cast<size_t>(row) >= kids.size())
            return {};
        return createIndex(row, column, static_cast<quintptr>(kids[static_cast<size_t>(row)]));
    }

    QModelIndex parent(const QModelIndex& child) const override
    {
        if (!tree_ || !child.isValid())
            return {};
        const uint32_t p = Traits::parent(*tree_, nodeId(child));
        if (p == 0)
            return {};
        return createIndex(rowInParent_[p], 0, static_cast<quintptr>(p));
    }

    int rowCount(const QModelIndex& parent = {}) const override
    {
        if (!tree_ || parent.column() > 0)
            return 0;
        return static_cast<int>(Traits::children(*tree_, nodeId(parent)).size());
    }

    int columnCount(const QModelIndex& = {}) const override { return Traits::columnCount(); }

    bool hasChildren(const QModelIndex& parent = {}) const override { return rowCount(parent) > 0; }

    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override
    {
        if (!tree_ || !checkIndex(index, CheckIndexOption::IndexIsValid))
            return {};
        return Traits::data(*tree_, nodeId(index), index.column(), role);
    }

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override
    {
        if (orientation != Qt::Horizontal || section < 0 || section >= Traits::columnCount())
            return {};
        return Traits::header(section, role);
    }

private:
    std::shared_ptr<const Tree> tree_;
    std::vector<int> rowInParent_;
};

} // namespace lockscope::gui

#include "cli/table.h"

#include <algorithm>
#include <utility>

namespace mooncake_tier::cli {
namespace {

void RenderRow(const std::vector<std::string>& cells,
               const std::vector<size_t>& widths, std::ostream& out) {
  for (size_t i = 0; i < cells.size(); ++i) {
    out << cells[i];
    if (i + 1 < cells.size()) {
      out << std::string(widths[i] - cells[i].size() + 2, ' ');
    }
  }
  out << '\n';
}

}  // namespace

Table::Table(std::vector<std::string> header) : header_(std::move(header)) {}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(header_.size(), "-");
  rows_.push_back(std::move(cells));
}

void Table::Render(std::ostream& out) const {
  std::vector<size_t> widths(header_.size());
  for (size_t i = 0; i < header_.size(); ++i) widths[i] = header_[i].size();
  for (const std::vector<std::string>& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  RenderRow(header_, widths, out);
  for (const std::vector<std::string>& row : rows_) {
    RenderRow(row, widths, out);
  }
}

}  // namespace mooncake_tier::cli

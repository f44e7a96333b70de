#pragma once

// A table for people: a header row and rows of cells, rendered as
// left-aligned columns separated by two spaces (kubectl style). Cells are
// plain text; a missing value is conventionally "-".
//
// Thread safety: a value; not for concurrent mutation.

#include <ostream>
#include <string>
#include <vector>

namespace mooncake_tier::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header);

  // A row with fewer cells than the header is padded with "-"; extra cells
  // are dropped.
  void AddRow(std::vector<std::string> cells);

  size_t rows() const { return rows_.size(); }

  // Writes the header and the rows, one line each.
  void Render(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace mooncake_tier::cli

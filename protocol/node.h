#pragma once

// What a node publishes of itself and what the master knows of it: shared
// by the master, the node, the client and the wire.

#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.h"
#include "protocol/types.h"

namespace mooncake_tier {

// What a node publishes when it registers.
struct NodeSpec {
  std::string name;               // stable identity across restarts
  std::string rpc_address;        // node service (L2 reads); may be empty
  std::string transport_address;  // data-plane worker address (opaque bytes)
  uint64_t dram_base = 0;         // address of the segment on the node
  uint64_t dram_size = 0;         // bytes the node contributes; may be 0
  std::string dram_remote_key;    // packed remote key (opaque bytes)
  uint64_t ssd_capacity = 0;      // bytes of SSD tier; 0 means none
  // The node keeps a DRAM directory (SyncDirectory): the master records
  // each committed DRAM placement there before acknowledging its put, and
  // frees a placement's space only once the node dropped it. Nodes that do
  // not (in-process test nodes) are placed on as before, with nothing to
  // rebuild DRAM from after a master restart.
  bool keeps_directory = false;
  // The node process registered before (with this master, a predecessor
  // or another leader) and its segment lived on: clients may still be
  // writing into ranges granted before (MasterConfig::grant_window), so
  // they are not handed out again until those grants ran out.
  bool resumed = false;
};

// What a node says of its SSD store with each heartbeat. The master counts
// object bytes; the store knows what they take in its files (headers,
// alignment, dead records awaiting compaction) and how much room its file
// system really has.
struct SsdReport {
  uint64_t capacity_bytes = 0;     // what the store may fill now
  uint64_t put_limit_bytes = 0;    // file bytes where its writes stop
  uint64_t file_bytes = 0;         // what its files take now
  uint64_t live_value_bytes = 0;   // value bytes of its live records
  uint64_t live_record_bytes = 0;  // what those records take in the files
  uint64_t no_space_refusals = 0;  // writes refused for room so far
  // Bytes written to its files so far (puts, removals, compaction copies).
  uint64_t device_bytes_written = 0;
};

struct NodeView {
  NodeId id = kNoNode;
  NodeSpec spec;
  NodeState state = NodeState::kAlive;
  TimePoint registered_at;
  TimePoint last_heartbeat;
  uint64_t dram_used = 0;
  // Of dram_used: freed ranges held until location grants on them ran out.
  uint64_t dram_held = 0;
  uint64_t ssd_used = 0;  // logical bytes of local_disk replicas here
  // The object bytes its SSD can hold (spec.ssd_capacity until the node
  // reports; then what fits under its store's put limit at its measured
  // overhead), and its last report.
  uint64_t ssd_capacity = 0;
  std::optional<SsdReport> ssd_report;
  // Offloads to it wait until then (its SSD refused writes for room).
  TimePoint offloads_paused_until;
};

}  // namespace mooncake_tier

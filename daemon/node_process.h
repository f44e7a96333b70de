#pragma once

// The node role of mooncake-tierd: a StorageNode whose DRAM segment is
// exported over UCX (UcxSegmentExporter), whose SSD tier is an SsdStore on
// io_uring files in a directory it locks (SsdDirLock), which reaches the
// master over gRPC (rpc::GrpcMasterLink), and which writes promotions staged
// on other nodes through a UcxTransport.
//
// Start returns once the node runs; it registers from its heartbeat thread,
// retrying every heartbeat interval (with a log line) until the master
// answers, and registers again whenever a restarted master no longer knows
// it. registered() says whether it has been registered at least once.
//
// Used by the `node` and `standalone` subcommands and by tests.
//
// Thread safety: registered() and node() are thread-safe. Start, Shutdown
// and the destructor are called by one owner.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/clock.h"
#include "mooncake_tier/status.h"
#include "node/storage_node.h"
#include "rpc/tls_credentials.h"

namespace mooncake_tier {
class UcxSegmentExporter;
class UcxTransport;
namespace rpc {
class GrpcMasterLink;
}  // namespace rpc
}  // namespace mooncake_tier

namespace mooncake_tier::daemon {

class SsdDirLock;

struct NodeProcessOptions {
  NodeProcessOptions();  // the daemon's defaults (DRAM 1 GiB)

  // The master's "host:port". Default: "127.0.0.1:50051".
  std::string master_address = "127.0.0.1:50051";
  // Name, DRAM, huge pages, SSD-read staging, heartbeat interval, task
  // queue and I/O batch. peer_transport is set by Start (and the staging
  // area dropped when shared_memory is off). REQUIRES: node.name non-empty.
  StorageNodeOptions node;
  // Directory of the SSD store; created if missing, locked while in use.
  // Default: "/var/tmp/mooncake-tier".
  std::string ssd_dir = "/var/tmp/mooncake-tier";
  // Cap on the SSD store's files (they grow on demand up to it); 0 means
  // no SSD tier. Default: 8 GiB.
  uint64_t ssd_capacity = uint64_t{8} << 30;
  // Open the SSD files with O_DIRECT (on a file system that refuses it,
  // the node warns and goes through the page cache). Default: true.
  bool direct_io = true;
  // UCX transports as UCX_TLS spells them ("tcp", "shm,tcp", "rc,ud");
  // empty: UCX_TLS from the environment, else UCX's default. Default: empty.
  std::string ucx_transports;
  // Longest a UCX transfer (SSD-read replies, promotion writes) waits.
  // Default: 5 s.
  std::chrono::milliseconds ucx_timeout{5000};
  // Offer the DRAM segment to clients on this host as shared memory, and
  // copy through same-host peers' segments the same way (promotions).
  // Default: true.
  bool shared_memory = true;
  // Threads serving SSD-tier reads for clients. Default: 2.
  int ssd_read_threads = 2;
  // Deadline of every call to the master. Default: 5 s.
  Duration rpc_deadline = std::chrono::seconds(5);
  // The node token sent with every call to a master that authenticates
  // calls (--node-token-file). Empty: none. Default: empty.
  std::string token;
  // TLS to the master: this node's certificate (role node; in standalone
  // the master's own), its key and the CA bundle the master's certificate
  // must lead to (rpc/tls_credentials.h). A CA alone: the master is
  // checked, the node proves its role with its token. Re-read on SIGHUP.
  // Empty ca: plaintext. Default: empty.
  rpc::TlsFiles tls;
  // The name the master's certificate must carry when it is not the host
  // of master_address. Default: empty.
  std::string tls_server_name;
};

class NodeProcess {
 public:
  // Locks and opens the SSD directory, maps and exports the DRAM segment,
  // and starts the node's threads. IO_ERROR / UNAVAILABLE when the SSD
  // directory is unusable or in use, INVALID_ARGUMENT for bad options, the
  // UCX error when the data plane cannot start. An unreachable master is
  // not an error (see above).
  static Result<std::unique_ptr<NodeProcess>> Start(NodeProcessOptions options);
  // Shuts down if not done yet.
  ~NodeProcess();
  NodeProcess(const NodeProcess&) = delete;
  NodeProcess& operator=(const NodeProcess&) = delete;

  // True once the master accepted a registration of this process.
  bool registered() const;
  StorageNode& node() { return *node_; }
  // The data plane serving this node's segment (its SSD-read counters);
  // null before Start and after Shutdown.
  UcxSegmentExporter* exporter() const { return exporter_.get(); }
  const NodeProcessOptions& options() const { return options_; }
  // Reads the TLS files again (SIGHUP); bad files change nothing and are
  // the error. OK without TLS.
  Status ReloadTls();
  // The TLS identity dialed with; null without TLS.
  const rpc::TlsIdentity* tls() const { return tls_.get(); }

  // Stops asking for tasks, lets the task batch being executed finish,
  // joins the node's threads, deregisters from the master (which drops the
  // node at once instead of after node_ttl; a master that does not answer
  // within rpc_deadline is logged and left to node_ttl), syncs the SSD
  // store, withdraws the segment from the data plane and releases the SSD
  // directory. Tasks still queued are dropped; the master reaps them.
  // Idempotent.
  void Shutdown();

 private:
  explicit NodeProcess(NodeProcessOptions options);
  Status Open();

  const NodeProcessOptions options_;
  // Declaration order is teardown order in reverse: the node goes first,
  // then what it uses.
  std::unique_ptr<SsdDirLock> ssd_lock_;
  std::shared_ptr<rpc::TlsIdentity> tls_;
  std::unique_ptr<rpc::GrpcMasterLink> link_;
  std::unique_ptr<UcxTransport> peer_transport_;
  std::unique_ptr<UcxSegmentExporter> exporter_;
  std::unique_ptr<StorageNode> node_;
};

}  // namespace mooncake_tier::daemon

#include "bench/remote_connection.h"

#include <utility>

namespace mooncake_tier::bench {

Result<Connection> Connect(const CommonOptions& common,
                           const RemoteOptions& remote,
                           std::vector<std::string> spawn_flags,
                           std::string_view scenario, ResultSink& sink) {
  Connection c;
  c.prefix = UniqueKeyPrefix(scenario);
  c.remote = remote;
  MT_ASSIGN_OR_RETURN(
      c.store, OpenRemoteStore(common, remote, std::move(spawn_flags), sink));
  c.client = c.store.client.get();
  c.api = c.store.api.get();
  MT_ASSIGN_OR_RETURN(c.dram_bytes,
                      ProbeStoreDram(*c.client, *c.api, c.prefix));
  sink.Progress("connected to " + c.store.master + ", DRAM " +
                std::to_string(c.dram_bytes >> 20) + " MiB; keys under " +
                c.prefix);
  return c;
}

}  // namespace mooncake_tier::bench

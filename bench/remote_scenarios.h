#pragma once

// Client-side scenarios against a running store: the remote client
// (ConnectRemote: gRPC to the master, UCX to the nodes) in this process,
// the store in others: the one at --master, or a `mooncake-tierd
// standalone` started with --spawn.
//
// datapath: first, 4 KiB and 64 KiB objects with one client thread: put
//   latency, and get latency of keys read again and again (hot) or once
//   each (cold), with the client's location cache on and off in turns:
//   {"scenario":"datapath","object_bytes":N,"pattern":"hot"|"cold",
//    "cache":B,"get_p50_us":X,"get_p99_us":X,"put_p50_us":X,
//    "gets_per_s":X,...}, and a check line per small-object target.
//   Then put and get GB/s and get latency for 64 KiB, 1 MiB and 4 MiB
//   objects with 1 and 4 client threads, from DRAM (tier "memory") and
//   from SSD (tier "local_disk"), beside memcpy of the same bytes by the
//   same threads in the same run:
//   {"scenario":"datapath","tier":T,"object_bytes":N,"threads":N,
//    "put_gbps":X,"get_gbps":X,"p50_us":X,"p99_us":X,"memcpy_gbps":X,...}
// metadata: exists and get_replica_list over gRPC, one key per call and
//   batches of 32, prefix probes of 64 keys, and a bare gRPC call to the
//   same server (op "grpc_ping", gRPC's health service), with 1 and 4
//   caller threads; ops are keys, latency is per call:
//   {"scenario":"metadata","op":OP,"batch":N,"threads":N,"ops_per_s":X,
//    "call_p50_us":X,"call_p99_us":X}
// groups_remote: put and exists through the remote client, 4 KiB objects
//   in groups of 8 against the same objects without group metadata, one
//   key per call and batches of 8 (a group per call), one caller thread:
//   {"scenario":"groups_remote","op":"put"|"exists","batch":N,
//    "grouped_ops_per_s":X,"ungrouped_ops_per_s":X,"ratio":X,...}
//   What a client sees of the bookkeeping the `groups` scenario measures
//   in the engine alone.
// datapath and metadata end with a "check" line per target, each measured
// against its baseline in the same run (bench/README.md).
// --no-location-cache turns the client's location cache off (datapath's
// small-object rows compare both either way).
//
// Thread safety: runs on the calling thread (and threads of its own).

#include <string>
#include <vector>

#include "bench/result_sink.h"

namespace mooncake_tier::bench {

struct RemoteOptions {
  // The master of a running store; empty with spawn.
  std::string master;
  // Start `mooncake-tierd standalone` (at tierd_path) for the run.
  bool spawn = false;
  std::string tierd_path;
  // The client's location cache (RemoteClientOptions::location_cache).
  bool location_cache = true;
  // Same-host shared memory: off, every transfer goes over UCX (with
  // UCX_TLS=tcp, the path between hosts), and a spawned store offers none.
  bool shared_memory = true;
  // The master's UCX control lane for the hot calls
  // (RemoteClientOptions::control_lane); metadata measures both either way.
  bool control_lane = true;
  // TLS to the store (set by RunWithAndWithoutTls): the files the client
  // and the metadata stubs dial with, and the flags a spawned store serves
  // them with. Empty ca: plaintext.
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::vector<std::string> tls_spawn_flags;
  // Run the scenario twice, on a plaintext store and on one serving mutual
  // TLS, and compare (bench/tls_compare.h). Needs spawn.
  bool tls_compare = false;
  // Plaintext/TLS pairs of runs in a tls_compare; the ratio printed is the
  // median of the pairs' ratios.
  int tls_rounds = 3;
};

int RunDatapathScenario(const CommonOptions& common,
                        const RemoteOptions& remote, ResultSink& sink);
int RunMetadataScenario(const CommonOptions& common,
                        const RemoteOptions& remote, ResultSink& sink);
int RunGroupsRemoteScenario(const CommonOptions& common,
                            const RemoteOptions& remote, ResultSink& sink);

}  // namespace mooncake_tier::bench

// Writes the seed corpora of the fuzz harnesses from real, valid inputs made
// by the project's own code: SSD data files written by SsdStore, envelopes
// by EncodeShmEnvelope, protos by the ToProto conversions, admin requests
// from the route table, config files in the documented format. Run it when
// a format changes (fuzz/README.md):
//
//   make_corpus fuzz/corpus
//
// writes fuzz/corpus/<harness>/<seed>, replacing seeds of the same name and
// leaving others (inputs kept from fuzzing) alone. Deterministic: the same
// build writes the same bytes.

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "admin_server/admin_routes.h"
#include "admin_server/route_table.h"
#include "fuzz/proto_convert_messages.h"
#include "node/memory_ssd_device.h"
#include "node/ssd_record.h"
#include "node/ssd_store.h"
#include "rpc/convert.h"
#include "rpc/proto/master.pb.h"
#include "rpc/status_convert.h"
#include "transport/shm_locator.h"

namespace mooncake_tier::fuzz {
namespace {

// ---- Output ----------------------------------------------------------------

class Corpus {
 public:
  explicit Corpus(std::string root) : root_(std::move(root)) {
    ::mkdir(root_.c_str(), 0755);
  }

  void Add(const std::string& harness, const std::string& name,
           std::string_view bytes) {
    const std::string dir = root_ + "/" + harness;
    ::mkdir(dir.c_str(), 0755);
    const std::string path = dir + "/" + name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "make_corpus: cannot write %s\n", path.c_str());
      failed_ = true;
      return;
    }
    std::printf("%8zu  %s\n", bytes.size(), path.c_str());
  }

  bool failed() const { return failed_; }

 private:
  const std::string root_;
  bool failed_ = false;
};

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "make_corpus: %s failed\n", what);
    std::exit(1);
  }
}

// ---- ssd_record_fuzz: [flags][file][separator][file]... --------------------

// Must match fuzz/ssd_record_fuzz.cc.
constexpr std::string_view kFileSeparator = "MTFZ|NXT";
constexpr char kSeal = 1;
constexpr char kUnaligned = 2;

std::vector<std::byte> Value(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<std::byte>(seed + i * 7);
  }
  return v;
}

// A store over an in-memory device; Files() gives what it wrote.
class StoreFiles {
 public:
  explicit StoreFiles(uint64_t max_file_bytes = 1 << 20) {
    options_.capacity_bytes = 64ull << 20;
    options_.max_file_bytes = max_file_bytes;
    Reopen();
  }

  SsdStore& store() { return *store_; }
  void Reopen() {
    store_.reset();
    Result<std::unique_ptr<SsdStore>> store =
        SsdStore::Open(device_.Reopen(), options_);
    Check(store.ok(), "SsdStore::Open");
    store_ = std::move(*store);
  }
  void Put(std::string_view key, size_t n, uint8_t seed,
           std::optional<GroupSpec> group = {}) {
    Check(store_->Put(key, Value(n, seed), std::move(group)).ok(), "Put");
  }
  // One batch: its records share blocks (512-byte sectors each).
  struct Write {
    std::string key;
    size_t n = 0;
    std::optional<GroupSpec> group;
  };
  void PutBatch(const std::vector<Write>& batch) {
    std::vector<std::vector<std::byte>> values;
    std::vector<SsdWrite> writes;
    for (const Write& w : batch) {
      values.push_back(Value(w.n, static_cast<uint8_t>(values.size())));
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      writes.push_back({batch[i].key, batch[i].group, values[i]});
    }
    for (const Status& s : store_->PutBatch(writes)) Check(s.ok(), "PutBatch");
  }

  // The non-empty data files, in file order, with the store closed.
  std::vector<std::string> Files() {
    store_.reset();
    Result<std::vector<std::string>> names = device_.List();
    Check(names.ok(), "List");
    std::sort(names->begin(), names->end());
    std::vector<std::string> files;
    for (const std::string& name : *names) {
      Result<std::unique_ptr<SsdFile>> file = device_.Open(name, false);
      Check(file.ok(), "Open");
      Result<uint64_t> size = (*file)->Size();
      Check(size.ok(), "Size");
      if (*size == 0) continue;
      std::string bytes(*size, '\0');
      IoRequest request{0, bytes.data(), bytes.size(), 0};
      Check((*file)->ReadBatch({&request, 1}).ok(), "ReadBatch");
      files.push_back(std::move(bytes));
    }
    Reopen();
    return files;
  }

 private:
  MemorySsdDevice device_{1};
  SsdStoreOptions options_;
  std::unique_ptr<SsdStore> store_;
};

std::string SsdInput(char flags, const std::vector<std::string>& files) {
  std::string out(1, flags);
  for (size_t i = 0; i < files.size() && i < 4; ++i) {
    if (i > 0) out += kFileSeparator;
    out += files[i];
  }
  return out;
}

void SsdSeeds(Corpus& corpus) {
  const std::string h = "ssd_record_fuzz";

  // One batch of small values: records packed on sectors of one block.
  StoreFiles small;
  small.PutBatch({{"alpha", 100, {}},
                  {"beta", 1000, GroupSpec{"group-1", 2, 0}},
                  {"gamma", 0, {}},
                  {"delta", 600, GroupSpec{"group-1", 2, 1}}});
  const std::vector<std::string> small_files = small.Files();
  corpus.Add(h, "small-values", SsdInput(0, small_files));
  corpus.Add(h, "small-values-unaligned-device",
             SsdInput(kUnaligned, small_files));

  // A torn tail: the last record cut in half.
  std::string torn = small_files.front();
  torn.resize(torn.size() - 700);
  corpus.Add(h, "torn-tail", SsdInput(0, {torn}));

  // A value byte flipped (a damaged record) and a header smashed (a
  // damaged region the scan resynchronises past).
  std::string damaged = small_files.front();
  damaged[SsdRecord::kHeaderBytes + 5 + 50] ^= 0x5a;
  corpus.Add(h, "damaged-record", SsdInput(0, {damaged}));
  std::string smashed = small_files.front();
  std::memset(smashed.data(), 0xee, 16);
  corpus.Add(h, "damaged-header", SsdInput(0, {smashed}));

  // A value of 64 KiB and more: a block-aligned record.
  StoreFiles large;
  large.Put("big", (64 << 10) + 1000, 5);
  large.Put("after-big", 10, 6);
  corpus.Add(h, "block-aligned-value", SsdInput(0, large.Files()));

  // Overwrites and a batch of removals (one tombstone list), then a
  // restart and a single removal.
  StoreFiles removals;
  removals.PutBatch({{"key-0", 200, {}},
                     {"key-1", 201, {}},
                     {"key-2", 202, {}},
                     {"key-3", 203, {}},
                     {"key-4", 204, {}}});
  removals.Put("key-0", 50, 9);
  const std::string_view batch[] = {"key-1", "key-2", "key-3"};
  for (const Status& s : removals.store().RemoveBatch(batch)) {
    Check(s.ok(), "RemoveBatch");
  }
  removals.Reopen();
  Check(removals.store().Remove("key-4").ok(), "Remove");
  const std::vector<std::string> removal_files = removals.Files();
  corpus.Add(h, "removals-two-files", SsdInput(0, removal_files));
  corpus.Add(h, "removals-two-files-sealed", SsdInput(kSeal, removal_files));

  // Small files: several of them, and what compaction finds to do.
  StoreFiles many(8192);
  for (int i = 0; i < 8; ++i) {
    many.Put("many-" + std::to_string(i % 4), 3000, static_cast<uint8_t>(i));
  }
  corpus.Add(h, "many-small-files", SsdInput(0, many.Files()));

  // What an older build wrote: a format-1 record (whole blocks).
  const SsdRecord old =
      SsdRecord::Value("old-format", std::nullopt, 300, 7).AtFormatVersion(1);
  std::vector<std::byte> old_bytes(old.size());
  old.Encode(Value(300, 8), old_bytes);
  corpus.Add(
      h, "format-1-record",
      SsdInput(0, {std::string(reinterpret_cast<const char*>(old_bytes.data()),
                               old_bytes.size())}));
}

// ---- shm_locator_fuzz ------------------------------------------------------

void ShmSeeds(Corpus& corpus) {
  const std::string h = "shm_locator_fuzz";
  ShmLocator l;
  for (size_t i = 0; i < l.boot_id.size(); ++i) {
    l.boot_id[i] = static_cast<uint8_t>(0x10 + i);
    l.token[i] = static_cast<uint8_t>(0xa0 + i);
  }
  l.pid = 4242;
  l.fd = 17;
  l.inode = 123456;
  l.file_size = 1 << 30;
  l.file_offset = 4096;
  const std::string ucx_key = std::string("\x03\x00\x00\x00ucx-rkey", 12);
  const std::string envelope = EncodeShmEnvelope(l, ucx_key);
  corpus.Add(h, "envelope-v1", envelope);
  corpus.Add(h, "raw-ucx-key", ucx_key);
  std::string newer = envelope;
  newer[8] = 2;  // a locator version this build does not know
  corpus.Add(h, "envelope-unknown-version", newer);
  ShmLocator no_host = l;
  no_host.boot_id = {};
  corpus.Add(h, "envelope-no-host", EncodeShmEnvelope(no_host, ucx_key));
  corpus.Add(h, "envelope-truncated", envelope.substr(0, 30));
}

// ---- admin_request_fuzz: "METHOD TARGET\nBODY" ------------------------------

void AdminSeeds(Corpus& corpus) {
  const std::string h = "admin_request_fuzz";
  // One request per route of the table, params filled in.
  int n = 0;
  const admin::RouteTable table = admin::BuildAdminRoutes();
  for (const admin::AdminRoute& route : table.routes()) {
    std::string path = route.pattern;
    for (auto [param, value] :
         {std::pair<std::string, std::string>{"{key}", "obj%2Fkey%201"},
          {"{id}", "group-1"}}) {
      if (size_t at = path.find(param); at != std::string::npos) {
        path.replace(at, param.size(), value);
      }
    }
    char name[64];
    std::snprintf(name, sizeof(name), "route-%02d", n++);
    corpus.Add(h, name, route.method + " " + path);
  }
  const std::pair<const char*, const char*> kExtras[] = {
      {"nodes-page", "GET /api/v1/nodes?limit=2&cursor=1"},
      {"groups-page", "GET /api/v1/groups?state=complete&limit=1&cursor=a"},
      {"remove-forced", "DELETE /api/v1/objects/a+b%20c?force=true"},
      {"object-missing", "GET /api/v1/objects/missing-x"},
      {"tasks-page", "GET /api/v1/promotions?limit=1&cursor=3"},
      {"config-patch",
       "PATCH /api/v1/config\n{\"promotion\":{\"admission_threshold\":3,"
       "\"policy\":\"tinylfu\",\"task_timeout_ms\":5000,\"on_hit\":true},"
       "\"eviction_ratio\":0.1,\"group_fill_timeout_ms\":30000,"
       "\"offload_queue_limit\":64}"},
      {"config-patch-fixed", "PATCH /api/v1/config\n{\"lease_ttl_ms\":5}"},
      {"config-patch-bad", "PATCH /api/v1/config\n[1,2]"},
      {"wrong-method", "POST /api/v1/status"},
      {"bad-encoding", "GET /api/v1/objects/%zz"},
      {"bad-query", "GET /api/v1/nodes?limit=%g0"},
      {"unknown-query", "GET /api/v1/config?verbose=1"},
  };
  for (const auto& [name, request] : kExtras) corpus.Add(h, name, request);
}

// ---- proto_convert_fuzz: [type][serialized message] ------------------------

const TimePoint kNow = TimePoint(std::chrono::hours(1000));

std::string Typed(ProtoFuzzMessage type, const google::protobuf::Message& m) {
  return std::string(1, static_cast<char>(type)) + m.SerializeAsString();
}

Task SampleTask(TaskId id, TaskKind kind) {
  Task t;
  t.id = id;
  t.kind = kind;
  t.node = 2;
  t.key = "task-key";
  t.group = GroupSpec{"g", 2, 1};
  t.source = {7, Tier::kMemory, ReplicaState::kComplete, 0, 2, 4096, 100};
  t.state = TaskState::kDispatched;
  t.created = kNow - std::chrono::seconds(3);
  t.dispatched = kNow - std::chrono::seconds(1);
  if (kind == TaskKind::kPromotion) {
    t.target = {8, Tier::kMemory, ReplicaState::kProcessing, 0, 2, 8192, 100};
  }
  return t;
}

NodeView SampleNode() {
  NodeView n;
  n.id = 3;
  n.spec = {"node-a", "10.0.0.1:7001", "ucx-address", 0x7f0000000000, 1 << 30,
            "rkey",   8ull << 30,      true,          false};
  n.state = NodeState::kSuspect;
  n.registered_at = kNow - std::chrono::minutes(5);
  n.last_heartbeat = kNow - std::chrono::seconds(2);
  n.dram_used = 1 << 20;
  n.ssd_used = 4 << 20;
  return n;
}

void ProtoSeeds(Corpus& corpus) {
  using M = ProtoFuzzMessage;
  using rpc::ToProto;
  const std::string h = "proto_convert_fuzz";
  const GroupSpec group{"group-7", 4, 2};

  proto::PutStartRequest put_start;
  ToProto(PutStartRequest{"key-a", 4096, {}, "client-1"},
          put_start.add_items());
  ToProto(PutStartRequest{"key-b", 100, {group, "node-a", true}, "client-1"},
          put_start.add_items());
  corpus.Add(h, "put-start-request", Typed(M::kPutStartRequest, put_start));

  proto::PutEndRequest put_end;
  put_end.set_client_id("client-1");
  put_end.add_keys("key-a");
  put_end.add_keys("key-b");
  corpus.Add(h, "put-end-request", Typed(M::kPutEndRequest, put_end));
  proto::PutRevokeRequest revoke;
  revoke.set_client_id("client-2");
  revoke.add_keys("key-c");
  corpus.Add(h, "put-revoke-request", Typed(M::kPutRevokeRequest, revoke));

  proto::GetReplicaListRequest get;
  get.add_keys("key-a");
  get.add_keys(std::string("bad\0key", 7));
  get.set_with_nodes(true);
  get.add_known_nodes(1);
  corpus.Add(h, "get-replica-list-request",
             Typed(M::kGetReplicaListRequest, get));
  proto::ExistsRequest exists;
  exists.add_keys("key-a");
  corpus.Add(h, "exists-request", Typed(M::kExistsRequest, exists));
  proto::ProbePrefixRequest probe;
  probe.add_keys("p/0");
  probe.add_keys("p/1");
  probe.set_with_locations(true);
  corpus.Add(h, "probe-prefix-request", Typed(M::kProbePrefixRequest, probe));
  proto::ReleaseLeasesRequest release;
  proto::LeaseRelease* lease = release.add_releases();
  lease->set_key("key-a");
  lease->set_lease_id(99);
  corpus.Add(h, "release-leases-request",
             Typed(M::kReleaseLeasesRequest, release));
  proto::RemoveRequest remove;
  remove.add_keys("key-a");
  remove.set_force(true);
  corpus.Add(h, "remove-request", Typed(M::kRemoveRequest, remove));
  proto::GetGroupRequest get_group;
  get_group.add_group_ids("group-7");
  corpus.Add(h, "get-group-request", Typed(M::kGetGroupRequest, get_group));
  proto::RemoveGroupRequest remove_group;
  remove_group.add_group_ids("group-7");
  corpus.Add(h, "remove-group-request",
             Typed(M::kRemoveGroupRequest, remove_group));

  proto::RegisterNodeRequest reg;
  ToProto(SampleNode().spec, reg.mutable_spec());
  ToProto(SsdInventoryEntry{"ssd-key", 12345, group}, reg.add_inventory());
  ToProto(SsdInventoryEntry{"ssd-key-2", 1, std::nullopt}, reg.add_inventory());
  ToProto(DramEntry{"dram-key", 4096, 512, group}, reg.add_dram());
  corpus.Add(h, "register-node-request", Typed(M::kRegisterNodeRequest, reg));
  proto::HeartbeatRequest heartbeat;
  heartbeat.set_node_id(3);
  ToProto(SsdReport{1 << 30, 1 << 29, 1 << 20, 1000, 4096, 2, 1 << 21},
          heartbeat.mutable_ssd());
  corpus.Add(h, "heartbeat-request", Typed(M::kHeartbeatRequest, heartbeat));
  proto::NotifyOffloadFailureRequest offload_failure;
  offload_failure.set_node_id(3);
  proto::OffloadFailure* of = offload_failure.add_failures();
  of->set_task_id(5);
  ToProto(Status(ErrorReason::kNoSpace, "disk full"), of->mutable_cause());
  corpus.Add(h, "notify-offload-failure-request",
             Typed(M::kNotifyOffloadFailureRequest, offload_failure));
  proto::NotifyPromotionFailureRequest promotion_failure;
  promotion_failure.set_node_id(3);
  proto::PromotionFailure* pf = promotion_failure.add_failures();
  pf->set_task_id(6);
  pf->mutable_cause()->set_reason("SOME_FUTURE_REASON");
  pf->mutable_cause()->set_code(13);
  corpus.Add(h, "notify-promotion-failure-request",
             Typed(M::kNotifyPromotionFailureRequest, promotion_failure));
  proto::ReportSsdCorruptionRequest corruption;
  corruption.set_node_id(3);
  corruption.add_keys("ssd-key");
  corpus.Add(h, "report-ssd-corruption-request",
             Typed(M::kReportSsdCorruptionRequest, corruption));

  proto::PutStartResponse put_start_reply;
  ToProto(ReplicaDescriptor{9, Tier::kMemory, ReplicaState::kProcessing, 2000,
                            3, 4096, 100},
          put_start_reply.add_results()->mutable_replica());
  ToProto(Status(ErrorReason::kObjectExists, "exists"),
          put_start_reply.add_results()->mutable_status());
  corpus.Add(h, "put-start-response",
             Typed(M::kPutStartResponse, put_start_reply));

  ObjectReplicas object;
  object.size = 4096;
  object.replicas = {
      {9, Tier::kMemory, ReplicaState::kComplete, 0, 3, 0, 4096},
      {10, Tier::kLocalDisk, ReplicaState::kComplete, 0, 3, 0, 4096}};
  object.lease_deadline = kNow + std::chrono::seconds(10);
  object.lease_id = 77;
  object.location_valid_ms = 2000;
  object.group = group;
  proto::GetReplicaListResponse replicas;
  ToProto(object, kNow, replicas.add_results()->mutable_object());
  ToProto(SampleNode(), kNow, replicas.add_nodes());
  corpus.Add(h, "get-replica-list-response",
             Typed(M::kGetReplicaListResponse, replicas));
  proto::ProbePrefixResponse probe_reply;
  probe_reply.set_length(1);
  ToProto(object, kNow, probe_reply.add_objects()->mutable_object());
  ToProto(SampleNode(), kNow, probe_reply.add_nodes());
  corpus.Add(h, "probe-prefix-response",
             Typed(M::kProbePrefixResponse, probe_reply));
  proto::ExistsResponse exists_reply;
  ToProto(ExistsInfo{true, 4096,
                     GroupStatus{"group-7", GroupState::kFilling, 4, 2}},
          exists_reply.add_results()->mutable_info());
  corpus.Add(h, "exists-response", Typed(M::kExistsResponse, exists_reply));
  GroupDescription described;
  described.status = {"group-7", GroupState::kBroken, 2, 1};
  described.break_cause = BreakCause::kNodeLost;
  described.members = {{0, "m0", true, {Tier::kMemory, Tier::kLocalDisk}},
                       {1, "m1", false, {}}};
  proto::GetGroupResponse group_reply;
  ToProto(described, group_reply.add_results()->mutable_group());
  corpus.Add(h, "get-group-response", Typed(M::kGetGroupResponse, group_reply));
  proto::GetNodeResponse node_reply;
  ToProto(SampleNode(), kNow, node_reply.add_results()->mutable_node());
  corpus.Add(h, "get-node-response", Typed(M::kGetNodeResponse, node_reply));
  proto::PullTasksResponse pull;
  ToProto(NodeTasks{{SampleTask(1, TaskKind::kOffload)},
                    {"stale-key"},
                    {SampleTask(2, TaskKind::kPromotion)}},
          kNow, &pull);
  pull.set_term(4);
  corpus.Add(h, "pull-tasks-response", Typed(M::kPullTasksResponse, pull));
  proto::SyncDirectoryResponse sync;
  ToProto(DirectoryOp{1, DirectoryOp::Kind::kAdd,
                      DramEntry{"dram-key", 4096, 512, group}},
          sync.add_changes());
  ToProto(DirectoryOp{2, DirectoryOp::Kind::kDrop,
                      DramEntry{"", 8192, 512, std::nullopt}},
          sync.add_changes());
  corpus.Add(h, "sync-directory-response",
             Typed(M::kSyncDirectoryResponse, sync));
  proto::PromotionAllocStartResponse alloc;
  ToProto(ReplicaDescriptor{11, Tier::kMemory, ReplicaState::kProcessing, 0, 3,
                            0, 4096},
          alloc.add_results()->mutable_replica());
  corpus.Add(h, "promotion-alloc-start-response",
             Typed(M::kPromotionAllocStartResponse, alloc));
  proto::RemoveResponse remove_reply;
  remove_reply.add_results();
  ToProto(Status(ErrorReason::kObjectLeased, "leased"),
          remove_reply.add_results());
  corpus.Add(h, "remove-response", Typed(M::kRemoveResponse, remove_reply));
  proto::ItemStatus details;
  ToProto(Status(ErrorReason::kInvalidArgument, "too many items"), &details);
  corpus.Add(h, "call-failure",
             std::string(1, static_cast<char>(M::kCallFailure)) +
                 std::string(1, 2) + details.SerializeAsString());
}

// ---- config_fuzz: config files ---------------------------------------------

void ConfigSeeds(Corpus& corpus) {
  const std::string h = "config_fuzz";
  corpus.Add(h, "minimal.toml", "listen = \"127.0.0.1:0\"\n");
  corpus.Add(h, "sections.toml",
             "# One file for every subcommand.\n"
             "log-level = \"warn\"\n"
             "offload-mode = \"write_through\"\n"
             "eviction-high-watermark = 0.85\n"
             "lease-ttl = \"5s\"\n"
             "\n"
             "[master]\n"
             "listen = \"127.0.0.1:50051\"\n"
             "tick-interval = \"50ms\"\n"
             "group-visibility = \"best_effort\"\n"
             "promotion-policy = \"tinylfu\"\n"
             "promotion-on-hit = false\n"
             "admin-listen = \"127.0.0.1:9003\"\n"
             "\n"
             "[node]\n"
             "master = \"127.0.0.1:50051\"\n"
             "name = \"node-a\"\n"
             "dram = \"64MiB\"\n"
             "ssd-capacity = \"1GiB\"\n"
             "ssd-dir = \"/var/tmp/mt\"\n"
             "io-batch = 16\n"
             "heartbeat-interval = \"500ms\"\n"
             "ucx-transports = \"tcp\"\n"
             "\n"
             "[standalone]\n"
             "dram = \"128m\"\n"
             "dram-directory = true\n");
  corpus.Add(h, "ini-style.ini",
             "; INI comments and bare values\n"
             "[node]\n"
             "dram=1073741824\n"
             "io-batch-bytes=4MiB\n"
             "direct-io=false\n"
             "ssd-read-staging=0\n"
             "rpc-deadline=2m\n");
  corpus.Add(h, "ha.toml",
             "[master]\n"
             "etcd = \"127.0.0.1:2379,127.0.0.2:2379\"\n"
             "cluster = \"prod-1\"\n"
             "advertise = \"10.0.0.1:50051\"\n"
             "etcd-lease-ttl = \"3s\"\n"
             "recovery-timeout = \"20s\"\n");
  corpus.Add(h, "refused-values.toml",
             "lease-ttl = \"0s\"\n"
             "max-group-size = -1\n"
             "unknown-knob = 3\n");
}

}  // namespace
}  // namespace mooncake_tier::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR (fuzz/corpus)\n", argv[0]);
    return 2;
  }
  mooncake_tier::fuzz::Corpus corpus(argv[1]);
  mooncake_tier::fuzz::SsdSeeds(corpus);
  mooncake_tier::fuzz::ShmSeeds(corpus);
  mooncake_tier::fuzz::AdminSeeds(corpus);
  mooncake_tier::fuzz::ProtoSeeds(corpus);
  mooncake_tier::fuzz::ConfigSeeds(corpus);
  return corpus.failed() ? 1 : 0;
}

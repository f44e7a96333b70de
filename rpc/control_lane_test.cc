// The control lane (rpc/control_lane_*.h): its wire format, and the hot
// calls between GrpcMasterApi and a real master over real UCX (TCP on
// loopback), with gRPC as the fallback when the lane is missing, goes away
// or is refused.

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "rpc/control_lane_client.h"
#include "rpc/control_lane_messages.h"
#include "rpc/control_lane_server.h"
#include "rpc/convert.h"
#include "rpc/master_service_test_util.h"
#include "rpc/proto/master.pb.h"
#include "transport/ucx_worker.h"

namespace mooncake_tier::rpc::service_test {
namespace control_lane_test {
namespace {

constexpr char kTransports[] = "tcp";
constexpr auto kTimeout = std::chrono::seconds(5);

TEST(ControlLaneMessages, RoundTrip) {
  const std::string request = EncodeControlLaneRequest(4, 77, "payload");
  Result<ControlLaneRequest> r = DecodeControlLaneRequest(request);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, 4u);
  EXPECT_EQ(r->request_id, 77u);
  EXPECT_EQ(r->payload, "payload");

  const std::string ok = EncodeControlLaneReply(9, Status::Ok(), "answer");
  Result<ControlLaneReply> a = DecodeControlLaneReply(ok);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->request_id, 9u);
  EXPECT_TRUE(a->status.ok());
  EXPECT_EQ(a->payload, "answer");

  const std::string failed = EncodeControlLaneReply(
      10, Status(ErrorReason::kNotLeader, std::string(5000, 'm')), "dropped");
  Result<ControlLaneReply> f = DecodeControlLaneReply(failed);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->status.reason(), ErrorReason::kNotLeader);
  EXPECT_EQ(f->status.message().size(), kMaxControlLaneMessageBytes);
  EXPECT_TRUE(f->payload.empty());
}

TEST(ControlLaneMessages, MalformedIsRefusedNeverOverread) {
  const std::string request = EncodeControlLaneRequest(4, 77, "p");
  const std::string reply =
      EncodeControlLaneReply(9, Status(ErrorReason::kInternal, "x"), "");
  // Every cut of a header is refused (a request's payload may be empty).
  for (size_t n = 0; n < 20; ++n) {
    EXPECT_FALSE(DecodeControlLaneRequest(request.substr(0, n)).ok()) << n;
  }
  for (size_t n = 0; n + 1 < reply.size(); ++n) {
    EXPECT_FALSE(DecodeControlLaneReply(reply.substr(0, n)).ok()) << n;
  }
  std::string bad_magic = request;
  bad_magic[0] ^= 1;
  EXPECT_EQ(DecodeControlLaneRequest(bad_magic).status().reason(),
            ErrorReason::kInvalidArgument);
  // A request is not a reply, nor the other way round.
  EXPECT_FALSE(DecodeControlLaneReply(request).ok());
  EXPECT_FALSE(DecodeControlLaneRequest(reply).ok());
  // A failed reply carries no payload; an unknown reason reads as INTERNAL.
  EXPECT_FALSE(DecodeControlLaneReply(reply + "extra").ok());
  std::string odd =
      EncodeControlLaneReply(1, Status(ErrorReason::kNotLeader, "m"), "");
  const size_t at = odd.find("NOT_LEADER");
  ASSERT_NE(at, std::string::npos);
  odd.replace(at, 10, "NOT_A_NAME");
  Result<ControlLaneReply> decoded = DecodeControlLaneReply(odd);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->status.reason(), ErrorReason::kInternal);
}

// A master (MasterServiceTest's) with a control lane, and a client API
// that uses it.
class ControlLaneTest : public MasterServiceTest {
 protected:
  void SetUp() override {
    MasterServiceTest::SetUp();
    Result<std::unique_ptr<ControlLaneServer>> lane =
        ControlLaneServer::Create(&service_, {.transports = kTransports});
    ASSERT_TRUE(lane.ok()) << lane.status().ToString();
    lane_ = std::move(*lane);
    lane_api_ = LaneApi();
    node_ = Register("n", 64 * kMiB, 0);
    Warm(*lane_api_);
  }

  // The first call goes over gRPC and finds the lane; later ones use it.
  static void Warm(GrpcMasterApi& api) {
    const std::vector<std::string> none = {"warm-up"};
    ASSERT_TRUE(api.Exists(none)[0].ok());
    const uint64_t before = api.lane_calls();
    ASSERT_TRUE(api.Exists(none)[0].ok());
    ASSERT_EQ(api.lane_calls(), before + 1) << "the lane was not found";
  }

  std::unique_ptr<GrpcMasterApi> LaneApi(
      Duration retry = std::chrono::seconds(1)) {
    GrpcChannelOptions options;
    options.target = server_->address();
    Result<std::unique_ptr<GrpcMasterApi>> api = GrpcMasterApi::Create(
        options, {.enabled = true, .transports = kTransports, .retry = retry});
    EXPECT_TRUE(api.ok()) << api.status().ToString();
    return api.ok() ? std::move(*api) : nullptr;
  }

  uint64_t Served(MasterMethod method) {
    uint64_t calls = 0;
    service_.recorder().Visit([&](const CallStats& s) {
      if (s.method == MasterMethodName(method)) calls = s.calls;
    });
    return calls;
  }

  std::unique_ptr<ControlLaneServer> lane_;
  std::unique_ptr<GrpcMasterApi> lane_api_;
  NodeId node_ = kNoNode;
};

TEST_F(ControlLaneTest, HotCallsGoOverTheLaneAndAnswerAsGrpcDoes) {
  ASSERT_TRUE(Put("a", 100).ok());
  const std::vector<std::string> keys = {"a", "absent"};

  auto exists = lane_api_->Exists(keys);
  ASSERT_EQ(exists.size(), 2u);
  ASSERT_TRUE(exists[0].ok()) << exists[0].status().ToString();
  EXPECT_TRUE(exists[0]->exists);
  EXPECT_EQ(exists[0]->size, 100u);
  ASSERT_TRUE(exists[1].ok());
  EXPECT_FALSE(exists[1]->exists);

  auto replicas = lane_api_->GetReplicaList(keys);
  ASSERT_EQ(replicas.size(), 2u);
  ASSERT_TRUE(replicas[0].ok()) << replicas[0].status().ToString();
  EXPECT_EQ(replicas[0]->size, 100u);
  EXPECT_EQ(replicas[1].status().reason(), ErrorReason::kObjectNotFound);
  // The same answer over gRPC.
  auto over_grpc = api_->GetReplicaList(keys);
  ASSERT_TRUE(over_grpc[0].ok());
  EXPECT_EQ(over_grpc[0]->replicas.size(), replicas[0]->replicas.size());
  EXPECT_EQ(over_grpc[1].status().reason(), ErrorReason::kObjectNotFound);

  Result<PrefixInfo> prefix = lane_api_->ProbePrefix(keys);
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();
  EXPECT_EQ(prefix->length, 1u);
  EXPECT_EQ(prefix->bytes, 100u);

  // Releases go over gRPC: a release must never be sent twice.
  std::vector<LeaseRelease> releases;
  for (const auto& r : replicas) {
    if (r.ok() && r->lease_id != 0) releases.push_back({"a", r->lease_id});
  }
  const uint64_t lane_calls = lane_api_->lane_calls();
  EXPECT_TRUE(lane_api_->ReleaseLeases(releases).ok());
  EXPECT_EQ(lane_api_->lane_calls(), lane_calls);

  // The warm-up's second call, Exists, GetReplicaList and ProbePrefix went
  // over the lane.
  EXPECT_EQ(lane_api_->lane_calls(), 4u);
  EXPECT_EQ(lane_->stats().calls, lane_api_->lane_calls());
  EXPECT_EQ(lane_->stats().malformed, 0u);
  // The master served them through the same recorder as gRPC calls, and
  // the client recorded them too.
  EXPECT_GE(Served(MasterMethod::kExists), 1u);
  EXPECT_GE(Served(MasterMethod::kGetControlLane), 1u);
}

TEST_F(ControlLaneTest, LookupForReadBringsLocationsAndUnknownNodes) {
  ASSERT_TRUE(Put("a", 100).ok());
  ASSERT_TRUE(Put("b", 200).ok());
  const std::vector<std::string> keys = {"a", "b", "absent", "a"};
  const std::vector<NodeId> none;
  const std::vector<NodeId> known = {node_};
  for (GrpcMasterApi* api : {api_.get(), lane_api_.get()}) {
    // A plain lookup: every key's result, and the node nobody knew.
    Result<ReadLookup> plain = api->LookupForRead(keys, false, &none);
    ASSERT_TRUE(plain.ok()) << plain.status().ToString();
    ASSERT_EQ(plain->objects.size(), keys.size());
    EXPECT_EQ(plain->objects[0]->size, 100u);
    EXPECT_EQ(plain->objects[2].status().reason(),
              ErrorReason::kObjectNotFound);
    ASSERT_EQ(plain->nodes.size(), 1u);  // once, though named thrice
    EXPECT_EQ(plain->nodes[0].id, node_);
    EXPECT_EQ(plain->nodes[0].spec.transport_address,
              Spec("n", 0, 0).transport_address);
    // A node the caller knows is not sent again; nor any without asking.
    EXPECT_TRUE(api->LookupForRead(keys, false, &known)->nodes.empty());
    EXPECT_TRUE(api->LookupForRead(keys, false, nullptr)->nodes.empty());

    // A probe: the prefix, and the locations of its keys only.
    Result<ReadLookup> probe = api->LookupForRead(keys, true, &none);
    ASSERT_TRUE(probe.ok()) << probe.status().ToString();
    EXPECT_EQ(probe->prefix.length, 2u);
    EXPECT_EQ(probe->prefix.bytes, 300u);
    ASSERT_EQ(probe->objects.size(), 2u);
    EXPECT_EQ(probe->objects[1]->size, 200u);
    EXPECT_EQ(probe->nodes.size(), 1u);
    // The read leases they took end as a reader's would.
    std::vector<LeaseRelease> releases;
    for (const auto* lookup : {&*plain, &*probe}) {
      for (size_t i = 0; i < lookup->objects.size(); ++i) {
        if (lookup->objects[i].ok() && lookup->objects[i]->lease_id != 0) {
          releases.push_back({keys[i], lookup->objects[i]->lease_id});
        }
      }
    }
    EXPECT_TRUE(api->ReleaseLeases(releases).ok());
  }
  EXPECT_GE(lane_api_->lane_calls(), 4u);
}

TEST_F(ControlLaneTest, MasterVerdictsComeBackAsOverGrpc) {
  // A batch over the limit is refused as a whole, by the master.
  std::vector<std::string> keys(kMaxBatchItems + 1, "k");
  auto results = lane_api_->Exists(keys);
  ASSERT_EQ(results.size(), keys.size());
  EXPECT_EQ(results[0].status().reason(), ErrorReason::kInvalidArgument);
  EXPECT_EQ(lane_->stats().calls, 2u);  // after the warm-up's
  // An item's failure (a key too long) is the same as over gRPC.
  const std::vector<std::string> bad = {std::string(100'000, 'k')};
  const Status over_grpc = api_->Exists(bad)[0].status();
  EXPECT_FALSE(over_grpc.ok());
  EXPECT_EQ(lane_api_->Exists(bad)[0].status().reason(), over_grpc.reason());
  EXPECT_EQ(lane_->stats().calls, 3u);
}

TEST_F(ControlLaneTest, CallsTooLargeForTheLaneGoOverGrpc) {
  // About 9 MiB of keys: more than a lane message carries.
  std::vector<std::string> keys;
  for (int i = 0; i < 60'000; ++i) {
    keys.push_back(std::string(150, 'k') + std::to_string(i));
  }
  const uint64_t before = lane_->stats().calls;
  auto results = lane_api_->Exists(keys);
  ASSERT_EQ(results.size(), keys.size());
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->exists);
  }
  EXPECT_EQ(lane_->stats().calls, before);
  EXPECT_EQ(lane_->stats().malformed, 0u);
  // The lane serves on.
  Warm(*lane_api_);
}

TEST_F(ControlLaneTest, WithoutALaneCallsGoOverGrpc) {
  lane_.reset();  // withdraws the lane: GetControlLane says NOT_APPLICABLE
  std::unique_ptr<GrpcMasterApi> api = LaneApi(std::chrono::seconds(60));
  const uint64_t asked = Served(MasterMethod::kGetControlLane);
  ASSERT_TRUE(Put("a", 10).ok());
  const std::vector<std::string> keys = {"a"};
  for (int i = 0; i < 3; ++i) {
    auto e = api->Exists(keys);
    ASSERT_TRUE(e[0].ok()) << e[0].status().ToString();
    EXPECT_TRUE(e[0]->exists);
  }
  EXPECT_EQ(api->lane_calls(), 0u);
  // Asked once, not once per call.
  EXPECT_EQ(Served(MasterMethod::kGetControlLane), asked + 1);
}

TEST_F(ControlLaneTest, ALaneThatGoesAwayFallsBackToGrpcAndComesBack) {
  ASSERT_TRUE(Put("a", 10).ok());
  const std::vector<std::string> keys = {"a"};
  std::unique_ptr<GrpcMasterApi> api = LaneApi(std::chrono::milliseconds(1));
  Warm(*api);
  ASSERT_TRUE(api->Exists(keys)[0].ok());
  EXPECT_EQ(api->lane_calls(), 2u);

  lane_.reset();
  // Every call still answers, over gRPC, while the lane is gone.
  for (int i = 0; i < 20; ++i) {
    auto e = api->Exists(keys);
    ASSERT_TRUE(e[0].ok()) << i << ": " << e[0].status().ToString();
    EXPECT_TRUE(e[0]->exists);
  }
  const uint64_t before = api->lane_calls();

  // A new lane (a restarted master's, say) is found again.
  Result<std::unique_ptr<ControlLaneServer>> again =
      ControlLaneServer::Create(&service_, {.transports = kTransports});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  lane_ = std::move(*again);
  // Looks back off while they fail (here from 1 ms): well within 10 s.
  bool back = false;
  for (int i = 0; i < 2000 && !back; ++i) {
    ASSERT_TRUE(api->Exists(keys)[0].ok());
    back = api->lane_calls() > before;
    if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(back);
}

TEST_F(ControlLaneTest, MalformedRequestsChangeNothingAndTheLaneServesOn) {
  Result<std::unique_ptr<ControlLaneClient>> raw =
      ControlLaneClient::Create(kTransports);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  ASSERT_TRUE((*raw)->Connect(lane_->address()).ok());
  // A method the lane does not carry, one that does not exist, a payload
  // that is not the method's request.
  EXPECT_EQ(
      (*raw)
          ->Call(static_cast<uint32_t>(MasterMethod::kRemove), "", kTimeout)
          .status()
          .reason(),
      ErrorReason::kNotApplicable);
  EXPECT_EQ((*raw)->Call(9999, "", kTimeout).status().reason(),
            ErrorReason::kInvalidArgument);
  EXPECT_EQ((*raw)
                ->Call(static_cast<uint32_t>(MasterMethod::kExists),
                       std::string("\xff\xff\xff", 3), kTimeout)
                .status()
                .reason(),
            ErrorReason::kInvalidArgument);
  // A valid call on the same endpoint still answers.
  proto::ExistsRequest req;
  req.add_keys("absent");
  Result<std::string> answer =
      (*raw)->Call(static_cast<uint32_t>(MasterMethod::kExists),
                   req.SerializeAsString(), kTimeout);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  proto::ExistsResponse resp;
  ASSERT_TRUE(resp.ParseFromString(*answer));
  ASSERT_EQ(resp.results_size(), 1);
  EXPECT_FALSE(resp.results(0).info().exists());
}

TEST_F(ControlLaneTest, AStandbyRefusesLaneCallsAsNotLeader) {
  // A source that refuses every call, as a standby does.
  class Standby final : public MasterSource {
   public:
    Result<ServingMaster> Acquire(Caller, std::string* leader) override {
      *leader = "elsewhere:1";
      return Status(ErrorReason::kNotLeader, "standby");
    }
  } standby;
  MasterService service(&standby);
  Result<std::unique_ptr<ControlLaneServer>> lane =
      ControlLaneServer::Create(&service, {.transports = kTransports});
  ASSERT_TRUE(lane.ok());
  Result<std::unique_ptr<ControlLaneClient>> client =
      ControlLaneClient::Create(kTransports);
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Connect((*lane)->address()).ok());
  proto::ExistsRequest req;
  req.add_keys("a");
  EXPECT_EQ((*client)
                ->Call(static_cast<uint32_t>(MasterMethod::kExists),
                       req.SerializeAsString(), kTimeout)
                .status()
                .reason(),
            ErrorReason::kNotLeader);
}

TEST(ControlLaneClientTest, NoAnswerIsATimeoutAndNoConnectionUnavailable) {
  Result<std::unique_ptr<ControlLaneClient>> client =
      ControlLaneClient::Create(kTransports);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->Call(0, "", kTimeout).status().reason(),
            ErrorReason::kUnavailable);
  // A worker whose lane handler never answers.
  Result<std::unique_ptr<UcxContext>> context = UcxContext::Create(kTransports);
  ASSERT_TRUE(context.ok());
  Mutex mu;
  Result<std::unique_ptr<UcxWorker>> silent =
      UcxWorker::Create((*context)->handle(), &mu);
  ASSERT_TRUE(silent.ok());
  {
    // (UCX 1.13 crashes a worker that has no active-message handler at
    // all when a message reaches it; every worker of this project
    // registers one. See docs/design/control-path.md.)
    MutexLock lock(&mu);
    ucp_am_handler_param_t param{};
    param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                       UCP_AM_HANDLER_PARAM_FIELD_CB |
                       UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    param.id = kControlLaneRequestAmId;
    param.flags = UCP_AM_FLAG_WHOLE_MSG;
    param.cb = [](void*, const void*, size_t, void*, size_t,
                  const ucp_am_recv_param_t*) { return UCS_OK; };
    ASSERT_EQ(ucp_worker_set_am_recv_handler((*silent)->handle(), &param),
              UCS_OK);
  }
  ASSERT_TRUE((*client)->Connect((*silent)->address()).ok());
  Result<std::string> answer =
      (*client)->Call(4, "", std::chrono::milliseconds(100));
  EXPECT_EQ(answer.status().reason(), ErrorReason::kTimeout);
  EXPECT_EQ((*client)->stats().timeouts, 1u);
  (*client).reset();  // before the worker it was connected to
}

TEST_F(ControlLaneTest, ManyThreadsShareOneLane) {
  constexpr int kThreads = 4;
  constexpr int kCalls = 300;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(Put("k" + std::to_string(t), 10 + t).ok());
  }
  const uint64_t before = lane_api_->lane_calls();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<std::string> keys = {"k" + std::to_string(t)};
      for (int i = 0; i < kCalls; ++i) {
        auto e = lane_api_->Exists(keys);
        if (!e[0].ok() || !e[0]->exists ||
            e[0]->size != static_cast<uint64_t>(10 + t)) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  // Connected before the threads started (SetUp): the calls take the lane
  // (a call whose endpoint failed under it would go over gRPC).
  EXPECT_GE(lane_api_->lane_calls() - before, uint64_t{kThreads * kCalls / 2});
}

}  // namespace
}  // namespace control_lane_test
}  // namespace mooncake_tier::rpc::service_test

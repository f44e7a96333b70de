#include "ha/etcd_client.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "ha/etcd_json.h"
#include "httplib.h"

namespace mooncake_tier::ha {

using nlohmann::json;
// The gateway's encoding lives in etcd_json.{h,cc}.
using etcd_json::Base64Encode;
using etcd_json::ErrorReply;
using etcd_json::EtcdErrorOf;
using etcd_json::HeaderRevision;
using etcd_json::kMaxMessageBytes;
using etcd_json::LeaderKeyJson;
using etcd_json::Malformed;
using etcd_json::ParseKeyValue;
using etcd_json::ParseWatchMessage;
using etcd_json::PrefixEnd;
using etcd_json::ReplyReader;

namespace {

using SteadyClock = std::chrono::steady_clock;

Status LeaseGone(int64_t lease) {
  return Status(ErrorReason::kObjectNotFound,
                "lease " + std::to_string(lease) + " is gone");
}

Status TransportError(httplib::Error error, const std::string& endpoint) {
  return Status(ErrorReason::kUnavailable,
                "etcd at " + endpoint + ": " + httplib::to_string(error));
}

// The request never left this process: safe to try another endpoint.
bool NotSent(httplib::Error error) {
  return error == httplib::Error::Connection ||
         error == httplib::Error::ConnectionTimeout;
}

httplib::Request PostRequest(std::string path, std::string body) {
  httplib::Request request;
  request.method = "POST";
  request.path = std::move(path);
  request.body = std::move(body);
  request.set_header("Content-Type", "application/json");
  return request;
}

}  // namespace

// ---------------------------------------------------------------------------
// CallCanceller

void CallCanceller::Cancel() {
  MutexLock lock(&mu_);
  cancelled_ = true;
  // httplib's stop() reaches a request only once it holds its socket; one
  // still connecting is reached by a later round. A call on this thread
  // (Cancel from inside on_batch) is stopped but not waited for.
  while (true) {
    bool others = false;
    for (const Active& a : active_) {
      a.http->stop();
      others = others || a.thread != std::this_thread::get_id();
    }
    if (!others) return;
    detached_.WaitFor(std::chrono::milliseconds(5));
  }
}

bool CallCanceller::cancelled() const {
  MutexLock lock(&mu_);
  return cancelled_;
}

bool CallCanceller::Attach(httplib::Client* http) {
  MutexLock lock(&mu_);
  if (cancelled_) return false;
  active_.push_back({http, std::this_thread::get_id()});
  return true;
}

void CallCanceller::Detach(httplib::Client* http) {
  MutexLock lock(&mu_);
  std::erase_if(active_, [http](const Active& a) { return a.http == http; });
  detached_.SignalAll();
}

// ---------------------------------------------------------------------------
// EtcdClient: construction, connections, the two ways of calling.

struct EtcdClient::StreamOutcome {
  // OK when the reply completed or on_data stopped it; otherwise why not
  // (ABORTED when cancelled, UNAVAILABLE, an etcd error).
  Status status;
  bool stopped = false;  // on_data returned false
  httplib::Error transport = httplib::Error::Success;
  std::string endpoint;
};

Result<std::unique_ptr<EtcdClient>> EtcdClient::Create(
    EtcdClientOptions options) {
  if (options.endpoints.empty())
    return Status::InvalidArgument("no etcd endpoint given");
  using std::chrono::milliseconds;
  for (milliseconds t :
       {options.call_timeout, options.connect_timeout, options.campaign_timeout,
        options.watch_idle_timeout}) {
    if (t <= milliseconds::zero())
      return Status::InvalidArgument("etcd timeouts must be > 0");
  }
  std::vector<Endpoint> endpoints;
  for (const std::string& text : options.endpoints) {
    std::string_view rest = text;
    if (rest.starts_with("http://")) rest.remove_prefix(7);
    const size_t colon = rest.rfind(':');
    if (rest.find("://") != std::string_view::npos ||
        colon == std::string_view::npos || colon == 0) {
      return Status::InvalidArgument("etcd endpoint '" + text +
                                     "': expected host:port");
    }
    std::string_view host = rest.substr(0, colon);
    std::string_view port_text = rest.substr(colon + 1);
    int port = 0;
    auto [end, error] = std::from_chars(
        port_text.data(), port_text.data() + port_text.size(), port);
    if (error != std::errc() || end != port_text.data() + port_text.size() ||
        port <= 0 || port > 65535) {
      return Status::InvalidArgument("etcd endpoint '" + text + "': bad port");
    }
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);  // IPv6 literal
    }
    endpoints.push_back({std::string(host), port, std::string(rest)});
  }
  return std::unique_ptr<EtcdClient>(
      new EtcdClient(std::move(options), std::move(endpoints)));
}

EtcdClient::EtcdClient(EtcdClientOptions options,
                       std::vector<Endpoint> endpoints)
    : options_(std::move(options)),
      endpoints_(std::move(endpoints)),
      idle_(endpoints_.size()) {}

EtcdClient::~EtcdClient() = default;

std::string EtcdClient::CurrentEndpoint() const {
  return endpoints_[current_.load(std::memory_order_relaxed)].name;
}

std::unique_ptr<httplib::Client> EtcdClient::NewClient(
    size_t index, std::chrono::milliseconds read_timeout) const {
  auto http = std::make_unique<httplib::Client>(endpoints_[index].host,
                                                endpoints_[index].port);
  http->set_connection_timeout(options_.connect_timeout);
  http->set_read_timeout(read_timeout);
  http->set_write_timeout(options_.call_timeout);
  // httplib writes headers and body separately: without this, Nagle's
  // algorithm and delayed ACKs add ~40 ms to a call.
  http->set_tcp_nodelay(true);
  return http;
}

std::unique_ptr<httplib::Client> EtcdClient::TakeClient(size_t index) {
  {
    MutexLock lock(&pool_mu_);
    std::vector<std::unique_ptr<httplib::Client>>& idle = idle_[index];
    if (!idle.empty()) {
      std::unique_ptr<httplib::Client> http = std::move(idle.back());
      idle.pop_back();
      return http;
    }
  }
  std::unique_ptr<httplib::Client> http =
      NewClient(index, options_.call_timeout);
  http->set_keep_alive(true);
  return http;
}

void EtcdClient::ReturnClient(size_t index,
                              std::unique_ptr<httplib::Client> http) {
  MutexLock lock(&pool_mu_);
  if (idle_[index].size() < options_.max_idle_connections) {
    idle_[index].push_back(std::move(http));
  }
}

void EtcdClient::LeaveEndpoint(size_t index) {
  size_t expected = index;
  current_.compare_exchange_strong(expected, (index + 1) % endpoints_.size(),
                                   std::memory_order_relaxed);
}

Result<json> EtcdClient::Call(std::string_view path, const json& request) {
  const std::string target(path);
  const size_t first = current_.load(std::memory_order_relaxed);
  Status failure;
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    const size_t index = (first + i) % endpoints_.size();
    const std::string& endpoint = endpoints_[index].name;
    std::unique_ptr<httplib::Client> http = TakeClient(index);
    httplib::Request req = PostRequest(target, request.dump());
    int http_status = 0;
    std::string body;
    req.response_handler = [&](const httplib::Response& response) {
      http_status = response.status;
      return true;
    };
    req.content_receiver = [&](const char* data, size_t size, uint64_t,
                               uint64_t) {
      body.append(data, size);
      return body.size() < kMaxMessageBytes;
    };
    httplib::Response response;
    httplib::Error error = httplib::Error::Success;
    if (http->send(req, response, error)) {
      ReturnClient(index, std::move(http));
    } else if (http_status == 0 || !json::accept(body)) {
      failure = TransportError(error, endpoint);
      LeaveEndpoint(index);
      if (NotSent(error)) continue;
      return failure;
    }
    // Else the reply arrived whole but its end did not parse: etcd closes
    // every error reply with an HTTP trailer, which httplib 0.11 cannot
    // read. The connection is dropped with `http`.
    if (index != first) current_.store(index, std::memory_order_relaxed);
    if (http_status != 200) {
      Status etcd_error = ErrorReply(http_status, body, endpoint);
      if (etcd_error.reason() == ErrorReason::kUnavailable) {
        LeaveEndpoint(index);
      }
      return etcd_error;
    }
    json reply = json::parse(body, nullptr, false);
    if (!reply.is_object()) return Malformed(target, body);
    // A 200 may still carry an error (a stream's message, LeaseGrant's
    // error field).
    if (std::optional<Status> etcd_error = EtcdErrorOf(reply, endpoint)) {
      return *etcd_error;
    }
    return reply;
  }
  return failure;
}

EtcdClient::StreamOutcome EtcdClient::Stream(
    std::string_view path, const std::string& body,
    std::chrono::milliseconds read_timeout, CallCanceller* cancel,
    const std::function<bool(std::string_view)>& on_data) {
  const size_t first = current_.load(std::memory_order_relaxed);
  StreamOutcome outcome;
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    const size_t index = (first + i) % endpoints_.size();
    outcome.endpoint = endpoints_[index].name;
    std::unique_ptr<httplib::Client> http = NewClient(index, read_timeout);
    if (cancel != nullptr && !cancel->Attach(http.get())) {
      outcome.status = Status(ErrorReason::kAborted, "cancelled");
      return outcome;
    }
    httplib::Request request = PostRequest(std::string(path), body);
    int http_status = 0;
    std::string error_body;  // of a reply other than 200, kept whole
    request.response_handler = [&](const httplib::Response& response) {
      http_status = response.status;
      return true;
    };
    request.content_receiver = [&](const char* data, size_t size, uint64_t,
                                   uint64_t) {
      if (http_status != 200) {
        error_body.append(data, std::min(size, kMaxMessageBytes));
        return error_body.size() < kMaxMessageBytes;
      }
      outcome.stopped = !on_data(std::string_view(data, size));
      return !outcome.stopped;
    };
    httplib::Response response;
    httplib::Error error = httplib::Error::Success;
    const bool completed = http->send(request, response, error);
    if (cancel != nullptr) cancel->Detach(http.get());
    // A reply that completed is returned even if Cancel() came meanwhile:
    // a campaign that won must not look lost.
    if (!completed && cancel != nullptr && cancel->cancelled()) {
      outcome.status = Status(ErrorReason::kAborted, "cancelled");
      return outcome;
    }
    if (outcome.stopped) return outcome;
    if (completed || http_status > 0) {
      if (index != first) current_.store(index, std::memory_order_relaxed);
      if (http_status != 200) {
        outcome.status = ErrorReply(http_status, error_body, outcome.endpoint);
      } else if (!completed) {
        outcome.transport = error;
        outcome.status = TransportError(error, outcome.endpoint);
      }
      return outcome;
    }
    outcome.transport = error;
    outcome.status = TransportError(error, outcome.endpoint);
    // A long call's read timeout is its own business (a campaign that
    // waited long enough), not the endpoint's.
    if (!NotSent(error)) return outcome;
    LeaveEndpoint(index);
  }
  return outcome;
}

// ---------------------------------------------------------------------------
// Leases

Result<LeaseGrant> EtcdClient::GrantLease(int64_t ttl_seconds) {
  if (ttl_seconds <= 0)
    return Status::InvalidArgument("lease TTL must be > 0 seconds");
  MT_ASSIGN_OR_RETURN(json reply, Call("/v3/lease/grant",
                                       {{"TTL", std::to_string(ttl_seconds)}}));
  ReplyReader r(reply, "lease/grant");
  LeaseGrant grant{r.Int("ID"), r.Int("TTL")};
  if (r.ok() && (grant.id == 0 || grant.ttl_seconds <= 0)) {
    r.Fail("no lease ID or TTL");
  }
  if (!r.ok()) return r.status();
  return grant;
}

Result<int64_t> EtcdClient::RenewLease(int64_t lease) {
  MT_ASSIGN_OR_RETURN(
      json reply, Call("/v3/lease/keepalive", {{"ID", std::to_string(lease)}}));
  // keepalive is a stream: its one answer comes wrapped in "result".
  ReplyReader r(reply, "lease/keepalive");
  const json* result = r.RequiredObject("result");
  if (!r.ok()) return r.status();
  ReplyReader rr(*result, "lease/keepalive");
  const int64_t ttl = rr.Int("TTL");
  if (!rr.ok()) return rr.status();
  // A lease that is gone is answered with 200 and no TTL.
  if (ttl <= 0) return LeaseGone(lease);
  return ttl;
}

Status EtcdClient::RevokeLease(int64_t lease) {
  return Call("/v3/lease/revoke", {{"ID", std::to_string(lease)}}).status();
}

Result<int64_t> EtcdClient::LeaseTimeToLive(int64_t lease) {
  MT_ASSIGN_OR_RETURN(json reply, Call("/v3/lease/timetolive",
                                       {{"ID", std::to_string(lease)}}));
  ReplyReader r(reply, "lease/timetolive");
  // -1 when gone; absent (0) in the lease's last second.
  const int64_t ttl = r.Int("TTL");
  if (!r.ok()) return r.status();
  if (ttl < 0) return LeaseGone(lease);
  return ttl;
}

// ---------------------------------------------------------------------------
// Keys

Result<int64_t> EtcdClient::Put(std::string_view key, std::string_view value,
                                int64_t lease) {
  if (key.empty()) return Status::InvalidArgument("etcd key must not be empty");
  json request = {{"key", Base64Encode(key)}, {"value", Base64Encode(value)}};
  if (lease != 0) request["lease"] = std::to_string(lease);
  MT_ASSIGN_OR_RETURN(json reply, Call("/v3/kv/put", request));
  return HeaderRevision(reply, "kv/put");
}

Result<std::optional<KeyValue>> EtcdClient::Get(std::string_view key) {
  if (key.empty()) return Status::InvalidArgument("etcd key must not be empty");
  MT_ASSIGN_OR_RETURN(json reply,
                      Call("/v3/kv/range", {{"key", Base64Encode(key)}}));
  ReplyReader r(reply, "kv/range");
  const json::array_t& kvs = r.Array("kvs");
  if (!r.ok()) return r.status();
  if (kvs.empty()) return std::optional<KeyValue>();
  MT_ASSIGN_OR_RETURN(KeyValue kv, ParseKeyValue(kvs.front(), "kv/range"));
  return std::optional<KeyValue>(std::move(kv));
}

Result<PrefixRange> EtcdClient::GetPrefix(std::string_view prefix) {
  // etcd refuses an empty key; "\0" with range_end "\0" means every key.
  const std::string start =
      prefix.empty() ? std::string(1, '\0') : std::string(prefix);
  MT_ASSIGN_OR_RETURN(
      json reply,
      Call("/v3/kv/range", {{"key", Base64Encode(start)},
                            {"range_end", Base64Encode(PrefixEnd(prefix))}}));
  PrefixRange range;
  MT_ASSIGN_OR_RETURN(range.revision, HeaderRevision(reply, "kv/range"));
  ReplyReader r(reply, "kv/range");
  const json::array_t& kvs = r.Array("kvs");
  if (!r.ok()) return r.status();
  for (const json& item : kvs) {
    MT_ASSIGN_OR_RETURN(KeyValue kv, ParseKeyValue(item, "kv/range"));
    range.kvs.push_back(std::move(kv));
  }
  return range;
}

Result<bool> EtcdClient::Delete(std::string_view key) {
  if (key.empty()) return Status::InvalidArgument("etcd key must not be empty");
  MT_ASSIGN_OR_RETURN(json reply,
                      Call("/v3/kv/deleterange", {{"key", Base64Encode(key)}}));
  ReplyReader r(reply, "kv/deleterange");
  const int64_t deleted = r.Int("deleted");
  if (!r.ok()) return r.status();
  return deleted > 0;
}

Result<bool> EtcdClient::FencedWrite(std::string_view guard_key,
                                     int64_t guard_revision,
                                     const std::vector<WriteOp>& ops) {
  if (guard_key.empty() || guard_revision <= 0) {
    return Status::InvalidArgument(
        "a fenced write needs a guard key and revision");
  }
  if (ops.empty())
    return Status::InvalidArgument("a fenced write needs at least one op");
  json success = json::array();
  for (const WriteOp& op : ops) {
    if (op.key.empty())
      return Status::InvalidArgument("etcd key must not be empty");
    if (op.kind == WriteOp::Kind::kDelete) {
      success.push_back(
          json{{"request_delete_range", {{"key", Base64Encode(op.key)}}}});
      continue;
    }
    json put = {{"key", Base64Encode(op.key)},
                {"value", Base64Encode(op.value)}};
    if (op.lease != 0) put["lease"] = std::to_string(op.lease);
    success.push_back(json{{"request_put", std::move(put)}});
  }
  const json compare = {{"key", Base64Encode(guard_key)},
                        {"target", "CREATE"},
                        {"result", "EQUAL"},
                        {"create_revision", std::to_string(guard_revision)}};
  MT_ASSIGN_OR_RETURN(json reply,
                      Call("/v3/kv/txn", {{"compare", json::array({compare})},
                                          {"success", std::move(success)}}));
  // A failed compare is answered with 200 and no "succeeded".
  ReplyReader r(reply, "kv/txn");
  const bool succeeded = r.Bool("succeeded");
  if (!r.ok()) return r.status();
  return succeeded;
}

// ---------------------------------------------------------------------------
// Elections

Result<LeaderKey> EtcdClient::Campaign(std::string_view name, int64_t lease,
                                       std::string_view value,
                                       CallCanceller* cancel) {
  if (name.empty())
    return Status::InvalidArgument("election name must not be empty");
  if (lease == 0) return Status::InvalidArgument("a campaign needs a lease");
  const std::string body = json{
      {"name", Base64Encode(name)},
      {"lease", std::to_string(lease)},
      {"value",
       Base64Encode(value)}}.dump();
  std::string reply_text;
  const SteadyClock::time_point start = SteadyClock::now();
  StreamOutcome outcome =
      Stream("/v3/election/campaign", body, options_.campaign_timeout, cancel,
             [&reply_text](std::string_view data) {
               reply_text.append(data);
               return reply_text.size() < kMaxMessageBytes;
             });
  if (outcome.stopped) return Malformed("election/campaign", reply_text);
  if (outcome.transport == httplib::Error::Read &&
      SteadyClock::now() - start >= options_.campaign_timeout * 9 / 10) {
    // httplib reports its read timeout as a failed read.
    return Status(ErrorReason::kTimeout,
                  "no leadership of '" + std::string(name) + "' within " +
                      std::to_string(options_.campaign_timeout.count()) +
                      " ms");
  }
  MT_RETURN_IF_ERROR(outcome.status);
  const json reply = json::parse(reply_text, nullptr, false);
  if (std::optional<Status> error = EtcdErrorOf(reply, outcome.endpoint)) {
    return *error;
  }
  ReplyReader r(reply, "election/campaign");
  const json* leader = r.RequiredObject("leader");
  if (!r.ok()) return r.status();
  ReplyReader l(*leader, "election/campaign");
  LeaderKey key{l.Bytes("name"), l.Bytes("key"), l.Int("rev"), l.Int("lease")};
  if (l.ok() && (key.key.empty() || key.revision <= 0)) l.Fail("no key");
  if (!l.ok()) return l.status();
  // See the header: the key may be gone even though etcd says "leader".
  MT_ASSIGN_OR_RETURN(std::optional<KeyValue> current, Get(key.key));
  if (!current || current->create_revision != key.revision) {
    return Status(ErrorReason::kObjectNotFound,
                  "campaign for '" + std::string(name) +
                      "' ended without a key: lease " + std::to_string(lease) +
                      " expired or the candidate was withdrawn");
  }
  return key;
}

Result<std::optional<KeyValue>> EtcdClient::Leader(std::string_view name) {
  if (name.empty())
    return Status::InvalidArgument("election name must not be empty");
  Result<json> reply =
      Call("/v3/election/leader", {{"name", Base64Encode(name)}});
  if (!reply.ok()) {
    if (reply.status().message().ends_with("election: no leader")) {
      return std::optional<KeyValue>();
    }
    return reply.status();
  }
  ReplyReader r(*reply, "election/leader");
  const json* kv = r.RequiredObject("kv");
  if (!r.ok()) return r.status();
  MT_ASSIGN_OR_RETURN(KeyValue leader, ParseKeyValue(*kv, "election/leader"));
  return std::optional<KeyValue>(std::move(leader));
}

Status EtcdClient::Resign(const LeaderKey& leader) {
  return Call("/v3/election/resign", {{"leader", LeaderKeyJson(leader)}})
      .status();
}

Status EtcdClient::Proclaim(const LeaderKey& leader, std::string_view value) {
  return Call("/v3/election/proclaim", {{"leader", LeaderKeyJson(leader)},
                                        {"value", Base64Encode(value)}})
      .status();
}

// ---------------------------------------------------------------------------
// Watches

Status EtcdClient::WatchPrefix(
    std::string_view prefix, int64_t start_revision,
    const std::function<bool(const WatchBatch&)>& on_batch,
    CallCanceller* cancel) {
  if (start_revision < 0)
    return Status::InvalidArgument("watch start revision must be >= 0");
  int64_t next_revision = start_revision;
  bool created_seen = false;
  while (true) {
    Status status =
        WatchOnce(prefix, &next_revision, &created_seen, on_batch, cancel);
    // TIMEOUT: silence after etcd had answered; check it is still there.
    if (status.reason() != ErrorReason::kTimeout) return status;
  }
}

Status EtcdClient::WatchOnce(
    std::string_view prefix, int64_t* next_revision, bool* created_seen,
    const std::function<bool(const WatchBatch&)>& on_batch,
    CallCanceller* cancel) {
  const std::string start =
      prefix.empty() ? std::string(1, '\0') : std::string(prefix);
  json create = {{"key", Base64Encode(start)},
                 {"range_end", Base64Encode(PrefixEnd(prefix))}};
  if (*next_revision > 0) {
    create["start_revision"] = std::to_string(*next_revision);
  }
  const std::string body = json{{"create_request", create}}.dump();

  std::string pending;  // bytes of a message not yet complete
  Status failure;
  bool answered = false;  // this connection's "created" arrived
  SteadyClock::time_point last_data = SteadyClock::now();
  const std::string endpoint = CurrentEndpoint();  // for etcd's errors
  // Messages end with '\n'; httplib's chunks need not match messages.
  auto on_data = [&](std::string_view data) {
    last_data = SteadyClock::now();
    pending.append(data);
    size_t end;
    while ((end = pending.find('\n')) != std::string::npos) {
      const std::string_view line(pending.data(), end);
      WatchBatch batch;
      if (line.find_first_not_of(" \r\t") != std::string_view::npos) {
        failure = ParseWatchMessage(line, endpoint, &batch);
      }
      pending.erase(0, end + 1);
      if (!failure.ok()) return false;
      if (batch.created) {
        answered = true;
        if (*next_revision == 0) *next_revision = batch.revision + 1;
        if (*created_seen) continue;  // a reconnection: not news
        *created_seen = true;
      } else if (batch.events.empty()) {
        continue;
      }
      for (const WatchBatch::Event& e : batch.events) {
        *next_revision = std::max(*next_revision, e.kv.mod_revision + 1);
      }
      if (!on_batch(batch)) return false;
    }
    if (pending.size() > kMaxMessageBytes) {
      failure = Malformed("watch", pending);
      return false;
    }
    return true;
  };
  StreamOutcome outcome =
      Stream("/v3/watch", body, options_.watch_idle_timeout, cancel, on_data);
  if (outcome.status.reason() == ErrorReason::kAborted) return outcome.status;
  if (!failure.ok()) return failure;
  if (outcome.stopped) return Status::Ok();
  if (answered && outcome.transport == httplib::Error::Read &&
      SteadyClock::now() - last_data >= options_.watch_idle_timeout * 9 / 10) {
    return Status(ErrorReason::kTimeout, "watch idle");
  }
  MT_RETURN_IF_ERROR(outcome.status);
  return Status(ErrorReason::kUnavailable,
                "etcd at " + outcome.endpoint + " ended the watch stream");
}

}  // namespace mooncake_tier::ha

// The admin ports' HTTP edge over HTTPS, with certificates made by
// scripts/make-test-ca.sh: HTTPS is served and plain HTTP refused; silent
// and half-finished handshakes neither starve /healthz nor outlive the
// header deadline; the edge's rules hold over TLS; a reload serves a new
// certificate to new connections only and changes nothing when it fails;
// Start refuses files it cannot use. Real sockets, short deadlines; the
// tests assert what happened to connections, never how long it took.

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "admin_server/admin_server.h"
#include "admin_server/http_edge.h"
#include "admin_server/master_admin_facade.h"
#include "admin_server/node_admin_server.h"
#include "tests/support/eventually.h"
#include "tests/support/master_harness.h"
#include "tests/support/raw_http_client.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_ca.h"

namespace mooncake_tier::admin {
namespace http_edge_tls_test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

using ::mooncake_tier::testing::CertificateSerial;
using ::mooncake_tier::testing::Eventually;
using ::mooncake_tier::testing::HttpGet;
using ::mooncake_tier::testing::ParseHttpResponses;
using ::mooncake_tier::testing::RawHttpResponse;
using ::mooncake_tier::testing::RawTlsOptions;
using ::mooncake_tier::testing::TempDir;
using ::mooncake_tier::testing::TestCa;
using RawClient = ::mooncake_tier::testing::RawHttpClient;

constexpr milliseconds kWait(5000);

// A self-signed certificate whose validity ended yesterday, and its key.
void WriteExpiredCertificate(const std::string& cert_file,
                             const std::string& key_file) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  ASSERT_NE(key, nullptr);
  X509* certificate = X509_new();
  X509_set_version(certificate, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(certificate), 7);
  X509_gmtime_adj(X509_getm_notBefore(certificate), -2 * 86400);
  X509_gmtime_adj(X509_getm_notAfter(certificate), -86400);
  X509_set_pubkey(certificate, key);
  X509_NAME* name = X509_get_subject_name(certificate);
  X509_NAME_add_entry_by_txt(
      name, "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(certificate, name);
  ASSERT_GT(X509_sign(certificate, key, EVP_sha256()), 0);
  FILE* out = std::fopen(cert_file.c_str(), "w");
  ASSERT_NE(out, nullptr);
  PEM_write_X509(out, certificate);
  std::fclose(out);
  out = std::fopen(key_file.c_str(), "w");
  ASSERT_NE(out, nullptr);
  PEM_write_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(out);
  X509_free(certificate);
  EVP_PKEY_free(key);
}

// /healthz inline, /private needs "X-Token: yes"; answers
// "<method> <target> <body>".
class EchoHandler : public HttpEdgeHandler {
 public:
  HttpAdmission Admit(const HttpHead& head) override {
    HttpAdmission admission;
    if (head.target == "/healthz") admission.lane = HttpLane::kInline;
    if (head.target == "/private" && head.Header("x-token") != "yes") {
      admission.answer = AdminResponse::Error(401, "UNAUTHENTICATED",
                                              "TOKEN_REQUIRED", "no token");
      admission.refusal = HttpRefusal::kUnauthenticated;
    }
    return admission;
  }
  AdminResponse Handle(const HttpHead& head, std::string body) override {
    return AdminResponse::Text(200,
                               head.method + " " + head.target + " " + body);
  }
};

// Two throwaway CAs (scripts/make-test-ca.sh), made once for the suite;
// each test serves copies of CA a's master certificate from its own
// directory, which it may change and reload.
class HttpEdgeTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    for (const char* name : {"a", "b"}) {
      Result<TestCa> ca = TestCa::Make(dir_->path() + "/" + name);
      if (!ca.ok()) ca_error_ += ca.status().ToString();
    }
    // Clients trust both CAs, so certificates of either verify.
    std::ofstream(Trust()) << testing::ReadFileOrEmpty(A("ca.pem"))
                           << testing::ReadFileOrEmpty(B("ca.pem"));
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string A(const std::string& file) {
    return dir_->path() + "/a/" + file;
  }
  static std::string B(const std::string& file) {
    return dir_->path() + "/b/" + file;
  }
  static std::string Trust() { return dir_->path() + "/trust.pem"; }

  void SetUp() override {
    ASSERT_EQ(ca_error_, "");
    cert_ = served_.path() + "/admin.pem";
    key_ = served_.path() + "/admin.key";
    Serve(A("master.pem"), A("master.key"));
  }
  // Puts `cert` and `key` where the edge reads them.
  void Serve(const std::string& cert, const std::string& key) {
    fs::copy_file(cert, cert_, fs::copy_options::overwrite_existing);
    fs::copy_file(key, key_, fs::copy_options::overwrite_existing);
  }
  void Start(HttpEdgeOptions options = {}) {
    options.max_body_bytes = 4096;
    options.tls = HttpEdgeTls{cert_, key_};
    auto edge = HttpEdge::Start(options, &handler_, "the test edge");
    ASSERT_TRUE(edge.ok()) << edge.status().ToString();
    edge_ = std::move(*edge);
  }
  void TearDown() override {
    if (edge_ == nullptr) return;
    // Whatever a test did, a new HTTPS client is still answered.
    std::vector<RawHttpResponse> responses = Exchange(HttpGet("/healthz"));
    ASSERT_EQ(responses.size(), 1u) << "the edge stopped answering";
    EXPECT_EQ(responses[0].status, 200);
    edge_->Shutdown();
  }

  std::unique_ptr<RawClient> Connect() {
    auto client =
        std::make_unique<RawClient>(edge_->port(), RawTlsOptions{Trust()});
    EXPECT_TRUE(client->connected()) << client->tls_error();
    return client;
  }
  // One request on a new HTTPS connection.
  std::vector<RawHttpResponse> Exchange(const std::string& request) {
    std::unique_ptr<RawClient> client = Connect();
    if (!client->connected() || !client->Send(request)) return {};
    return ParseHttpResponses(client->ReadResponses(1, kWait));
  }
  // The serial of the certificate a new connection gets.
  std::string ServedSerial() { return Connect()->PeerCertificateSerial(); }
  uint64_t Refused(HttpRefusal refusal) const {
    return edge_->stats().refused[static_cast<size_t>(refusal)];
  }

  static TempDir* dir_;
  static std::string ca_error_;
  TempDir served_;
  std::string cert_;
  std::string key_;
  EchoHandler handler_;
  std::unique_ptr<HttpEdge> edge_;
};

TempDir* HttpEdgeTlsTest::dir_ = nullptr;
std::string HttpEdgeTlsTest::ca_error_;

TEST_F(HttpEdgeTlsTest, ServesHttpsAndRefusesPlainHttp) {
  Start();
  std::unique_ptr<RawClient> client = Connect();
  EXPECT_EQ(client->PeerCertificateSerial(),
            CertificateSerial(A("master.pem")));
  ASSERT_TRUE(client->Send(HttpGet("/healthz") + HttpGet("/a")));
  auto responses = ParseHttpResponses(client->ReadResponses(2, kWait));
  ASSERT_EQ(responses.size(), 2u);
  EXPECT_EQ(responses[0].body, "GET /healthz ");
  EXPECT_EQ(responses[1].body, "GET /a ");
  EXPECT_GT(edge_->stats().tls_not_after, 0);

  RawClient plain(edge_->port());
  ASSERT_TRUE(plain.Send(HttpGet("/healthz")));
  auto refused = ParseHttpResponses(plain.ReadResponses(1, kWait));
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].status, 400);
  EXPECT_NE(refused[0].body.find("TLS_REQUIRED"), std::string::npos);
  EXPECT_TRUE(plain.ClosedWithin(kWait));
  EXPECT_EQ(Refused(HttpRefusal::kTlsHandshake), 1u);

  RawClient garbage(edge_->port());
  ASSERT_TRUE(garbage.Send(std::string("\x01\x02\x03") + " not a ClientHello"));
  EXPECT_TRUE(garbage.ClosedWithin(kWait));
  EXPECT_TRUE(Eventually(
      [&] { return Refused(HttpRefusal::kTlsHandshake) == 2; }, kWait));
  EXPECT_EQ(Refused(HttpRefusal::kMalformed), 0u);
  // The first connection still works.
  ASSERT_TRUE(client->Send(HttpGet("/b")));
  EXPECT_EQ(ParseHttpResponses(client->ReadResponses(3, kWait)).size(), 3u);
}

TEST_F(HttpEdgeTlsTest, SilentAndHalfDoneHandshakesNeitherStarveNorLinger) {
  HttpEdgeOptions options;
  options.header_timeout = milliseconds(500);
  options.max_connections = 40;
  Start(options);
  // The first bytes of a ClientHello: a record header announcing 512
  // bytes, then the start of the message. The rest never comes.
  const std::string half_hello("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
                               11);
  std::vector<std::unique_ptr<RawClient>> half;
  for (int i = 0; i < 25; ++i) {
    half.push_back(std::make_unique<RawClient>(edge_->port()));
    ASSERT_TRUE(half.back()->Send(half_hello));
  }
  // Wait until the edge has them all, and their first bytes (idle ones
  // would make room).
  ASSERT_TRUE(
      Eventually([&] { return edge_->stats().connections_open == 25; }, kWait));
  std::this_thread::sleep_for(milliseconds(100));
  // Connected, never a byte: idle, so they make room when the port is full
  // (25 mid-handshake + 25 silent > 40).
  std::vector<std::unique_ptr<RawClient>> silent;
  for (int i = 0; i < 25; ++i) {
    silent.push_back(std::make_unique<RawClient>(edge_->port()));
    ASSERT_TRUE(silent.back()->connected());
  }
  std::vector<RawHttpResponse> health = Exchange(HttpGet("/healthz"));
  ASSERT_EQ(health.size(), 1u);
  EXPECT_EQ(health[0].status, 200);
  // Each is closed at its deadline (or earlier, to make room).
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  auto left = [&] {
    return std::max(milliseconds(0),
                    std::chrono::duration_cast<milliseconds>(
                        deadline - std::chrono::steady_clock::now()));
  };
  for (auto& client : half) EXPECT_TRUE(client->ClosedWithin(left()));
  for (auto& client : silent) EXPECT_TRUE(client->ClosedWithin(left()));
  EXPECT_TRUE(Eventually(
      [&] { return Refused(HttpRefusal::kTlsHandshake) == 25; }, kWait));
  EXPECT_TRUE(Eventually(
      [&] {
        const HttpEdgeStats stats = edge_->stats();
        return stats.idle_closed + stats.idle_evicted == 25;
      },
      kWait));
  EXPECT_GT(edge_->stats().idle_evicted, 0u);
  EXPECT_EQ(Refused(HttpRefusal::kConnectionLimit), 0u);
}

TEST_F(HttpEdgeTlsTest, TheEdgeRulesHoldOverTls) {
  HttpEdgeOptions options;
  options.header_timeout = milliseconds(500);
  options.idle_timeout = milliseconds(300);
  Start(options);
  {  // The token is checked before a body that never comes.
    std::unique_ptr<RawClient> client = Connect();
    ASSERT_TRUE(client->Send(
        "POST /private HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n"));
    auto responses = ParseHttpResponses(client->ReadResponses(1, kWait));
    ASSERT_EQ(responses.size(), 1u);
    EXPECT_EQ(responses[0].status, 401);
    EXPECT_TRUE(client->ClosedWithin(kWait));
    EXPECT_EQ(Refused(HttpRefusal::kUnauthenticated), 1u);
  }
  {  // Oversized headers: 431 and closed.
    std::unique_ptr<RawClient> client = Connect();
    ASSERT_TRUE(client->Send("GET /a HTTP/1.1\r\nHost: t\r\nX-Filler: " +
                             std::string(20000, 'x') + "\r\n\r\n"));
    auto responses = ParseHttpResponses(client->ReadResponses(1, kWait));
    ASSERT_EQ(responses.size(), 1u);
    EXPECT_EQ(responses[0].status, 431);
    EXPECT_TRUE(client->ClosedWithin(kWait));
  }
  {  // Headers that never end are cut at their deadline.
    std::unique_ptr<RawClient> client = Connect();
    ASSERT_TRUE(client->Send("GET /a HTTP/1.1\r\nHost: t\r\n"));
    EXPECT_TRUE(client->ClosedWithin(kWait));
    EXPECT_TRUE(Eventually(
        [&] { return Refused(HttpRefusal::kHeaderTimeout) == 1; }, kWait));
  }
  {  // A kept-alive connection closes after the idle timeout.
    std::unique_ptr<RawClient> client = Connect();
    ASSERT_TRUE(client->Send(HttpGet("/a")));
    ASSERT_EQ(ParseHttpResponses(client->ReadResponses(1, kWait)).size(), 1u);
    EXPECT_TRUE(client->ClosedWithin(kWait));
    EXPECT_TRUE(
        Eventually([&] { return edge_->stats().idle_closed == 1; }, kWait));
  }
  EXPECT_EQ(Refused(HttpRefusal::kTlsHandshake), 0u);
}

TEST_F(HttpEdgeTlsTest, AFailedReloadKeepsTheOldCertificate) {
  Start();
  const std::string serial = CertificateSerial(A("master.pem"));
  ASSERT_EQ(ServedSerial(), serial);
  const int64_t not_after = edge_->stats().tls_not_after;

  fs::remove(key_);
  Status reloaded = edge_->ReloadTls();
  EXPECT_EQ(reloaded.reason(), ErrorReason::kInvalidArgument);
  EXPECT_NE(reloaded.message().find(key_), std::string::npos)
      << reloaded.message();
  EXPECT_EQ(ServedSerial(), serial);

  Serve(A("master.pem"), B("master.key"));  // a key of another certificate
  reloaded = edge_->ReloadTls();
  EXPECT_EQ(reloaded.reason(), ErrorReason::kInvalidArgument);
  EXPECT_NE(reloaded.message().find(key_), std::string::npos)
      << reloaded.message();
  EXPECT_EQ(ServedSerial(), serial);

  Serve(A("master.key"), A("master.key"));  // a key where the chain goes
  reloaded = edge_->ReloadTls();
  EXPECT_EQ(reloaded.reason(), ErrorReason::kInvalidArgument);
  EXPECT_NE(reloaded.message().find(cert_), std::string::npos)
      << reloaded.message();
  EXPECT_EQ(ServedSerial(), serial);
  EXPECT_EQ(edge_->stats().tls_not_after, not_after);
}

TEST_F(HttpEdgeTlsTest, AReloadServesNewConnectionsOnly) {
  Start();
  std::unique_ptr<RawClient> before = Connect();
  ASSERT_TRUE(before->Send(HttpGet("/a")));
  ASSERT_EQ(ParseHttpResponses(before->ReadResponses(1, kWait)).size(), 1u);

  Serve(B("node.pem"), B("node.key"));
  ASSERT_TRUE(edge_->ReloadTls().ok());
  EXPECT_EQ(ServedSerial(), CertificateSerial(B("node.pem")));
  std::vector<RawHttpResponse> after = Exchange(HttpGet("/c"));
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].body, "GET /c ");

  // The connection made before keeps its certificate and keeps working.
  EXPECT_EQ(before->PeerCertificateSerial(),
            CertificateSerial(A("master.pem")));
  ASSERT_TRUE(before->Send(HttpGet("/b")));
  auto responses = ParseHttpResponses(before->ReadResponses(2, kWait));
  ASSERT_EQ(responses.size(), 2u);
  EXPECT_EQ(responses[1].body, "GET /b ");
}

TEST_F(HttpEdgeTlsTest, StartRefusesFilesItCannotUse) {
  EchoHandler handler;
  auto start = [&](const std::string& cert, const std::string& key) {
    HttpEdgeOptions options;
    options.tls = HttpEdgeTls{cert, key};
    return HttpEdge::Start(options, &handler, "the test edge").status();
  };
  const std::string missing = served_.path() + "/missing.pem";
  Status status = start(missing, key_);
  EXPECT_EQ(status.reason(), ErrorReason::kInvalidArgument);
  EXPECT_NE(status.message().find(missing), std::string::npos)
      << status.message();

  status = start(cert_, missing);
  EXPECT_EQ(status.reason(), ErrorReason::kInvalidArgument);
  EXPECT_NE(status.message().find(missing), std::string::npos)
      << status.message();

  status = start(A("master.pem"), B("master.key"));
  EXPECT_EQ(status.reason(), ErrorReason::kInvalidArgument);
  EXPECT_NE(status.message().find(B("master.key")), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("does not hold the key"), std::string::npos)
      << status.message();

  status = start(A("master.key"), A("master.key"));
  EXPECT_EQ(status.reason(), ErrorReason::kInvalidArgument);
  EXPECT_NE(status.message().find("certificate file '" + A("master.key")),
            std::string::npos)
      << status.message();

  const std::string expired = served_.path() + "/expired.pem";
  const std::string expired_key = served_.path() + "/expired.key";
  WriteExpiredCertificate(expired, expired_key);
  status = start(expired, expired_key);
  EXPECT_EQ(status.reason(), ErrorReason::kInvalidArgument);
  EXPECT_NE(status.message().find(expired + "' of the test edge expired at"),
            std::string::npos)
      << status.message();
}

// The admin server and a node's admin port over HTTPS: health, the API with
// its token, and ReloadTls forwarded to the edge.
TEST_F(HttpEdgeTlsTest, AdminServersServeHttpsAndReload) {
  testing::MasterHarness harness;
  MasterAdminFacade facade(&harness.master(), &harness.clock());
  AdminServerOptions options;
  options.port = 0;
  options.token = "s3cret";
  options.tls = HttpEdgeTls{cert_, key_};
  auto server = AdminServer::Start(options, &facade, nullptr);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->port();
  auto call = [&](const std::string& request) {
    RawClient client(port, RawTlsOptions{Trust()});
    EXPECT_TRUE(client.connected()) << client.tls_error();
    std::vector<RawHttpResponse> responses;
    if (client.Send(request)) {
      responses = ParseHttpResponses(client.ReadResponses(1, kWait));
    }
    return responses.empty() ? RawHttpResponse{} : responses[0];
  };
  EXPECT_EQ(call(HttpGet("/healthz")).status, 200);
  EXPECT_EQ(call(HttpGet("/api/v1/status")).status, 200);
  const std::string remove =
      "DELETE /api/v1/objects/missing HTTP/1.1\r\nHost: t\r\n";
  EXPECT_EQ(call(remove + "\r\n").status, 401);
  const RawHttpResponse removed =
      call(remove + "Authorization: Bearer s3cret\r\n\r\n");
  EXPECT_EQ(removed.status, 404);
  EXPECT_NE(removed.body.find("OBJECT_NOT_FOUND"), std::string::npos)
      << removed.body;

  Serve(B("master.pem"), B("master.key"));
  ASSERT_TRUE((*server)->ReloadTls().ok());
  RawClient reloaded(port, RawTlsOptions{Trust()});
  EXPECT_EQ(reloaded.PeerCertificateSerial(),
            CertificateSerial(B("master.pem")));

  AdminServerOptions node_options;
  node_options.port = 0;
  node_options.tls = HttpEdgeTls{cert_, key_};
  auto node = NodeAdminServer::Start(node_options, "n1", nullptr);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  Serve(A("node.pem"), A("node.key"));
  ASSERT_TRUE((*node)->ReloadTls().ok());
  RawClient node_client((*node)->port(), RawTlsOptions{Trust()});
  EXPECT_EQ(node_client.PeerCertificateSerial(),
            CertificateSerial(A("node.pem")));

  AdminServerOptions plain_options;
  plain_options.port = 0;
  auto plain = NodeAdminServer::Start(plain_options, "n2", nullptr);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->ReloadTls().reason(), ErrorReason::kNotApplicable);
}

}  // namespace
}  // namespace http_edge_tls_test
}  // namespace mooncake_tier::admin

// TLS on the gRPC plane (rpc/tls_credentials.h) with certificates from
// scripts/make-test-ca.sh: the checks files pass before gRPC sees them, a
// real MasterService over TLS where each caller's certificate is its role
// (mutual TLS), the stub's check that the server is the master, and
// reloads (a bad file keeps the identity, a good one is served within
// seconds).

#include "rpc/tls_credentials.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "rpc/call_authorizer.h"
#include "rpc/grpc_master_api.h"
#include "rpc/grpc_master_link.h"
#include "rpc/master_methods.h"
#include "rpc/master_service.h"
#include "rpc/proto/master.grpc.pb.h"
#include "rpc/rpc_server.h"
#include "tests/support/eventually.h"
#include "tests/support/master_harness.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_ca.h"

namespace mooncake_tier::rpc {
namespace tls_credentials_test {
namespace {

using testing::MasterHarness;
using testing::TestCa;

constexpr auto kShortDeadline = std::chrono::milliseconds(1500);

// Two unrelated CAs, made once for the whole file (each takes ~0.1 s).
class Cas {
 public:
  static const Cas& Get() {
    static const Cas* cas = new Cas();
    return *cas;
  }
  const TestCa& first() const { return *first_; }
  const TestCa& second() const { return *second_; }

 private:
  Cas() {
    first_ = std::make_unique<TestCa>(*TestCa::Make(dir_.path() + "/first"));
    second_ = std::make_unique<TestCa>(*TestCa::Make(dir_.path() + "/second"));
  }
  testing::TempDir dir_;
  std::unique_ptr<TestCa> first_;
  std::unique_ptr<TestCa> second_;
};

TlsFiles Files(const TestCa& ca, const std::string& role) {
  return {.cert = ca.cert(role), .key = ca.key(role), .ca = ca.ca()};
}

// A CA bundle alone: a client that shows no certificate.
TlsFiles CaOnly(const std::string& ca) {
  TlsFiles files;
  files.ca = ca;
  return files;
}

void Copy(const std::string& from, const std::string& to) {
  std::filesystem::copy_file(from, to,
                             std::filesystem::copy_options::overwrite_existing);
}

TEST(LoadTlsMaterialTest, AcceptsACertificateOfTheRoleAskedFor) {
  const TestCa& ca = Cas::Get().first();
  Result<TlsMaterial> master = LoadTlsMaterial(
      Files(ca, "master"), kTlsServer | kTlsClient, {TlsRole::kMaster});
  ASSERT_TRUE(master.ok()) << master.status().ToString();
  EXPECT_EQ(master->role, TlsRole::kMaster);
  EXPECT_GT(master->not_after, std::chrono::system_clock::now());
  EXPECT_NE(master->identity_pem.find("PRIVATE KEY"), std::string::npos);
  EXPECT_NE(master->identity_pem.find("CERTIFICATE"), std::string::npos);
  // A client with a CA alone shows no certificate.
  Result<TlsMaterial> bare =
      LoadTlsMaterial(CaOnly(ca.ca()), kTlsClient, {TlsRole::kClient});
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_TRUE(bare->identity_pem.empty());
  EXPECT_FALSE(bare->role.has_value());
}

TEST(LoadTlsMaterialTest, RefusesEachBadFileNamingIt) {
  const TestCa& ca = Cas::Get().first();
  const TestCa& other = Cas::Get().second();
  auto refusal = [](const TlsFiles& files, uint8_t uses, TlsRole role) {
    Result<TlsMaterial> material = LoadTlsMaterial(files, uses, {role});
    EXPECT_EQ(material.status().reason(), ErrorReason::kInvalidArgument);
    return material.status().message();
  };
  // Another role's certificate.
  EXPECT_NE(refusal(Files(ca, "node"), kTlsServer, TlsRole::kMaster)
                .find("spiffe://mooncake-tier/node', not "
                      "spiffe://mooncake-tier/master"),
            std::string::npos);
  // A client certificate cannot serve (its extended key usage).
  EXPECT_NE(refusal(Files(ca, "client"), kTlsServer, TlsRole::kClient)
                .find("as a server"),
            std::string::npos);
  // The key of another certificate.
  TlsFiles mismatched = Files(ca, "master");
  mismatched.key = ca.key("node");
  EXPECT_NE(refusal(mismatched, kTlsServer, TlsRole::kMaster)
                .find("does not match the certificate"),
            std::string::npos);
  // A chain that does not lead to the bundle.
  TlsFiles foreign = Files(ca, "master");
  foreign.ca = other.ca();
  EXPECT_NE(refusal(foreign, kTlsServer, TlsRole::kMaster)
                .find("against the CA bundle '" + other.ca() + "'"),
            std::string::npos);
  // Missing and garbage files.
  TlsFiles missing = Files(ca, "master");
  missing.cert = ca.dir() + "/nope.pem";
  EXPECT_NE(refusal(missing, kTlsServer, TlsRole::kMaster).find("nope.pem"),
            std::string::npos);
  TlsFiles garbage = Files(ca, "master");
  garbage.ca = ca.key("master");  // a key where the bundle should be
  EXPECT_NE(refusal(garbage, kTlsServer, TlsRole::kMaster)
                .find("holds no PEM certificate"),
            std::string::npos);
  TlsFiles half = Files(ca, "master");
  half.key.clear();
  EXPECT_NE(refusal(half, kTlsServer, TlsRole::kMaster).find("--tls-key"),
            std::string::npos);
}

TEST(TlsRoleTest, OnlyTheStoresUrisNameARole) {
  EXPECT_EQ(TlsRoleFromUri("spiffe://mooncake-tier/admin"), TlsRole::kAdmin);
  EXPECT_EQ(TlsRoleFromUri("spiffe://mooncake-tier/nodes"), std::nullopt);
  EXPECT_EQ(TlsRoleFromUri("spiffe://other/node"), std::nullopt);
  EXPECT_EQ(TlsRoleFromUri(""), std::nullopt);
  EXPECT_EQ(*ParseTlsClientAuth("optional"), TlsClientAuth::kOptional);
  EXPECT_FALSE(ParseTlsClientAuth("yes").ok());
}

// A MasterService served over TLS, callers' certificates required.
class TlsPlaneTest : public ::testing::Test {
 protected:
  TlsPlaneTest()
      : authorizer_(*CallAuthorizer::Create({}, /*certificates=*/true)),
        service_(
            &harness_.api(), &harness_.link(),
            {.clock = &harness_.clock(), .authorizer = authorizer_.get()}) {}

  void Serve(TlsFiles files, TlsRole role) {
    Result<std::unique_ptr<TlsIdentity>> identity =
        TlsIdentity::Create(std::move(files), kTlsServer, {role});
    ASSERT_TRUE(identity.ok()) << identity.status().ToString();
    server_identity_ = std::move(*identity);
    RpcServerOptions options;
    options.credentials =
        MakeServerCredentials(*server_identity_, TlsClientAuth::kRequire);
    Result<std::unique_ptr<RpcServer>> server =
        RpcServer::Start(options, {service_.grpc_service()});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
  }

  // Options dialing the server with `files` (no cert: the CA alone).
  GrpcChannelOptions Channel(const TlsFiles& files) const {
    GrpcChannelOptions options;
    options.target = server_->address();
    options.deadline = kShortDeadline;
    Result<std::unique_ptr<TlsIdentity>> identity = TlsIdentity::Create(
        files, kTlsClient,
        {TlsRole::kNode, TlsRole::kMaster, TlsRole::kClient, TlsRole::kAdmin});
    EXPECT_TRUE(identity.ok()) << identity.status().ToString();
    if (identity.ok()) options.tls = std::move(*identity);
    return options;
  }

  MasterHarness harness_;
  std::unique_ptr<CallAuthorizer> authorizer_;
  MasterService service_;
  std::unique_ptr<TlsIdentity> server_identity_;
  std::unique_ptr<RpcServer> server_;
};

TEST_F(TlsPlaneTest, EachCertificateMayMakeItsRolesCallsOnly) {
  const TestCa& ca = Cas::Get().first();
  Serve(Files(ca, "master"), TlsRole::kMaster);
  auto node_link = *GrpcMasterLink::Create(Channel(Files(ca, "node")));
  Result<NodeId> node =
      node_link->RegisterNode(MasterHarness::SmallNodeSpec("a"), {}, {});
  ASSERT_TRUE(node.ok()) << node.status().ToString();

  // A client's certificate: client calls, no node calls.
  auto client_link = *GrpcMasterLink::Create(Channel(Files(ca, "client")));
  const Status fake =
      client_link->RegisterNode(MasterHarness::SmallNodeSpec("fake"), {}, {})
          .status();
  EXPECT_EQ(fake.reason(), ErrorReason::kUnauthenticated);
  EXPECT_NE(fake.message().find("client's"), std::string::npos)
      << fake.message();
  EXPECT_EQ(client_link->DeregisterNode(*node).reason(),
            ErrorReason::kUnauthenticated);
  EXPECT_EQ(harness_.master().GetStats().nodes_deregistered, 0u);
  auto client = *GrpcMasterApi::Create(Channel(Files(ca, "client")));
  PutStartRequest request{"k", 1024, {}, "client"};
  EXPECT_TRUE(std::move(client->PutStart({&request, 1})[0]).ok());

  // An admin's certificate acts as a client (tierctl kv); a node's cannot.
  auto admin = *GrpcMasterApi::Create(Channel(Files(ca, "admin")));
  const std::string key = "k";
  EXPECT_TRUE(std::move(admin->Exists({&key, 1})[0]).ok());
  auto node_api = *GrpcMasterApi::Create(Channel(Files(ca, "node")));
  EXPECT_EQ(std::move(node_api->Exists({&key, 1})[0]).status().reason(),
            ErrorReason::kUnauthenticated);

  // The node itself may leave.
  EXPECT_TRUE(node_link->DeregisterNode(*node).ok());
  EXPECT_EQ(harness_.master().GetStats().nodes_deregistered, 1u);
}

TEST_F(TlsPlaneTest, CallersWithoutAChainFromTheCaNeverGetIn) {
  const TestCa& ca = Cas::Get().first();
  const TestCa& other = Cas::Get().second();
  Serve(Files(ca, "master"), TlsRole::kMaster);
  // A stranger trusts the master's CA, and its own, which signed its
  // certificate.
  testing::TempDir dir;
  const std::string both = dir.path() + "/both.pem";
  {
    std::ofstream out(both);
    out << std::ifstream(ca.ca()).rdbuf() << std::ifstream(other.ca()).rdbuf();
  }
  // No certificate at all, one from another CA, or plaintext.
  std::vector<GrpcChannelOptions> strangers = {
      Channel(CaOnly(ca.ca())),
      Channel(
          {.cert = other.cert("node"), .key = other.key("node"), .ca = both})};
  GrpcChannelOptions plain;
  plain.target = server_->address();
  plain.deadline = kShortDeadline;
  strangers.push_back(plain);
  for (const GrpcChannelOptions& options : strangers) {
    auto link = *GrpcMasterLink::Create(options);
    const Status refused =
        link->RegisterNode(MasterHarness::SmallNodeSpec("fake"), {}, {})
            .status();
    EXPECT_FALSE(refused.ok());
  }
  EXPECT_EQ(harness_.master().GetStats().nodes_registered, 0u);
}

TEST_F(TlsPlaneTest, AStubDialsOnlyAServerWhoseCertificateNamesTheMaster) {
  const TestCa& ca = Cas::Get().first();
  // A node's certificate is from the same CA and lists 127.0.0.1, but it is
  // not the master's.
  Serve(Files(ca, "node"), TlsRole::kNode);
  auto link = *GrpcMasterLink::Create(Channel(Files(ca, "node")));
  const Status refused =
      link->RegisterNode(MasterHarness::SmallNodeSpec("a"), {}, {}).status();
  EXPECT_EQ(refused.reason(), ErrorReason::kUnavailable) << refused.ToString();
  EXPECT_EQ(harness_.master().GetStats().nodes_registered, 0u);
}

TEST_F(TlsPlaneTest, TheNameCheckedCanBeSetAndAWrongOneFails) {
  const TestCa& ca = Cas::Get().first();
  Serve(Files(ca, "master"), TlsRole::kMaster);
  GrpcChannelOptions named = Channel(Files(ca, "node"));
  named.tls_server_name = "localhost";
  EXPECT_TRUE((*GrpcMasterLink::Create(named))
                  ->RegisterNode(MasterHarness::SmallNodeSpec("a"), {}, {})
                  .ok());
  GrpcChannelOptions wrong = Channel(Files(ca, "node"));
  wrong.tls_server_name = "master.example";
  EXPECT_FALSE((*GrpcMasterLink::Create(wrong))
                   ->RegisterNode(MasterHarness::SmallNodeSpec("b"), {}, {})
                   .ok());
}

TEST_F(TlsPlaneTest, ABadReloadKeepsTheIdentityAndAGoodOneIsServedSoon) {
  const TestCa& first = Cas::Get().first();
  const TestCa& second = Cas::Get().second();
  testing::TempDir dir;
  const TlsFiles served = {.cert = dir.path() + "/master.pem",
                           .key = dir.path() + "/master.key",
                           .ca = dir.path() + "/ca.pem"};
  Copy(first.cert("master"), served.cert);
  Copy(first.key("master"), served.key);
  Copy(first.ca(), served.ca);
  Serve(served, TlsRole::kMaster);
  auto registers = [this](const TestCa& ca, const std::string& name) {
    return (*GrpcMasterLink::Create(Channel(Files(ca, "node"))))
        ->RegisterNode(MasterHarness::SmallNodeSpec(name), {}, {})
        .ok();
  };
  EXPECT_TRUE(registers(first, "a"));
  EXPECT_FALSE(registers(second, "b"));

  // A certificate whose key is not there yet: refused, nothing changes.
  Copy(second.cert("master"), served.cert);
  const Status bad = server_identity_->Reload();
  EXPECT_EQ(bad.reason(), ErrorReason::kInvalidArgument);
  EXPECT_NE(bad.message().find(served.key), std::string::npos) << bad.message();
  EXPECT_EQ(server_identity_->reload_failures(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_TRUE(registers(first, "c"));

  // The whole second set: new handshakes use it within a few seconds.
  Copy(second.key("master"), served.key);
  Copy(second.ca(), served.ca);
  ASSERT_TRUE(server_identity_->Reload().ok());
  EXPECT_TRUE(testing::Eventually([&] { return registers(second, "d"); },
                                  std::chrono::seconds(5)));
  EXPECT_FALSE(registers(first, "e"));
}

}  // namespace
}  // namespace tls_credentials_test
}  // namespace mooncake_tier::rpc

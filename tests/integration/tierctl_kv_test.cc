// mooncake-tierctl kv, end to end: the real binary, run as a child process,
// against a store in this process (tests/support/grpc_cluster.h: a gRPC
// master on 127.0.0.1:0 and storage nodes exporting their segments over
// UCX). Checks bytes, table and JSON output, and exit codes.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "rpc/grpc_master_api.h"
#include "tests/support/grpc_cluster.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace mooncake_tier::testing {
namespace tierctl_kv_test {
namespace {

constexpr int kOk = 0;
constexpr int kError = 1;
constexpr int kUsage = 2;
constexpr int kNotFound = 3;

// A loopback port nobody listens on: bound, then closed.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)),
            0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  close(fd);
  return ntohs(address.sin_port);
}

std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

// The JSON document on stdout; a parse failure fails the test.
nlohmann::json Json(const CommandResult& result) {
  nlohmann::json document =
      nlohmann::json::parse(result.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(document.is_discarded()) << "not JSON: " << result.out;
  return document;
}

class TierctlKvTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Result<std::unique_ptr<GrpcCluster>> cluster = GrpcCluster::Start();
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(*cluster).release();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  void SetUp() override { ASSERT_NE(cluster_, nullptr); }

  // mooncake-tierctl kv <args...> --master <the cluster>.
  static CommandResult Kv(std::vector<std::string> args) {
    args.insert(args.begin(), "kv");
    args.push_back("--master");
    args.push_back(cluster_->master_address());
    return Tierctl(std::move(args));
  }

  // mooncake-tierctl <args...>, as given.
  static CommandResult Tierctl(std::vector<std::string> args) {
    args.insert(args.begin(), MT_TIERCTL_PATH);
    Result<CommandResult> result = RunCommand(args);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : CommandResult();
  }

  static GrpcCluster* cluster_;
  TempDir dir_;
};

GrpcCluster* TierctlKvTest::cluster_ = nullptr;

TEST_F(TierctlKvTest, PutValueThenGetReturnsTheBytes) {
  CommandResult put = Kv({"put", "greeting", "--value", "hello, tier"});
  ASSERT_EQ(put.exit_code, kOk) << put.err;
  EXPECT_NE(put.out.find("stored 'greeting' (11 bytes)"), std::string::npos)
      << put.out;

  // stdout is a file here, not a terminal: the raw bytes.
  CommandResult get = Kv({"get", "greeting"});
  ASSERT_EQ(get.exit_code, kOk) << get.err;
  EXPECT_EQ(get.out, "hello, tier");
}

TEST_F(TierctlKvTest, GetToStdoutCarriesOnlyTheValueWithUcxLoggingUp) {
  // `kv get KEY > FILE`: UCX prints its log to stdout unless told
  // otherwise, which put log lines into the file with the value.
  const std::string value("line one\nline two\n\0\xff", 20);
  const std::string in_path = dir_.path() + "/value.bin";
  std::ofstream(in_path, std::ios::binary) << value;
  ASSERT_EQ(Kv({"put", "logged", "--file", in_path}).exit_code, kOk);
  ASSERT_EQ(::setenv("UCX_LOG_LEVEL", "info", 1), 0);
  CommandResult get = Kv({"get", "logged"});
  ::unsetenv("UCX_LOG_LEVEL");
  ASSERT_EQ(get.exit_code, kOk) << get.err;
  EXPECT_TRUE(get.out == value)
      << "stdout held " << get.out.size() << " bytes:\n"
      << get.out;
  // The log was on, and went to stderr.
  EXPECT_NE(get.err.find("UCX INFO"), std::string::npos) << get.err;
}

TEST_F(TierctlKvTest, PutFileAndGetOutRoundTripOneMebibyte) {
  std::string bytes(1 << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>((i * 131 + (i >> 12)) & 0xff);
  }
  const std::string in_path = dir_.path() + "/in.bin";
  const std::string out_path = dir_.path() + "/out.bin";
  std::ofstream(in_path, std::ios::binary) << bytes;

  CommandResult put = Kv({"put", "file-key", "--file", in_path});
  ASSERT_EQ(put.exit_code, kOk) << put.err;
  CommandResult get = Kv({"get", "file-key", "--out", out_path});
  ASSERT_EQ(get.exit_code, kOk) << get.err;
  EXPECT_NE(get.out.find("wrote 1048576 bytes"), std::string::npos) << get.out;
  EXPECT_TRUE(ReadFileText(out_path) == bytes);

  CommandResult json = Kv({"get", "file-key", "--out", out_path, "-o", "json"});
  ASSERT_EQ(json.exit_code, kOk) << json.err;
  nlohmann::json document = Json(json);
  EXPECT_EQ(document["key"], "file-key");
  EXPECT_EQ(document["size"], 1 << 20);
  EXPECT_EQ(document["out"], out_path);
  EXPECT_FALSE(document.contains("value"));
}

TEST_F(TierctlKvTest, PutSizeStoresThatManyDeterministicBytes) {
  CommandResult put = Kv({"put", "sized", "--size", "64KiB"});
  ASSERT_EQ(put.exit_code, kOk) << put.err;
  CommandResult get = Kv({"get", "sized"});
  ASSERT_EQ(get.exit_code, kOk) << get.err;
  EXPECT_EQ(get.out.size(), 64u << 10);

  // A get releases its lease once its copy is done: a plain rm works
  // right after it (no 10 s wait for the lease to expire).
  CommandResult removed = Kv({"rm", "sized"});
  EXPECT_EQ(removed.exit_code, kOk) << removed.err;
  ASSERT_EQ(Kv({"put", "sized", "--size", "64KiB"}).exit_code, kOk);

  // A reader still holding its lease keeps a plain rm out, and the CLI
  // says what to do.
  rpc::GrpcChannelOptions channel;
  channel.target = cluster_->master_address();
  Result<std::unique_ptr<rpc::GrpcMasterApi>> reader =
      rpc::GrpcMasterApi::Create(channel);
  ASSERT_TRUE(reader.ok());
  const std::string key = "sized";
  ASSERT_TRUE((*reader)->GetReplicaList({&key, 1})[0].ok());
  CommandResult leased = Kv({"rm", "sized"});
  EXPECT_EQ(leased.exit_code, kError);
  EXPECT_NE(leased.err.find("OBJECT_LEASED"), std::string::npos) << leased.err;
  EXPECT_NE(leased.err.find("--force"), std::string::npos) << leased.err;

  // The same key and size give the same bytes.
  ASSERT_EQ(Kv({"rm", "sized", "--force"}).exit_code, kOk);
  ASSERT_EQ(Kv({"put", "sized", "--size", "65536"}).exit_code, kOk);
  EXPECT_TRUE(Kv({"get", "sized"}).out == get.out);
}

TEST_F(TierctlKvTest, ExistsShowsTheGroupFillingThenComplete) {
  ASSERT_EQ(Kv({"put", "blk/k", "--value", "K", "--group", "blk",
                "--group-size", "2", "--group-index", "0"})
                .exit_code,
            kOk);
  CommandResult table = Kv({"exists", "blk/k"});
  ASSERT_EQ(table.exit_code, kOk) << table.err;
  EXPECT_NE(table.out.find("PRESENT/EXPECTED"), std::string::npos);
  EXPECT_NE(table.out.find("filling"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("1/2"), std::string::npos) << table.out;

  CommandResult filling = Kv({"exists", "blk/k", "-o", "json"});
  ASSERT_EQ(filling.exit_code, kOk) << filling.err;
  nlohmann::json document = Json(filling);
  EXPECT_EQ(document["key"], "blk/k");
  EXPECT_TRUE(document["exists"].is_boolean());
  EXPECT_EQ(document["size"], 1);
  EXPECT_EQ(document["group"]["id"], "blk");
  EXPECT_EQ(document["group"]["state"], "filling");
  EXPECT_EQ(document["group"]["expected"], 2);
  EXPECT_EQ(document["group"]["present"], 1);

  ASSERT_EQ(Kv({"put", "blk/v", "--value", "V", "--group", "blk",
                "--group-size", "2", "--group-index", "1"})
                .exit_code,
            kOk);
  document = Json(Kv({"exists", "blk/k", "-o", "json"}));
  EXPECT_EQ(document["exists"], true);
  EXPECT_EQ(document["group"]["state"], "complete");
  EXPECT_EQ(document["group"]["present"], 2);
  CommandResult complete = Kv({"exists", "blk/v"});
  EXPECT_NE(complete.out.find("complete"), std::string::npos) << complete.out;
  EXPECT_NE(complete.out.find("2/2"), std::string::npos) << complete.out;

  // Removing a member removes the group (the default remove policy), and
  // rm says so.
  CommandResult rm = Kv({"rm", "blk/k", "-o", "json"});
  ASSERT_EQ(rm.exit_code, kOk) << rm.err;
  document = Json(rm);
  EXPECT_EQ(document["removed"], true);
  EXPECT_EQ(document["group"]["id"], "blk");
  EXPECT_EQ(document["group"]["state"], "removed");
  EXPECT_EQ(Json(Kv({"exists", "blk/v", "-o", "json"}))["exists"], false);
}

TEST_F(TierctlKvTest, ExistsOfAMissingKeyAnswersFalseAndExitsZero) {
  CommandResult table = Kv({"exists", "nobody"});
  EXPECT_EQ(table.exit_code, kOk) << table.err;
  EXPECT_NE(table.out.find("false"), std::string::npos) << table.out;

  CommandResult json = Kv({"exists", "nobody", "-o", "json"});
  EXPECT_EQ(json.exit_code, kOk) << json.err;
  nlohmann::json document = Json(json);
  EXPECT_EQ(document["exists"], false);
  EXPECT_TRUE(document["group"].is_null());
}

TEST_F(TierctlKvTest, RemoveThenGetIsNotFound) {
  ASSERT_EQ(Kv({"put", "doomed", "--value", "x"}).exit_code, kOk);
  CommandResult rm = Kv({"rm", "doomed", "-o", "json"});
  ASSERT_EQ(rm.exit_code, kOk) << rm.err;
  EXPECT_EQ(Json(rm)["removed"], true);
  EXPECT_TRUE(Json(rm)["group"].is_null());

  CommandResult get = Kv({"get", "doomed"});
  EXPECT_EQ(get.exit_code, kNotFound);
  EXPECT_NE(get.err.find("OBJECT_NOT_FOUND"), std::string::npos) << get.err;
  EXPECT_TRUE(get.out.empty());

  CommandResult json = Kv({"get", "doomed", "-o", "json"});
  EXPECT_EQ(json.exit_code, kNotFound);
  nlohmann::json document = Json(json);
  EXPECT_EQ(document["error"]["reason"], "OBJECT_NOT_FOUND");
  EXPECT_EQ(document["error"]["code"], "NOT_FOUND");
  EXPECT_TRUE(document["error"]["message"].is_string());

  EXPECT_EQ(Kv({"rm", "doomed"}).exit_code, kNotFound);
}

TEST_F(TierctlKvTest, PutOfAnExistingKeyIsAnErrorThatSaysWhatToDo) {
  ASSERT_EQ(Kv({"put", "twice", "--value", "1"}).exit_code, kOk);
  CommandResult again = Kv({"put", "twice", "--value", "2"});
  EXPECT_EQ(again.exit_code, kError);
  EXPECT_NE(again.err.find("OBJECT_EXISTS"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("kv rm twice"), std::string::npos) << again.err;
}

TEST_F(TierctlKvTest, ATakenGroupIndexNamesTheKeyHoldingIt) {
  ASSERT_EQ(Kv({"put", "first", "--value", "1", "--group", "gi", "--group-size",
                "2", "--group-index", "0"})
                .exit_code,
            kOk);
  CommandResult taken = Kv({"put", "second", "--value", "2", "--group", "gi",
                            "--group-size", "2", "--group-index", "0"});
  EXPECT_EQ(taken.exit_code, kError);
  EXPECT_NE(taken.err.find("belongs to 'first'"), std::string::npos)
      << taken.err;
  EXPECT_NE(taken.err.find("kv rm first"), std::string::npos) << taken.err;
  EXPECT_EQ(taken.err.find("kv rm second"), std::string::npos) << taken.err;
}

TEST_F(TierctlKvTest, AGroupSizeOfZeroSaysWhatIsWrong) {
  CommandResult zero = Kv({"put", "u", "--value", "v", "--group", "g",
                           "--group-size", "0", "--group-index", "0"});
  EXPECT_EQ(zero.exit_code, kUsage);
  EXPECT_NE(zero.err.find("--group-size: must be a whole number from 1 to "
                          "4294967295, not '0'"),
            std::string::npos)
      << zero.err;
  EXPECT_EQ(zero.err.find("1.79e308"), std::string::npos) << zero.err;
}

TEST_F(TierctlKvTest, JsonOutputHasTheFields) {
  CommandResult put = Kv({"put", "j", "--value", "json me", "-o", "json"});
  ASSERT_EQ(put.exit_code, kOk) << put.err;
  nlohmann::json document = Json(put);
  EXPECT_EQ(document["key"], "j");
  EXPECT_EQ(document["size"], 7);
  EXPECT_TRUE(document["group"].is_null());

  // -o may also come before the command.
  CommandResult get = Tierctl(
      {"-o", "json", "kv", "get", "j", "--master", cluster_->master_address()});
  ASSERT_EQ(get.exit_code, kOk) << get.err;
  document = Json(get);
  EXPECT_EQ(document["key"], "j");
  EXPECT_EQ(document["size"], 7);
  std::string value;
  ASSERT_TRUE(
      absl::Base64Unescape(document["value"].get<std::string>(), &value));
  EXPECT_EQ(value, "json me");
}

TEST_F(TierctlKvTest, BadUsageExitsTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {"put", "u"},                                  // no source
      {"put", "u", "--value", "v", "--size", "3"},   // two sources
      {"put", "u", "--value", "v", "--group", "g"},  // partial group
      {"put", "u", "--value", "v", "--group", "g", "--group-size", "2",
       "--group-index", "2"},                            // index >= size
      {"put", "u", "--size", "0"},                       // bad size
      {"put", "u", "--size", "lots"},                    // bad size
      {"put", "u", "--file", dir_.path() + "/missing"},  // no such file
      {"get", "u", "--frobnicate"},                      // unknown flag
      {"get"},                                           // no key
      {"get", "u", "--timeout", "0"},                    // bad timeout
      {"get", "u", "-o", "yaml"},                        // bad format
  };
  for (const std::vector<std::string>& args : bad) {
    CommandResult result = Kv(args);
    EXPECT_EQ(result.exit_code, kUsage) << args[1] << ": " << result.err;
    EXPECT_NE(result.err.find("USAGE"), std::string::npos) << result.err;
  }
  EXPECT_EQ(Tierctl({}).exit_code, kUsage);
  EXPECT_EQ(Tierctl({"kv"}).exit_code, kUsage);

  CommandResult json = Kv({"put", "u", "-o", "json"});
  EXPECT_EQ(json.exit_code, kUsage);
  EXPECT_EQ(Json(json)["error"]["reason"], "USAGE");
}

TEST_F(TierctlKvTest, UnreachableMasterExitsOneNamingTheAddress) {
  const std::string address = "127.0.0.1:" + std::to_string(FreePort());
  CommandResult result = Tierctl({"kv", "exists", "k", "--master", address,
                                  "--timeout", "500", "-o", "json"});
  EXPECT_EQ(result.exit_code, kError);
  EXPECT_NE(result.err.find(address), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("mooncake-tierd"), std::string::npos) << result.err;
  nlohmann::json document = Json(result);
  const std::string reason = document["error"]["reason"];
  EXPECT_TRUE(reason == "UNAVAILABLE" || reason == "TIMEOUT") << reason;
}

TEST_F(TierctlKvTest, HelpDocumentsOptionsAndDefaults) {
  CommandResult help = Tierctl({"kv", "put", "--help"});
  EXPECT_EQ(help.exit_code, kOk);
  EXPECT_NE(help.out.find("127.0.0.1:50051"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("5000"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("pseudo-random"), std::string::npos) << help.out;

  CommandResult top = Tierctl({"--help"});
  EXPECT_EQ(top.exit_code, kOk);
  EXPECT_NE(top.out.find("MOONCAKE_TIER_ENDPOINT"), std::string::npos);
  EXPECT_NE(top.out.find("Exit codes"), std::string::npos);
}

// The kv commands are a second binary (cli/kv_forward.h); the help of the
// first lists them, and without the second they fail saying where it was
// looked for, through the usual error path.
TEST_F(TierctlKvTest, WithoutItsKvBinaryKvFailsSayingWhatToBuild) {
  CommandResult top = Tierctl({"--help"});
  EXPECT_NE(top.out.find("kv"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("Data-path checks"), std::string::npos) << top.out;

  ASSERT_EQ(
      setenv("MOONCAKE_TIERCTL_KV", "/nonexistent/mooncake-tierctl-kv", 1), 0);
  CommandResult missing = Kv({"exists", "k", "-o", "json"});
  unsetenv("MOONCAKE_TIERCTL_KV");
  EXPECT_EQ(missing.exit_code, kError) << missing.err;
  EXPECT_NE(missing.err.find("UNAVAILABLE"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("/nonexistent/mooncake-tierctl-kv"),
            std::string::npos)
      << missing.err;
  EXPECT_EQ(Json(missing)["error"]["reason"], "UNAVAILABLE");
  // Other command groups never need it.
  ASSERT_EQ(
      setenv("MOONCAKE_TIERCTL_KV", "/nonexistent/mooncake-tierctl-kv", 1), 0);
  CommandResult status = Tierctl({"status", "--help"});
  unsetenv("MOONCAKE_TIERCTL_KV");
  EXPECT_EQ(status.exit_code, kOk) << status.err;
}

}  // namespace
}  // namespace tierctl_kv_test
}  // namespace mooncake_tier::testing

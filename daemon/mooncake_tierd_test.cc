// mooncake-tierd end to end: the binary started as subprocesses on free
// loopback ports with temporary directories.

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon/tierd_test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/grpc_master_api.h"
#include "tests/support/silent_listener.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace mooncake_tier {
namespace mooncake_tierd_test {
namespace {

using std::chrono::milliseconds;
using testing::ExitStatus;
using ::testing::HasSubstr;
using testing::SilentListener;
using testing::Subprocess;
using testing::SubprocessOptions;
using testing::TempDir;
using namespace daemon_test;  // NOLINT(build/namespaces): test helpers

TEST(MooncakeTierdTest, StandaloneServesClientsAndShutsDownCleanly) {
  TempDir dir;
  const std::string ready = dir.path() + "/ready";
  const std::string ssd = dir.path() + "/ssd";
  const int port = testing::PickFreePort();
  auto tierd = StartTierd(
      "standalone", dir.path(),
      Concat({"standalone", "--listen", Loopback(port), "--ready-file", ready},
             SmallNode(ssd)));
  ASSERT_TRUE(tierd);
  ASSERT_TRUE(testing::WaitForFile(ready, kReady)) << tierd->OutputTail();
  const auto fields = ReadyFields(ready);
  EXPECT_EQ(fields.at("mode"), "standalone");
  EXPECT_EQ(fields.at("master_address"), Loopback(port));
  EXPECT_EQ(fields.at("pid"), std::to_string(tierd->pid()));
  EXPECT_THAT(fields.at("admin_address"), HasSubstr("127.0.0.1:"));
  // The ready line goes to stdout just after the ready file is published.
  EXPECT_TRUE(tierd->WaitForStdout(
      "mooncake-tierd standalone: master on " + Loopback(port), kReady))
      << tierd->OutputTail();

  rpc::GrpcChannelOptions channel;
  channel.target = fields.at("master_address");
  auto api = rpc::GrpcMasterApi::Create(channel);
  ASSERT_TRUE(api.ok());
  PutStartRequest put;
  put.key = "block/0";
  put.size = 4096;
  put.client = "tierd-test";
  auto started = (*api)->PutStart({&put, 1});
  ASSERT_TRUE(started[0].ok()) << started[0].status().ToString();
  const std::vector<std::string> keys = {put.key};
  ASSERT_TRUE((*api)->PutEnd(put.client, keys)[0].ok());
  auto exists = (*api)->Exists(keys);
  ASSERT_TRUE(exists[0].ok()) << exists[0].status().ToString();
  EXPECT_TRUE(exists[0]->exists);

  StopCleanly(*tierd);
  EXPECT_FALSE(std::filesystem::exists(ready));
  size_t data_files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ssd)) {
    if (entry.path().extension() == ".data") ++data_files;
  }
  EXPECT_GE(data_files, 1u);
}

TEST(MooncakeTierdTest, MasterAndNodeAsTwoProcesses) {
  TempDir dir;
  const int port = testing::PickFreePort();
  const std::string master_ready = dir.path() + "/master.ready";
  const std::string node_ready = dir.path() + "/node.ready";
  auto master = StartTierd(
      "master", dir.path(),
      {"master", "--listen", Loopback(port), "--ready-file", master_ready});
  ASSERT_TRUE(master);
  ASSERT_TRUE(testing::WaitForFile(master_ready, kReady))
      << master->OutputTail();
  auto node = StartTierd("node", dir.path(),
                         Concat({"node", "--master", Loopback(port), "--name",
                                 "n1", "--ready-file", node_ready},
                                SmallNode(dir.path() + "/ssd")));
  ASSERT_TRUE(node);
  ASSERT_TRUE(testing::WaitForFile(node_ready, kReady)) << node->OutputTail();
  const auto fields = ReadyFields(node_ready);
  EXPECT_EQ(fields.at("mode"), "node");
  EXPECT_EQ(fields.at("node_name"), "n1");
  EXPECT_NE(fields.at("node_id"), "0");
  StopCleanly(*node);
  StopCleanly(*master);
}

TEST(MooncakeTierdTest, NodeStartedBeforeItsMasterRegistersOnceItComes) {
  TempDir dir;
  const int port = testing::PickFreePort();
  const std::string node_ready = dir.path() + "/node.ready";
  auto node = StartTierd(
      "node", dir.path(),
      Concat({"node", "--master", Loopback(port), "--ready-file", node_ready},
             SmallNode(dir.path() + "/ssd")));
  ASSERT_TRUE(node);
  EXPECT_FALSE(testing::WaitForFile(node_ready, milliseconds(700)));
  EXPECT_TRUE(node->Running());
  auto master =
      StartTierd("master", dir.path(), {"master", "--listen", Loopback(port)});
  ASSERT_TRUE(master);
  ASSERT_TRUE(testing::WaitForFile(node_ready, kReady)) << node->OutputTail();
  StopCleanly(*node);
  StopCleanly(*master);
}

TEST(MooncakeTierdTest, SecondSignalDuringShutdownExitsAtOnce) {
  // The node's registration call hangs on a silent master for the whole
  // --rpc-deadline, so its shutdown (which joins that call) takes seconds.
  SilentListener silent;
  ASSERT_GT(silent.port(), 0);
  TempDir dir;
  auto node = StartTierd("node", dir.path(),
                         Concat({"node", "--master", Loopback(silent.port()),
                                 "--rpc-deadline", "20s"},
                                SmallNode(dir.path() + "/ssd")));
  ASSERT_TRUE(node);
  std::this_thread::sleep_for(milliseconds(1000));  // registration in flight
  ASSERT_TRUE(node->Signal(SIGTERM));
  EXPECT_FALSE(node->Wait(milliseconds(500)).has_value())
      << "shutdown was expected to wait for the call in flight";
  ASSERT_TRUE(node->Signal(SIGINT));
  const std::optional<ExitStatus> status = node->Wait(milliseconds(3000));
  ASSERT_TRUE(status.has_value()) << node->OutputTail();
  EXPECT_TRUE(status->exited() && status->code == 1)
      << status->ToString() << "\n"
      << node->OutputTail();
}

TEST(MooncakeTierdTest, BadFlagIsAUsageError) {
  TempDir dir;
  auto tierd = StartTierd("bad", dir.path(), {"node", "--dram", "lots"});
  ASSERT_TRUE(tierd);
  const std::optional<ExitStatus> status = tierd->Wait(kExit);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 2) << tierd->OutputTail();
  EXPECT_THAT(tierd->ReadStderr(), HasSubstr("--dram"));
}

TEST(MooncakeTierdTest, PortInUseIsAStartFailure) {
  // Hold a listening socket on a port, then ask a master to bind it.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);

  TempDir dir;
  auto tierd =
      StartTierd("busy", dir.path(), {"master", "--listen", Loopback(port)});
  ASSERT_TRUE(tierd);
  const std::optional<ExitStatus> status = tierd->Wait(kExit);
  ::close(fd);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 1) << tierd->OutputTail();
  EXPECT_THAT(tierd->ReadStderr(),
              HasSubstr("mooncake-tierd master: error: cannot serve RPC on '" +
                        Loopback(port) + "'"));
}

TEST(MooncakeTierdTest, UnusableSsdDirectoryIsAStartFailure) {
  TempDir dir;
  const std::string file = dir.path() + "/not-a-dir";
  std::ofstream(file) << "x";
  auto tierd =
      StartTierd("node", dir.path(),
                 Concat({"node", "--master", "127.0.0.1:1"}, SmallNode(file)));
  ASSERT_TRUE(tierd);
  const std::optional<ExitStatus> status = tierd->Wait(kExit);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 1) << tierd->OutputTail();
  EXPECT_THAT(tierd->ReadStderr(), HasSubstr(file));
}

}  // namespace
}  // namespace mooncake_tierd_test
}  // namespace mooncake_tier

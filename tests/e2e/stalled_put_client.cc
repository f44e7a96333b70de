// A client that dies in the middle of a put: it reserves space for KEY
// with PutStart, writes READY_FILE, and then waits to be killed without
// ever writing the bytes or calling PutEnd. The multi-process tests kill
// it with SIGKILL and check that the master revokes the put by timeout.
//
//   stalled_put_client MASTER KEY SIZE READY_FILE

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "rpc/grpc_master_api.h"

int main(int argc, char** argv) {
  using namespace mooncake_tier;
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s MASTER KEY SIZE READY_FILE\n", argv[0]);
    return 2;
  }
  rpc::GrpcChannelOptions channel;
  channel.target = argv[1];
  Result<std::unique_ptr<rpc::GrpcMasterApi>> api =
      rpc::GrpcMasterApi::Create(channel);
  if (!api.ok()) {
    std::fprintf(stderr, "%s\n", api.status().ToString().c_str());
    return 1;
  }
  PutStartRequest request;
  request.key = argv[2];
  request.size = std::strtoull(argv[3], nullptr, 10);
  request.client = "stalled-client";
  std::vector<Result<ReplicaDescriptor>> placed =
      (*api)->PutStart({&request, 1});
  if (!placed[0].ok()) {
    std::fprintf(stderr, "PutStart: %s\n",
                 placed[0].status().ToString().c_str());
    return 1;
  }
  std::ofstream(argv[4]) << "started\n";
  for (;;) pause();
}

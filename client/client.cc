// The single-key forms of the public Client API: batches of one.

#include "mooncake_tier/client.h"

namespace mooncake_tier {

Status Client::Put(std::string_view key, std::span<const std::byte> value,
                   PutOptions options) {
  PutItem item{std::string(key), value, std::move(options)};
  return PutBatch({&item, 1})[0];
}

Result<uint64_t> Client::GetInto(std::string_view key,
                                 std::span<std::byte> buffer) {
  GetIntoItem item{std::string(key), buffer};
  return std::move(GetIntoBatch({&item, 1})[0]);
}

Result<std::vector<std::byte>> Client::Get(std::string_view key) {
  const std::string k(key);
  return std::move(GetBatch({&k, 1})[0]);
}

Result<ExistsInfo> Client::Exists(std::string_view key) {
  const std::string k(key);
  return std::move(ExistsBatch({&k, 1})[0]);
}

Status Client::Remove(std::string_view key, RemoveOptions options) {
  const std::string k(key);
  return RemoveBatch({&k, 1}, options)[0];
}

Result<GroupInfo> Client::GetGroup(std::string_view group_id) {
  const std::string id(group_id);
  return std::move(GetGroupBatch({&id, 1})[0]);
}

Status Client::RemoveGroup(std::string_view group_id, RemoveOptions options) {
  const std::string id(group_id);
  return RemoveGroupBatch({&id, 1}, options)[0];
}

}  // namespace mooncake_tier

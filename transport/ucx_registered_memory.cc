#include "transport/ucx_registered_memory.h"

#include "transport/ucx_status.h"

namespace mooncake_tier {

Result<std::unique_ptr<UcxRegisteredMemory>> UcxRegisteredMemory::Create(
    ucp_context_h context, std::byte* base, uint64_t size) {
  if (base == nullptr || size == 0) {
    return Status(ErrorReason::kInvalidArgument,
                  "cannot register an empty memory range");
  }
  ucp_mem_map_params_t params{};
  params.field_mask =
      UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = base;
  params.length = size;
  ucp_mem_h memh = nullptr;
  ucs_status_t status = ucp_mem_map(context, &params, &memh);
  if (status != UCS_OK) return UcxError(status, "registering memory");
  void* key_buffer = nullptr;
  size_t key_size = 0;
  status = ucp_rkey_pack(context, memh, &key_buffer, &key_size);
  if (status != UCS_OK) {
    ucp_mem_unmap(context, memh);
    return UcxError(status, "packing a remote key");
  }
  std::string packed(static_cast<const char*>(key_buffer), key_size);
  ucp_rkey_buffer_release(key_buffer);
  return std::unique_ptr<UcxRegisteredMemory>(
      new UcxRegisteredMemory(context, memh, base, size, std::move(packed)));
}

UcxRegisteredMemory::~UcxRegisteredMemory() { ucp_mem_unmap(context_, memh_); }

}  // namespace mooncake_tier

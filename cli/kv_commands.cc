#include "cli/kv_commands.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "cli/kv_forward.h"
#include "cli/option_checks.h"
#include "cli/table.h"
#include "mooncake_tier/client.h"
#include "mooncake_tier/remote_client.h"
#include "mooncake_tier/status.h"
#include "mooncake_tier/types.h"

namespace mooncake_tier::cli {
namespace {

// Largest value `kv put --size` generates (it is held in memory).
constexpr uint64_t kMaxGeneratedBytes = 1ull << 30;
// Bytes of a value the terminal preview of `kv get` shows.
constexpr size_t kPreviewBytes = 256;

struct ConnectionFlags {
  std::string master = "127.0.0.1:50051";
  int64_t timeout_ms = 5000;
  std::string token_file;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_server_name;
};

struct PutFlags {
  ConnectionFlags connection;
  std::string key;
  std::string file;
  std::string value;
  uint64_t size = 0;
  std::string group_id;
  uint32_t group_size = 0;
  uint32_t group_index = 0;
};

struct GetFlags {
  ConnectionFlags connection;
  std::string key;
  std::string out;
};

struct KeyFlags {
  ConnectionFlags connection;
  std::string key;
  bool force = false;  // kv rm
};

// ---- Parsing ---------------------------------------------------------------

void AddConnectionFlags(CLI::App& command, ConnectionFlags& flags) {
  command
      .add_option("--master", flags.master,
                  "The master's gRPC address, or every master's of a "
                  "cluster, comma-separated (calls follow the leader)")
      ->type_name("HOST:PORT[,...]")
      ->capture_default_str();
  command
      .add_option("--timeout", flags.timeout_ms,
                  "Deadline in milliseconds of every call to the master and "
                  "every transfer with a node")
      ->type_name("MS")
      ->check(WholeNumber(1, std::numeric_limits<uint64_t>::max(), "ms"))
      ->capture_default_str();
  command
      .add_option("--token-file", flags.token_file,
                  "The client token (first line of PATH) for a master that "
                  "authenticates calls")
      ->type_name("PATH")
      ->envname("MOONCAKE_TIER_CLIENT_TOKEN_FILE");
  command
      .add_option("--tls-ca", flags.tls_ca,
                  "Dial a master that serves TLS: PEM bundle of the CA "
                  "certificates its certificate must lead to")
      ->type_name("PATH")
      ->envname("MOONCAKE_TIER_TLS_CA");
  command
      .add_option("--tls-cert", flags.tls_cert,
                  "PEM certificate (a client or admin one) for a master that "
                  "asks for client certificates")
      ->type_name("PATH")
      ->envname("MOONCAKE_TIER_TLS_CERT");
  command.add_option("--tls-key", flags.tls_key, "The PEM key of --tls-cert")
      ->type_name("PATH")
      ->envname("MOONCAKE_TIER_TLS_KEY");
  command
      .add_option("--tls-server-name", flags.tls_server_name,
                  "The name the master's certificate must carry, when not "
                  "the host of --master")
      ->type_name("NAME")
      ->envname("MOONCAKE_TIER_TLS_SERVER_NAME");
}

// The global --timeout applies unless the command's own was given.
void UseGlobalTimeout(const CLI::App& command, const CliContext& context,
                      ConnectionFlags& flags) {
  if (command.count("--timeout") == 0) {
    flags.timeout_ms = context.options().timeout_ms;
  }
}

CLI::App& AddKeyCommand(CLI::App& kv, const char* name, const char* description,
                        std::string& key) {
  CLI::App& command = *kv.add_subcommand(name, description);
  command.add_option("KEY", key, "The object's key (1..1024 bytes)")
      ->required();
  return command;
}

// Usage rules of `kv put` that CLI11 cannot state: exactly one source,
// the group flags together, sizes in range.
void ValidatePut(const CLI::App& put, const PutFlags& flags) {
  const size_t sources =
      put.count("--file") + put.count("--value") + put.count("--size");
  if (sources != 1) {
    throw CLI::ValidationError(
        "kv put", "give exactly one of --file F, --value V or --size N (" +
                      std::to_string(sources) + " given)");
  }
  if (put.count("--size") > 0 &&
      (flags.size == 0 || flags.size > kMaxGeneratedBytes)) {
    throw CLI::ValidationError("--size", "must be between 1 and 1GiB, got " +
                                             std::to_string(flags.size));
  }
  const size_t group_flags = put.count("--group") + put.count("--group-size") +
                             put.count("--group-index");
  if (group_flags != 0 && group_flags != 3) {
    throw CLI::ValidationError(
        "kv put",
        "--group, --group-size and --group-index go together "
        "(give all three or none)");
  }
  if (group_flags == 3 && flags.group_index >= flags.group_size) {
    throw CLI::ValidationError(
        "--group-index", "must be below --group-size (" +
                             std::to_string(flags.group_index) +
                             " >= " + std::to_string(flags.group_size) + ")");
  }
}

// ---- Running ---------------------------------------------------------------

std::string UnreachableHint(const std::string& master) {
  return "is mooncake-tierd running at " + master +
         "? start it with 'mooncake-tierd standalone' (or 'mooncake-tierd "
         "master' and nodes), or point --master at it";
}

// What the user can do about a failed kv call on `key`.
std::string KvHint(const Status& status, const std::string& key,
                   const ConnectionFlags& connection) {
  switch (status.reason()) {
    case ErrorReason::kObjectNotFound:
      return "check the key '" + key +
             "'; the object may have been removed, evicted or expired";
    case ErrorReason::kObjectExists: {
      // The same reason when the group index, not the key, is taken; the
      // message then names the key holding it.
      constexpr std::string_view kTakenBy = "is already taken by key '";
      const std::string& message = status.message();
      const size_t at = message.find(kTakenBy);
      if (at != std::string::npos) {
        const size_t start = at + kTakenBy.size();
        const size_t end = message.rfind('\'');
        const std::string holder =
            end > start ? message.substr(start, end - start) : "";
        return "the index belongs to '" + holder +
               "'; put under a free index, or remove the holder first with "
               "'mooncake-tierctl kv rm " +
               holder + "'";
      }
      return "remove it first with 'mooncake-tierctl kv rm " + key + "'";
    }
    case ErrorReason::kObjectLeased:
      return "retry when the lease ends (the message says when), or use "
             "'kv rm " +
             key + " --force'";
    case ErrorReason::kObjectBusy:
      return "a put of this key is in flight; retry shortly";
    case ErrorReason::kGroupIncomplete:
      return "its group is still filling; put the missing members first";
    case ErrorReason::kNoSpace:
      return "remove objects or add DRAM; a value must fit in one node's "
             "DRAM segment";
    case ErrorReason::kTimeout:
      return "no answer within --timeout " +
             std::to_string(connection.timeout_ms) +
             " ms; raise it or check the master and nodes";
    case ErrorReason::kUnavailable:
      return "the master or a storage node could not be reached from here "
             "for the reason above; check that they run ('mooncake-tierctl "
             "nodes list') and what this host can reach (UCX_TLS, "
             "interfaces)";
    case ErrorReason::kUnauthenticated:
      return "the master authenticates calls: give its client token with "
             "--token-file or MOONCAKE_TIER_CLIENT_TOKEN_FILE, or a client "
             "certificate with --tls-cert and --tls-key";
    default:
      return "";
  }
}

Result<std::unique_ptr<Client>> Connect(const ConnectionFlags& flags,
                                        std::string* hint) {
  RemoteClientOptions options;
  options.master = flags.master;
  options.rpc_timeout = std::chrono::milliseconds(flags.timeout_ms);
  options.transfer_timeout = std::chrono::milliseconds(flags.timeout_ms);
  options.token_file = flags.token_file;
  options.tls_ca = flags.tls_ca;
  options.tls_cert = flags.tls_cert;
  options.tls_key = flags.tls_key;
  options.tls_server_name = flags.tls_server_name;
  Result<std::unique_ptr<Client>> client = ConnectRemote(options);
  if (!client.ok()) {
    const ErrorReason reason = client.status().reason();
    if (reason == ErrorReason::kUnavailable ||
        reason == ErrorReason::kTimeout) {
      *hint = UnreachableHint(flags.master);
    } else if (reason == ErrorReason::kUnauthenticated) {
      *hint = KvHint(client.status(), "", flags);
    }
  }
  return client;
}

// Pseudo-random bytes seeded from the key (FNV-1a, then splitmix64), so
// the same key and size always give the same bytes.
std::vector<std::byte> GeneratedBytes(const std::string& key, uint64_t size) {
  uint64_t state = 0xcbf29ce484222325ull;
  for (char c : key) {
    state = (state ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  }
  std::vector<std::byte> bytes(size);
  for (uint64_t i = 0; i < size; i += 8) {
    state += 0x9e3779b97f4a7c15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    for (uint64_t j = 0; j < 8 && i + j < size; ++j) {
      bytes[i + j] = static_cast<std::byte>(z >> (8 * j));
    }
  }
  return bytes;
}

Result<std::vector<std::byte>> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(ErrorReason::kIoError, "cannot open '" + path + "'");
  std::vector<char> chars((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  if (in.bad()) {
    return Status(ErrorReason::kIoError, "cannot read '" + path + "'");
  }
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

Status WriteFile(const std::string& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    return Status(ErrorReason::kIoError, "cannot write '" + path + "'");
  }
  return Status();
}

Result<std::vector<std::byte>> PutValue(const CLI::App& put,
                                        const PutFlags& flags) {
  if (put.count("--file") > 0) return ReadFile(flags.file);
  if (put.count("--size") > 0) return GeneratedBytes(flags.key, flags.size);
  const auto* data = reinterpret_cast<const std::byte*>(flags.value.data());
  return std::vector<std::byte>(data, data + flags.value.size());
}

nlohmann::json GroupSpecJson(const std::optional<GroupSpec>& group) {
  if (!group) return nullptr;
  return {{"id", group->group_id},
          {"size", group->group_size},
          {"index", group->group_index}};
}

Status RunPut(const CLI::App& put, const PutFlags& flags, Output& out,
              std::string* hint) {
  MT_ASSIGN_OR_RETURN(std::vector<std::byte> value, PutValue(put, flags));
  PutOptions options;
  if (put.count("--group") > 0) {
    options.group =
        GroupSpec{flags.group_id, flags.group_size, flags.group_index};
  }
  MT_ASSIGN_OR_RETURN(std::unique_ptr<Client> client,
                      Connect(flags.connection, hint));
  const Status status = client->Put(flags.key, value, options);
  if (!status.ok()) {
    *hint = KvHint(status, flags.key, flags.connection);
    return status;
  }
  if (out.json()) {
    out.PrintJson({{"key", flags.key},
                   {"size", value.size()},
                   {"group", GroupSpecJson(options.group)}});
    return Status();
  }
  std::string line =
      "stored '" + flags.key + "' (" + std::to_string(value.size()) + " bytes)";
  if (options.group) {
    line += " as member " + std::to_string(flags.group_index) + " of group '" +
            flags.group_id + "' (" + std::to_string(flags.group_size) +
            " members)";
  }
  out.PrintLine(line);
  return Status();
}

// "00000010  41 42 ...  |AB..|" lines of the first kPreviewBytes bytes.
std::vector<std::string> HexDump(std::span<const std::byte> bytes) {
  std::vector<std::string> lines;
  const size_t shown = std::min(bytes.size(), kPreviewBytes);
  for (size_t row = 0; row < shown; row += 16) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%08zx  ", row);
    std::string hex = buffer;
    std::string ascii;
    for (size_t i = row; i < row + 16; ++i) {
      if (i >= shown) {
        hex += "   ";
        continue;
      }
      const unsigned value = std::to_integer<unsigned>(bytes[i]);
      std::snprintf(buffer, sizeof(buffer), "%02x ", value);
      hex += buffer;
      ascii.push_back(value >= 0x20 && value < 0x7f ? static_cast<char>(value)
                                                    : '.');
    }
    lines.push_back(hex + " |" + ascii + "|");
  }
  return lines;
}

void PrintPreview(const GetFlags& flags, std::span<const std::byte> value,
                  Output& out) {
  out.PrintLine("key:  " + flags.key);
  out.PrintLine("size: " + std::to_string(value.size()) + " bytes");
  for (const std::string& line : HexDump(value)) out.PrintLine(line);
  if (value.size() > kPreviewBytes) {
    out.PrintLine("... (first " + std::to_string(kPreviewBytes) + " of " +
                  std::to_string(value.size()) + " bytes shown)");
  }
  out.PrintLine(
      "to save the value: add --out FILE, or redirect stdout (the "
      "raw bytes are written when stdout is not a terminal)");
}

Status RunGet(const GetFlags& flags, Output& out, std::string* hint) {
  MT_ASSIGN_OR_RETURN(std::unique_ptr<Client> client,
                      Connect(flags.connection, hint));
  Result<std::vector<std::byte>> value = client->Get(flags.key);
  if (!value.ok()) {
    *hint = KvHint(value.status(), flags.key, flags.connection);
    return value.status();
  }
  if (!flags.out.empty()) {
    const Status written = WriteFile(flags.out, *value);
    if (!written.ok()) {
      *hint = "check that the directory exists and is writable";
      return written;
    }
  }
  if (out.json()) {
    nlohmann::json document = {{"key", flags.key}, {"size", value->size()}};
    if (flags.out.empty()) {
      document["value"] = absl::Base64Escape(absl::string_view(
          reinterpret_cast<const char*>(value->data()), value->size()));
    } else {
      document["out"] = flags.out;
    }
    out.PrintJson(document);
  } else if (!flags.out.empty()) {
    out.PrintLine("wrote " + std::to_string(value->size()) + " bytes of '" +
                  flags.key + "' to " + flags.out);
  } else if (!out.out_is_terminal()) {
    out.PrintRaw(*value);
  } else {
    PrintPreview(flags, *value, out);
  }
  return Status();
}

void PrintExists(const std::string& key, const ExistsInfo& info, Output& out) {
  if (out.json()) {
    nlohmann::json group = nullptr;
    if (info.group) {
      group = {{"id", info.group->group_id},
               {"state", std::string(GroupStateName(info.group->state))},
               {"expected", info.group->expected},
               {"present", info.group->present}};
    }
    out.PrintJson({{"key", key},
                   {"exists", info.exists},
                   {"size", info.size},
                   {"group", group}});
    return;
  }
  Table table({"KEY", "EXISTS", "SIZE", "GROUP", "STATE", "PRESENT/EXPECTED"});
  std::vector<std::string> row = {key, info.exists ? "true" : "false",
                                  std::to_string(info.size)};
  if (info.group) {
    row.push_back(info.group->group_id);
    row.push_back(std::string(GroupStateName(info.group->state)));
    row.push_back(std::to_string(info.group->present) + "/" +
                  std::to_string(info.group->expected));
  }
  table.AddRow(std::move(row));
  out.PrintTable(table);
}

Status RunExists(const KeyFlags& flags, Output& out, std::string* hint) {
  MT_ASSIGN_OR_RETURN(std::unique_ptr<Client> client,
                      Connect(flags.connection, hint));
  Result<ExistsInfo> info = client->Exists(flags.key);
  if (!info.ok()) {
    *hint = KvHint(info.status(), flags.key, flags.connection);
    return info.status();
  }
  PrintExists(flags.key, *info, out);
  return Status();
}

// The group `key` belongs to, if a probe can tell; nullopt otherwise.
std::optional<std::string> GroupOf(Client& client, const std::string& key) {
  Result<ExistsInfo> info = client.Exists(key);
  if (!info.ok() || !info->group) return std::nullopt;
  return info->group->group_id;
}

// A group's state after one of its members was removed: its state name,
// or "removed" when the remove policy took the whole group.
std::string GroupStateAfterRemove(Client& client, const std::string& group) {
  Result<GroupInfo> info = client.GetGroup(group);
  if (info.ok()) return std::string(GroupStateName(info->status.state));
  if (info.status().reason() == ErrorReason::kGroupNotFound) return "removed";
  return "unknown (" + std::string(ReasonName(info.status().reason())) + ")";
}

Status RunRemove(const KeyFlags& flags, Output& out, std::string* hint) {
  MT_ASSIGN_OR_RETURN(std::unique_ptr<Client> client,
                      Connect(flags.connection, hint));
  const std::optional<std::string> group = GroupOf(*client, flags.key);
  RemoveOptions options;
  options.force = flags.force;
  const Status status = client->Remove(flags.key, options);
  if (!status.ok()) {
    *hint = KvHint(status, flags.key, flags.connection);
    return status;
  }
  // Removing a member acts on its group (the group remove policy), so say
  // what became of the group.
  std::optional<std::string> group_state;
  if (group) group_state = GroupStateAfterRemove(*client, *group);
  if (out.json()) {
    nlohmann::json group_json = nullptr;
    if (group) group_json = {{"id", *group}, {"state", *group_state}};
    out.PrintJson(
        {{"key", flags.key}, {"removed", true}, {"group", group_json}});
    return Status();
  }
  std::string line = "removed '" + flags.key + "'";
  if (group && *group_state == "removed") {
    line +=
        " and, by the group remove policy, its whole group '" + *group + "'";
  } else if (group) {
    line += "; its group '" + *group + "' is now " + *group_state;
  }
  out.PrintLine(line);
  return Status();
}

// ---- Registration ----------------------------------------------------------
// Each command's flags live in a shared_ptr owned by its callbacks, so they
// live as long as the app.

void RegisterPut(CLI::App& kv, CliContext& context) {
  auto flags = std::make_shared<PutFlags>();
  CLI::App& put = AddKeyCommand(
      kv, "put", "Store a value under KEY (fails with OBJECT_EXISTS if set)",
      flags->key);
  put.add_option("--file", flags->file, "Read the value from file F")
      ->type_name("F")
      ->check(CLI::ExistingFile);
  put.add_option("--value", flags->value, "The value is the string V")
      ->type_name("V");
  put.add_option("--size", flags->size,
                 "The value is N pseudo-random bytes, seeded from the key "
                 "(the same key and size give the same bytes); N up to 1GiB")
      ->type_name("N")
      ->transform(CLI::AsSizeValue(false));
  put.add_option("--group", flags->group_id,
                 "Put as a member of group ID (needs --group-size and "
                 "--group-index)")
      ->type_name("ID");
  put.add_option("--group-size", flags->group_size, "Members the group expects")
      ->type_name("N")
      ->check(WholeNumber(1, std::numeric_limits<uint32_t>::max()));
  put.add_option("--group-index", flags->group_index,
                 "This member's index, below --group-size")
      ->type_name("I");
  AddConnectionFlags(put, flags->connection);
  put.footer(
      "Exactly one of --file, --value, --size. Prints what was "
      "stored; with -o json {\"key\",\"size\",\"group\"}.");
  put.callback([&put, &context, flags] {
    ValidatePut(put, *flags);
    context.Select([&put, &context, flags](Output& out, Failure* failure) {
      UseGlobalTimeout(put, context, flags->connection);
      return RunPut(put, *flags, out, &failure->hint);
    });
  });
}

void RegisterGet(CLI::App& kv, CliContext& context) {
  auto flags = std::make_shared<GetFlags>();
  CLI::App& get = AddKeyCommand(kv, "get", "Read the value of KEY", flags->key);
  get.add_option("--out", flags->out, "Write the value to file F")
      ->type_name("F");
  AddConnectionFlags(get, flags->connection);
  get.footer(
      "Without --out the raw bytes go to stdout when it is not a terminal "
      "(a pipe or a file: 'kv get K > F'); on a terminal a summary and a "
      "hexdump of the first 256 bytes are printed instead. With -o json: "
      "{\"key\",\"size\",\"value\"} where value is base64, or "
      "{\"key\",\"size\",\"out\"} with --out. Exit 3 when KEY does not "
      "exist.");
  get.callback([&get, &context, flags] {
    context.Select([&get, &context, flags](Output& out, Failure* failure) {
      UseGlobalTimeout(get, context, flags->connection);
      return RunGet(*flags, out, &failure->hint);
    });
  });
}

void RegisterExists(CLI::App& kv, CliContext& context) {
  auto flags = std::make_shared<KeyFlags>();
  CLI::App& exists = AddKeyCommand(
      kv, "exists",
      "Probe KEY: exists, size and its group's state (no lease, no access)",
      flags->key);
  AddConnectionFlags(exists, flags->connection);
  exists.footer(
      "A missing key is an answer, not an error: it prints exists=false and "
      "exits 0. With -o json: {\"key\",\"exists\",\"size\",\"group\"}, group "
      "{\"id\",\"state\",\"expected\",\"present\"} or null.");
  exists.callback([&exists, &context, flags] {
    context.Select([&exists, &context, flags](Output& out, Failure* failure) {
      UseGlobalTimeout(exists, context, flags->connection);
      return RunExists(*flags, out, &failure->hint);
    });
  });
}

void RegisterRemove(CLI::App& kv, CliContext& context) {
  auto flags = std::make_shared<KeyFlags>();
  CLI::App& rm = AddKeyCommand(kv, "rm", "Remove KEY", flags->key);
  rm.add_flag("--force", flags->force,
              "Remove even while a reader holds a lease");
  AddConnectionFlags(rm, flags->connection);
  rm.footer(
      "Removing a member of a group acts on the group as the store's group "
      "remove policy says (by default the whole group goes); the output "
      "says what became of the group. Exit 3 when KEY does not exist. With "
      "-o json: {\"key\",\"removed\",\"group\"}, group {\"id\",\"state\"} "
      "or null.");
  rm.callback([&rm, &context, flags] {
    context.Select([&rm, &context, flags](Output& out, Failure* failure) {
      UseGlobalTimeout(rm, context, flags->connection);
      return RunRemove(*flags, out, &failure->hint);
    });
  });
}

}  // namespace

void RegisterKvCommands(CLI::App& app, CliContext& context) {
  CLI::App& kv = *app.add_subcommand("kv", kKvDescription);
  kv.require_subcommand(1);
  RegisterPut(kv, context);
  RegisterGet(kv, context);
  RegisterExists(kv, context);
  RegisterRemove(kv, context);
}

}  // namespace mooncake_tier::cli

#include "daemon/daemon_options.h"

#include <unistd.h>

#include <cctype>
#include <functional>
#include <memory>
#include <set>

#include "admin_server/admin_server.h"
#include "daemon/option_units.h"
#include "rpc/call_authorizer.h"

namespace mooncake_tier::daemon {
namespace {

constexpr const char* kConfigHelp =
    "Read options from FILE (TOML or INI): one `name = value` per line, "
    "names being the long flag names without dashes (dram = \"4GiB\", "
    "offload-mode = \"off\"); lines under a [master], [node] or [standalone] "
    "section apply only to that subcommand. Flags given on the command line "
    "win. Default: none.";

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
    return "node";
  }
  return name;
}

// Reads config files for the subcommand being run: lines outside any
// section and lines in that subcommand's section apply to it, sections of
// the other subcommands are skipped (so one file may serve all three), and
// anything else is reported as an unknown option.
bool IsMode(const std::string& name) {
  return name == "master" || name == "node" || name == "standalone";
}

class ModeConfig final : public CLI::ConfigTOML {
 public:
  explicit ModeConfig(const CLI::App* root) : root_(root) {}

  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    std::vector<CLI::ConfigItem> items = CLI::ConfigTOML::from_config(input);
    const std::vector<CLI::App*> selected = root_->get_subcommands();
    if (selected.empty()) return items;
    const std::string mode = selected.front()->get_name();
    std::vector<CLI::ConfigItem> kept;
    for (CLI::ConfigItem& item : items) {
      const bool marker = item.name == "++" || item.name == "--";
      if (item.parents.empty()) {
        if (marker) continue;
        item.parents = {mode};
      } else if (item.parents.front() == mode) {
        if (marker) continue;
      } else if (IsMode(item.parents.front())) {
        continue;  // another subcommand's section
      }
      kept.push_back(std::move(item));
    }
    return kept;
  }

 private:
  const CLI::App* const root_;
};

template <typename Enum>
CLI::Option* AddEnumOption(CLI::App* app, const std::string& name, Enum* target,
                           std::vector<std::string> names,
                           std::optional<Enum> (*parse)(std::string_view),
                           std::string_view (*name_of)(Enum),
                           const std::string& description) {
  CLI::Option* option = app->add_option_function<std::string>(
      name, [target, parse](const std::string& v) { *target = *parse(v); },
      description);
  option->check(CLI::IsMember(std::move(names)))
      ->type_name("NAME")
      ->default_str(std::string(name_of(*target)));
  return option;
}

// Refuses 0 (and negative numbers) for counts.
std::string AtLeastOne(const std::string& value) {
  try {
    return std::stoll(value) >= 1 ? std::string() : "must be at least 1";
  } catch (const std::exception&) {
    return "must be a whole number of at least 1";
  }
}

// A value flag bound straight to its field, default shown.
template <typename T>
CLI::Option* AddValue(CLI::App* app, const std::string& name, T* target,
                      const std::string& description) {
  return app->add_option(name, *target, description)->capture_default_str();
}

void AddCommonOptions(CLI::App* root, CLI::App* sub, DaemonOptions* o) {
  sub->footer(kUnitsHelp);
  CLI::Option* root_config = root->get_config_ptr();
  sub->add_option_function<std::string>(
         "--config",
         [root_config](const std::string& file) {
           root_config->add_result(file);
         },
         kConfigHelp)
      ->trigger_on_parse()
      ->configurable(false)
      ->type_name("FILE");
  AddValue(sub, "--log-level", &o->log_level, "Log level (logs go to stderr).")
      ->check(CLI::IsMember(
          {"trace", "debug", "info", "warn", "error", "critical", "off"}));
  sub->add_option("--ready-file", o->ready_file,
                  "Write this file (atomically; key=value lines: pid, mode, "
                  "master_address, node_name, node_id, admin_address) once "
                  "serving, and remove it at shutdown. Default: none.")
      ->type_name("PATH");
}

void AddEngineOptions(CLI::App* sub, MasterConfig* c) {
  AddEnumOption(sub, "--offload-mode", &c->offload_mode,
                {"off", "write_through", "on_evict"}, &ParseOffloadMode,
                &OffloadModeName,
                "What happens to a DRAM copy on eviction: dropped (off), "
                "written to SSD at put end (write_through), or written to SSD "
                "before it is dropped (on_evict).");
  AddValue(sub, "--eviction-high-watermark", &c->eviction_high_watermark,
           "DRAM eviction starts at this used/capacity ratio.");
  AddValue(sub, "--eviction-ratio", &c->eviction_ratio,
           "DRAM eviction frees down to high watermark minus this ratio.");
  AddValue(sub, "--ssd-high-watermark", &c->ssd_high_watermark,
           "Per-node SSD eviction starts at this used/capacity ratio.");
  AddValue(sub, "--ssd-eviction-ratio", &c->ssd_eviction_ratio,
           "SSD eviction frees down to its high watermark minus this ratio.");
  AddEnumOption(sub, "--ssd-eviction-policy", &c->ssd_eviction_policy,
                {"clock", "lru"}, &ParseEvictionPolicy, &EvictionPolicyName,
                "Order in which the SSD tier gives up units: in the order "
                "they entered, units read meanwhile kept for another turn "
                "(clock), or least recently used first (lru).");
  AddDurationOption(sub, "--lease-ttl", &c->lease_ttl,
                    "How long a read protects an object from eviction.");
  AddDurationOption(sub, "--put-timeout", &c->put_timeout,
                    "A put still in flight after this long is revoked.");
  AddDurationOption(sub, "--grant-window", &c->grant_window,
                    "How long after its PutStart a client may start writing "
                    "a put's bytes (capped at --put-timeout and half of "
                    "--node-ttl); a restarted master places nothing on "
                    "nodes that lived on for this long plus "
                    "--late-write-margin.");
  AddDurationOption(sub, "--location-grant", &c->location_grant,
                    "How long a client may read an object's DRAM copy again "
                    "from its location cache with no call to the master; "
                    "DRAM freed meanwhile is not handed out before (capped "
                    "like --grant-window). 0: every read asks the master.");
  AddDurationOption(sub, "--late-write-margin", &c->late_write_margin,
                    "How much later than its grant's window a write under "
                    "way may still land.");
  AddDurationOption(sub, "--node-ttl", &c->node_ttl,
                    "A node silent this long is dead (half of it: suspect).");
  AddDurationOption(sub, "--directory-record-timeout",
                    &c->directory_record_timeout,
                    "How long a put's end waits for its node to record the "
                    "object in its DRAM directory before it answers "
                    "TIMEOUT.");
  AddValue(sub, "--writeback-watermark", &c->writeback_watermark,
           "Writeback: on each node, units not yet on SSD are written back "
           "(coldest first, kept in DRAM, clean) while they hold more than "
           "this share of its DRAM, so that a put into a full tier drops a "
           "clean copy at once.");
  AddDurationOption(sub, "--put-wait-timeout", &c->put_wait_timeout,
                    "A put that finds DRAM full and nothing clean waits this "
                    "long at most (and never past its RPC deadline) for "
                    "writeback to free room; 0: never waits.");
  AddValue(sub, "--offload-max-per-pull,--offload-max-per-heartbeat",
           &c->offload_max_per_pull,
           "Offload tasks handed to a node per request for work (the old "
           "name, from when heartbeats carried tasks, still works).");
  AddValue(sub, "--offload-queue-limit", &c->offload_queue_limit,
           "Queued and running offload tasks per node.");
  AddDurationOption(sub, "--offload-task-timeout", &c->offload_task_timeout,
                    "An offload not reported within this time is reaped.");
}

void AddGroupOptions(CLI::App* sub, MasterConfig* c) {
  AddEnumOption(sub, "--group-visibility", &c->group_visibility,
                {"all_or_nothing", "best_effort"}, &ParseGroupVisibility,
                &GroupVisibilityName,
                "Whether members of an incomplete group are readable.");
  AddEnumOption(sub, "--group-remove-policy", &c->group_remove_policy,
                {"group", "member"}, &ParseGroupRemovePolicy,
                &GroupRemovePolicyName,
                "Removing one member removes its whole group (group) or only "
                "it, breaking the group (member).");
  AddDurationOption(sub, "--group-fill-timeout", &c->group_fill_timeout,
                    "A group still filling this long expires.");
  AddDurationOption(sub, "--group-broken-ttl", &c->group_broken_ttl,
                    "Survivors of a broken group are removed after this.");
  AddValue(sub, "--group-filling-max-ratio", &c->group_filling_max_ratio,
           "Share of DRAM that groups still filling may hold before new "
           "groups are refused.");
  AddValue(sub, "--max-group-size", &c->max_group_size,
           "Largest group_size accepted.");
}

void AddPromotionOptions(CLI::App* sub, PromotionOptions* p) {
  sub->add_flag("--promotion-on-hit,!--no-promotion-on-hit", p->on_hit,
                "Copy SSD-only objects back to DRAM when they are read "
                "often enough. Default: on.");
  AddEnumOption(sub, "--promotion-policy", &p->policy, {"threshold", "tinylfu"},
                &ParsePromotionPolicy, &PromotionPolicyName,
                "Admission: sketch estimate reaches the threshold "
                "(threshold), and beats the DRAM victims (tinylfu).");
  AddValue(sub, "--promotion-admission-threshold", &p->admission_threshold,
           "Reads (sketch estimate) needed before a promotion.");
  AddValue(sub, "--promotion-queue-limit", &p->queue_limit,
           "Promotions in flight across the store.");
  AddValue(sub, "--promotion-max-per-pull,--promotion-max-per-heartbeat",
           &p->max_per_pull,
           "Promotion tasks handed to a node per request for work (the old "
           "name still works).");
  AddDurationOption(sub, "--promotion-task-timeout", &p->task_timeout,
                    "A promotion not finished within this time is reaped.");
  sub->add_flag("--promotion-drop-source", p->drop_source,
                "Drop the SSD copy once the DRAM copy is committed. "
                "Default: off.");
  AddValue(sub, "--promotion-proactive-low-watermark",
           &p->proactive_low_watermark,
           "While DRAM use is below this ratio, hot SSD-only objects are "
           "promoted without waiting for reads (0: never).");
}

void AddMasterOptions(CLI::App* sub, MasterProcessOptions* m) {
  AddValue(sub, "--listen", &m->listen,
           "Address (host:port) of the gRPC service; port 0 picks one.")
      ->type_name("HOST:PORT");
  AddDurationOption(sub, "--tick-interval", &m->tick_interval,
                    "How often the master's background steps run.");
  AddDurationOption(sub, "--shutdown-grace", &m->shutdown_grace,
                    "At shutdown, calls in flight get this long to finish.");
  sub->add_flag("--control-lane,!--no-control-lane", m->control_lane,
                "Serve the hot client calls (exists, replica lists, prefix "
                "probes) on a UCX control lane beside gRPC "
                "as well: a fraction of a gRPC call's cost. Clients find it "
                "through gRPC and fall back to gRPC without it. Its UCX "
                "transports follow UCX_TLS. Default: on.");
  sub->add_option("--node-token-file", m->node_token_file,
                  "Tokens (one per line) nodes must present with every call; "
                  "with this or --client-token-file every gRPC call is "
                  "authenticated. Re-read on SIGHUP. Default: none.")
      ->type_name("PATH");
  sub->add_option("--client-token-file", m->client_token_file,
                  "Tokens (one per line) clients must present with every "
                  "call. Re-read on SIGHUP. Default: none.")
      ->type_name("PATH");
  sub->add_flag("--insecure", m->insecure,
                "Serve gRPC on a non-loopback --listen without token files "
                "or required client certificates: anyone who reaches it may "
                "make any call. Default: off.");
  sub->add_option("--tls-cert", m->tls.cert,
                  "Serve gRPC over TLS with this PEM certificate chain (leaf "
                  "first; its URI name spiffe://mooncake-tier/master). "
                  "Re-read on SIGHUP. Default: none (plaintext).")
      ->type_name("PATH");
  sub->add_option("--tls-key", m->tls.key,
                  "The PEM private key of --tls-cert. Default: none.")
      ->type_name("PATH");
  sub->add_option("--tls-ca", m->tls.ca,
                  "PEM bundle of the CA certificates callers' certificates "
                  "must lead to. Default: none.")
      ->type_name("PATH");
  sub->add_option_function<std::string>(
         "--tls-client-auth",
         [m](const std::string& value) {
           m->tls_client_auth = *rpc::ParseTlsClientAuth(value);
         },
         "Callers' certificates: require (each caller shows one, which "
         "names its role), optional (callers without one show a token), "
         "none (tokens only). Default: require.")
      ->check(CLI::IsMember({"require", "optional", "none"}))
      ->type_name("MODE");
  AddEngineOptions(sub, &m->config);
  AddGroupOptions(sub, &m->config);
  AddPromotionOptions(sub, &m->config.promotion);
}

void AddHaOptions(CLI::App* sub, DaemonOptions* o) {
  AddValue(sub, "--etcd", &o->etcd,
           "etcd client addresses (HOST:PORT, comma-separated): campaign "
           "with the other masters of --cluster; one leads, the others "
           "stand by. Default: none (this master serves alone).")
      ->type_name("HOST:PORT[,...]");
  AddValue(sub, "--cluster", &o->ha_flags.cluster,
           "Name of the masters' cluster (with --etcd). Default: none.");
  AddValue(sub, "--advertise", &o->ha_flags.advertise,
           "gRPC address published when leading, where clients and nodes "
           "are sent (with --etcd). Default: --listen.")
      ->type_name("HOST:PORT");
  AddDurationOption(sub, "--etcd-lease-ttl", &o->etcd_lease_ttl,
                    "TTL of the etcd lease that carries leadership: a dead "
                    "leader is replaced within about this long (with "
                    "--etcd; at least 1s).");
  AddDurationOption(sub, "--recovery-timeout", &o->ha_flags.recovery_timeout,
                    "How long a new leader waits for the previous leader's "
                    "nodes to register before serving clients (with "
                    "--etcd).");
}

// Turns the --etcd flags into master.ha. An error message, or "".
std::string ApplyHaOptions(DaemonOptions* o) {
  if (o->etcd.empty()) {
    if (!o->ha_flags.cluster.empty() || !o->ha_flags.advertise.empty()) {
      return "--cluster and --advertise need --etcd";
    }
    return "";
  }
  if (o->ha_flags.cluster.empty()) return "--etcd needs --cluster NAME";
  for (char c : o->ha_flags.cluster) {
    if (c <= ' ' || c > '~' || c == '/') {
      return "--cluster '" + o->ha_flags.cluster +
             "': printable characters other than space and '/' only";
    }
  }
  MasterHaOptions ha = o->ha_flags;
  size_t begin = 0;
  while (true) {
    const size_t comma = o->etcd.find(',', begin);
    const std::string endpoint = o->etcd.substr(begin, comma - begin);
    if (!SplitHostPort(endpoint).ok()) {
      return "--etcd '" + o->etcd + "': '" + endpoint + "' is not HOST:PORT";
    }
    ha.etcd.push_back(endpoint);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (o->etcd_lease_ttl < std::chrono::seconds(1)) {
    return "--etcd-lease-ttl must be at least 1s";
  }
  ha.lease_ttl = std::chrono::ceil<std::chrono::seconds>(o->etcd_lease_ttl);
  const std::string advertise =
      ha.advertise.empty() ? o->master.listen : ha.advertise;
  Result<HostPort> where = SplitHostPort(advertise);
  if (!where.ok() || where->port == 0 || where->host == "0.0.0.0" ||
      where->host == "::") {
    return "the leader's address '" + advertise +
           "' must name a routable host and a fixed port: set --advertise";
  }
  // Published with it: the admin API's address, when it is fixed.
  Result<HostPort> admin = SplitHostPort(o->master_admin.listen);
  if (admin.ok() && admin->port != 0 && admin->host != "0.0.0.0" &&
      admin->host != "::") {
    ha.admin_advertise = o->master_admin.listen;
  }
  o->master.ha = std::move(ha);
  return "";
}

// An admin address: empty (disabled) or HOST:PORT.
std::string AdminAddressCheck(const std::string& value) {
  if (value.empty()) return "";
  Result<HostPort> split = SplitHostPort(value);
  return split.ok() ? "" : split.status().message();
}

void AddAdminOptions(CLI::App* sub, AdminOptions* a, bool node) {
  AddValue(sub, "--admin-listen", &a->listen,
           node ? "Address (host:port) of the node's admin HTTP server "
                  "(/healthz, /readyz, /metrics); port 0 picks one; \"\" "
                  "disables it."
                : "Address (host:port) of the admin HTTP API and /metrics; "
                  "port 0 picks one; \"\" disables it. A non-loopback "
                  "address needs an admin token.")
      ->type_name("HOST:PORT")
      ->check(AdminAddressCheck, "", "");
  CLI::Option* token =
      sub->add_option("--admin-token", a->token,
                      "Bearer token required by every mutating admin "
                      "request (POST, PATCH, DELETE); visible in the process "
                      "list, prefer --admin-token-file. Default: none.")
          ->type_name("TOKEN");
  CLI::Option* file =
      sub->add_option("--admin-token-file", a->token_file,
                      "Read the admin token from FILE: one line, surrounding "
                      "whitespace trimmed; blank and '#' lines skipped. "
                      "Default: none.")
          ->type_name("PATH");
  token->excludes(file);
  CLI::Option* cert =
      sub->add_option("--admin-tls-cert", a->tls_cert,
                      "Serve the admin port over HTTPS only, with this PEM "
                      "certificate chain (leaf first). Re-read on SIGHUP. "
                      "Default: none (plain HTTP).")
          ->type_name("PATH");
  CLI::Option* key = sub->add_option("--admin-tls-key", a->tls_key,
                                     "The PEM private key of "
                                     "--admin-tls-cert. Default: none.")
                         ->type_name("PATH");
  cert->needs(key);
  key->needs(cert);
}

void AddNodeOptions(CLI::App* sub, NodeProcessOptions* n, bool with_master) {
  if (with_master) {
    AddValue(sub, "--master", &n->master_address, "The master's gRPC address.")
        ->type_name("HOST:PORT");
  }
  AddValue(sub, "--name", &n->node.name,
           "Node name: its identity across restarts (default: host name).")
      ->check(
          [](const std::string& v) {
            return v.empty() ? std::string("must not be empty") : "";
          },
          "", "");
  AddSizeOption(sub, "--dram", &n->node.dram_bytes,
                "DRAM contributed to the memory tier.", /*min_bytes=*/1);
  sub->add_flag("--huge-pages", n->node.huge_pages,
                "Back the DRAM segment with 2 MiB pages when available. "
                "Default: off.");
  sub->add_flag("--dram-populate,!--no-dram-populate", n->node.populate_dram,
                "Fault the whole DRAM segment in from a background thread at "
                "start, so that puts into fresh ranges pay no page faults "
                "and the node holds its DRAM from the start. Off: pages are "
                "allocated as puts first touch them. Default: on.");
  AddValue(sub, "--ssd-dir", &n->ssd_dir,
           "Directory of the SSD store (created if missing; locked while "
           "in use).")
      ->type_name("DIR");
  AddSizeOption(sub, "--ssd-capacity", &n->ssd_capacity,
                "Cap on the SSD store's files, which grow on demand; 0: no "
                "SSD tier.");
  sub->add_flag("--direct-io,!--no-direct-io", n->direct_io,
                "Open SSD files with O_DIRECT: SSD I/O bypasses the page cache "
                "(writeback then costs no copy into it, and memory stays the "
                "DRAM tier's). On a file system that refuses O_DIRECT the "
                "node warns and goes through the page cache. Default: on.");
  AddDurationOption(sub, "--heartbeat-interval", &n->node.heartbeat_interval,
                    "How often the node heartbeats (keep well below the "
                    "master's --node-ttl).");
  AddValue(sub, "--io-batch", &n->node.io_batch,
           "Offloads and promotions per SSD batch.")
      ->check(AtLeastOne, "", "");
  AddValue(sub, "--io-workers", &n->node.io_workers,
           "Threads running SSD batches (offloads, promotions): a batch's "
           "device time overlaps the next one's preparation.")
      ->check(AtLeastOne, "", "");
  AddSizeOption(sub, "--io-batch-bytes", &n->node.io_batch_bytes,
                "Bytes of one offload batch, at most (one larger object still "
                "goes alone).",
                /*min_bytes=*/1);
  AddValue(sub, "--max-pending-tasks", &n->node.max_pending_tasks,
           "Tasks accepted but not yet run.")
      ->check(AtLeastOne, "", "");
  sub->add_option("--ucx-transports", n->ucx_transports,
                  "UCX transports, as UCX_TLS spells them (tcp, shm,tcp, "
                  "rc,ud). Default: empty (UCX_TLS, else UCX's choice).")
      ->type_name("LIST");
  AddDurationOption(sub, "--ucx-timeout", &n->ucx_timeout,
                    "Longest a UCX transfer waits.");
  // A standalone's node shares the master's process, so its DRAM dies with
  // the master's memory: a directory would cost every put a wait for the
  // node and could never serve a rebuild (docs/design/small-objects.md).
  sub->add_flag(
      "--dram-directory,!--no-dram-directory", n->node.dram_directory,
      std::string("Keep a directory of the committed DRAM objects, which the "
                  "master records each put in before acknowledging it") +
          (with_master
               ? ": a restarted master (or a new leader) rebuilds the DRAM "
                 "tier from it. Off: a master restart loses this node's "
                 "DRAM objects. Default: on."
               : ". The node here dies with its master, so nothing can "
                 "rebuild from it; it only costs every put a wait. Default: "
                 "off."));
  sub->add_flag_callback(
      "--no-shared-memory", [n] { n->shared_memory = false; },
      "Do not offer the DRAM segment to clients on this host as shared "
      "memory (they then use UCX, over TCP on one host). Default: offered.");
  AddValue(sub, "--ssd-read-threads", &n->ssd_read_threads,
           "Threads serving SSD-tier reads to clients.")
      ->check(AtLeastOne, "", "");
  AddSizeOption(sub, "--ssd-read-staging", &n->node.ssd_read_staging_bytes,
                "Shared memory behind the DRAM segment where SSD-tier reads "
                "of clients on this host are staged for them to copy (never "
                "allocated to objects; reads it cannot hold go over UCX); 0: "
                "off. Unused without an SSD tier or with --no-shared-memory.");
  AddDurationOption(sub, "--rpc-deadline", &n->rpc_deadline,
                    "Deadline of every call to the master.");
}

// The flags whose field names a validation message mentions.
std::string FlagsNamedIn(const std::string& message) {
  std::set<std::string> flags;
  std::string word;
  auto flush = [&] {
    if (word.find('_') != std::string::npos) {
      std::string flag = word;
      for (char& c : flag) c = c == '_' ? '-' : c;
      const bool promotion = message.rfind("promotion ", 0) == 0;
      flags.insert("--" + std::string(promotion ? "promotion-" : "") + flag);
    }
    word.clear();
  };
  for (char c : message) {
    if (std::islower(static_cast<unsigned char>(c)) || c == '_') {
      word += c;
    } else {
      flush();
    }
  }
  flush();
  std::string out;
  for (const std::string& flag : flags) out += (out.empty() ? "" : ", ") + flag;
  return out;
}

}  // namespace

std::string_view DaemonModeName(DaemonMode mode) {
  switch (mode) {
    case DaemonMode::kMaster:
      return "master";
    case DaemonMode::kNode:
      return "node";
    case DaemonMode::kStandalone:
      return "standalone";
  }
  return "unknown";
}

DaemonOptions::DaemonOptions() {
  master.config.offload_mode = OffloadMode::kOnEvict;
  node.node.name = HostName();
  master_admin.listen = std::string(kMasterAdminListen);
  node_admin.listen = std::string(kNodeAdminListen);
}

void RegisterDaemonOptions(CLI::App* app, DaemonOptions* options) {
  app->require_subcommand(1);
  app->set_config("--config", "", kConfigHelp)->type_name("FILE");
  app->config_formatter(std::make_shared<ModeConfig>(app));
  // A misspelt key in a config file is an error, not silently ignored.
  app->allow_config_extras(CLI::config_extras_mode::error);

  CLI::App* master = app->add_subcommand(
      "master", "Metadata service: the engine behind gRPC.");
  AddCommonOptions(app, master, options);
  AddMasterOptions(master, &options->master);
  AddHaOptions(master, options);
  AddAdminOptions(master, &options->master_admin, /*node=*/false);
  master->callback([options] { options->mode = DaemonMode::kMaster; });

  CLI::App* node = app->add_subcommand(
      "node",
      "Storage node: contributes DRAM (over UCX) and an SSD directory, "
      "heartbeats to the master, runs offload and promotion tasks.");
  AddCommonOptions(app, node, options);
  AddNodeOptions(node, &options->node, /*with_master=*/true);
  node->add_option("--node-token-file", options->node_token_file,
                   "The token (first line of PATH) this node presents to a "
                   "master that authenticates calls. Default: none.")
      ->type_name("PATH");
  node->add_option("--tls-ca", options->node.tls.ca,
                   "Dial the master over TLS: PEM bundle of the CA "
                   "certificates the master's certificate must lead to. "
                   "Default: none (plaintext).")
      ->type_name("PATH");
  node->add_option("--tls-cert", options->node.tls.cert,
                   "This node's PEM certificate chain (URI name "
                   "spiffe://mooncake-tier/node), shown to the master. "
                   "Re-read on SIGHUP. Default: none (a token proves the "
                   "role).")
      ->type_name("PATH");
  node->add_option("--tls-key", options->node.tls.key,
                   "The PEM private key of --tls-cert. Default: none.")
      ->type_name("PATH");
  node->add_option("--tls-server-name", options->node.tls_server_name,
                   "The name the master's certificate must carry, when not "
                   "the host of --master. Default: that host.")
      ->type_name("NAME");
  AddAdminOptions(node, &options->node_admin, /*node=*/true);
  node->callback([options] { options->mode = DaemonMode::kNode; });

  CLI::App* standalone = app->add_subcommand(
      "standalone",
      "A master and one node in one process, reachable at --listen exactly "
      "like a real master.");
  AddCommonOptions(app, standalone, options);
  AddMasterOptions(standalone, &options->master);
  AddNodeOptions(standalone, &options->node, /*with_master=*/false);
  standalone
      ->add_option("--tls-server-name", options->node.tls_server_name,
                   "With --tls-cert: the name the node checks in the master's "
                   "certificate when it dials it beside it, if the certificate "
                   "does not carry the --listen host (127.0.0.1 for a wildcard "
                   "--listen). Default: that host.")
      ->type_name("NAME");
  AddAdminOptions(standalone, &options->master_admin, /*node=*/false);
  CLI::Option* standalone_directory =
      standalone->get_option("--dram-directory");
  standalone->callback([options, standalone_directory] {
    options->mode = DaemonMode::kStandalone;
    // Off unless asked for: the node dies with its master (see above).
    if (standalone_directory->count() == 0) {
      options->node.node.dram_directory = false;
    }
  });
}

std::string ValidateDaemonOptions(const DaemonOptions& options) {
  const AdminOptions& admin = options.admin();
  if (!admin.listen.empty() && admin.token.empty() &&
      admin.token_file.empty()) {
    Result<HostPort> bind = SplitHostPort(admin.listen);
    if (bind.ok() && !admin::IsLoopbackAddress(bind->host)) {
      return "--admin-listen " + admin.listen +
             " is not a loopback address: set --admin-token or "
             "--admin-token-file, or bind 127.0.0.1";
    }
  }
  if (options.mode == DaemonMode::kNode) return "";
  const MasterProcessOptions& master = options.master;
  if (!master.insecure && !master.authenticated()) {
    Result<HostPort> bind = SplitHostPort(master.listen);
    if (bind.ok() && !admin::IsLoopbackAddress(bind->host)) {
      return "--listen " + master.listen +
             " is not a loopback address and calls would not be "
             "authenticated: give --tls-cert, --tls-key and --tls-ca "
             "(client certificates required), or --node-token-file and "
             "--client-token-file (docs/operations.md, \"Authenticated "
             "calls\"), or --insecure to serve anyone who reaches it";
    }
  }
  const std::string error = options.master.config.Validate();
  if (error.empty()) return "";
  const std::string flags = FlagsNamedIn(error);
  return "invalid master configuration" +
         (flags.empty() ? std::string() : " (" + flags + ")") + ": " + error;
}

CommandLine ParseCommandLine(const std::vector<std::string>& argv) {
  CLI::App app(
      "mooncake-tierd: the mooncake-tier daemon (master, storage "
      "node, or both in one process).",
      "mooncake-tierd");
  auto options = std::make_unique<DaemonOptions>();
  RegisterDaemonOptions(&app, options.get());
  std::vector<const char*> args;
  for (const std::string& arg : argv) args.push_back(arg.c_str());
  CommandLine result;
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::CallForHelp&) {
    result.output = app.help();
    return result;
  } catch (const CLI::CallForAllHelp&) {
    result.output = app.help("", CLI::AppFormatMode::All);
    return result;
  } catch (const CLI::ParseError& e) {
    const std::vector<CLI::App*> selected = app.get_subcommands();
    const std::string command =
        "mooncake-tierd" +
        (selected.empty() ? std::string() : " " + selected.front()->get_name());
    result.exit_code = 2;
    result.output =
        command + ": error: " + e.what() + " (see " + command + " --help)";
    return result;
  }
  AdminOptions& admin = options->mode == DaemonMode::kNode
                            ? options->node_admin
                            : options->master_admin;
  if (!admin.token_file.empty()) {
    Result<std::string> token = ReadTokenFile(admin.token_file);
    if (!token.ok()) {
      result.exit_code = 2;
      result.output = "mooncake-tierd " +
                      std::string(DaemonModeName(options->mode)) +
                      ": error: " + token.status().message();
      return result;
    }
    admin.token = std::move(*token);
  }
  // The token a node presents: its own file, or in standalone the first of
  // the master's node tokens (the node dials the master beside it).
  const std::string& node_token_file =
      options->mode == DaemonMode::kNode ? options->node_token_file
      : options->mode == DaemonMode::kStandalone
          ? options->master.node_token_file
          : std::string();
  if (!node_token_file.empty()) {
    Result<std::vector<std::string>> tokens =
        rpc::ReadTokenLines(node_token_file);
    if (!tokens.ok()) {
      result.exit_code = 2;
      result.output = "mooncake-tierd " +
                      std::string(DaemonModeName(options->mode)) +
                      ": error: " + tokens.status().message();
      return result;
    }
    options->node.token = tokens->front();
  }
  // In standalone the node dials the master beside it with the master's
  // own certificate.
  if (options->mode == DaemonMode::kStandalone &&
      options->master.tls.has_identity()) {
    options->node.tls = options->master.tls;
  }
  if (options->mode == DaemonMode::kMaster) {
    if (std::string error = ApplyHaOptions(options.get()); !error.empty()) {
      result.exit_code = 2;
      result.output = "mooncake-tierd master: error: " + error;
      return result;
    }
  }
  if (std::string error = ValidateDaemonOptions(*options); !error.empty()) {
    result.exit_code = 2;
    result.output = "mooncake-tierd " +
                    std::string(DaemonModeName(options->mode)) +
                    ": error: " + error;
    return result;
  }
  result.options = std::move(*options);
  return result;
}

}  // namespace mooncake_tier::daemon

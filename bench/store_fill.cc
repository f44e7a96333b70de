#include "bench/store_fill.h"

#include <chrono>

#include "httplib.h"
#include "nlohmann/json.hpp"

namespace mooncake_tier::bench {

StoreFill ReadStoreFill(const RemoteStore& store) {
  StoreFill fill;
  if (store.spawned == nullptr || store.spawned->admin().empty()) return fill;
  httplib::Client http("http://" + store.spawned->admin());
  http.set_read_timeout(10, 0);
  httplib::Result res = http.Get("/api/v1/nodes");
  if (!res || res->status != 200) return fill;
  const nlohmann::json body =
      nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("nodes")) return fill;
  for (const nlohmann::json& node : body["nodes"]) {
    const nlohmann::json ssd = node.value("ssd", nlohmann::json::object());
    const nlohmann::json dram = node.value("dram", nlohmann::json::object());
    fill.ssd_object_capacity += ssd.value("capacity_bytes", uint64_t{0});
    fill.ssd_used += ssd.value("used_bytes", uint64_t{0});
    if (ssd.contains("store")) {
      fill.ssd_device_bytes_written +=
          ssd["store"].value("device_bytes_written", uint64_t{0});
    }
    fill.dram_used += dram.value("used_bytes", uint64_t{0});
  }
  fill.known = true;
  return fill;
}

void ReadPromotionCounters(const RemoteStore& store, StoreFill& fill) {
  if (store.spawned == nullptr || store.spawned->admin().empty()) return;
  httplib::Client http("http://" + store.spawned->admin());
  http.set_read_timeout(10, 0);
  httplib::Result res = http.Get("/api/v1/status");
  if (!res || res->status != 200) return;
  const nlohmann::json status =
      nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (!status.is_object() || !status.contains("promotions")) return;
  const nlohmann::json& p = status["promotions"];
  fill.promotion_attempts = p.value("attempts_total", uint64_t{0});
  fill.promotions_completed = p.value("completed_total", uint64_t{0});
  fill.promotions_useful = p.value("useful_total", uint64_t{0});
  fill.promotion_admission_gated =
      p.value("admission_gated_total", uint64_t{0});
  fill.promotion_watermark_gated =
      p.value("watermark_gated_total", uint64_t{0});
  fill.promotion_alloc_failed = p.value("alloc_failed_total", uint64_t{0});
}

FillSampler::FillSampler(const RemoteStore& store) : store_(store) {
  if (store.spawned == nullptr) return;
  thread_ = std::thread([this] { Loop(); });
}

FillSampler::~FillSampler() { Stop(); }

StoreFill FillSampler::Finish() {
  Stop();
  StoreFill last = ReadStoreFill(store_);
  if (!last.known) return last;
  ReadPromotionCounters(store_, last);
  MutexLock lock(&mu_);
  const size_t from = samples_.size() / 2;
  if (samples_.size() == from) return last;
  double ssd = 0, dram = 0;
  for (size_t i = from; i < samples_.size(); ++i) {
    ssd += static_cast<double>(samples_[i].ssd_used);
    dram += static_cast<double>(samples_[i].dram_used);
  }
  const double n = static_cast<double>(samples_.size() - from);
  last.ssd_used = static_cast<uint64_t>(ssd / n);
  last.dram_used = static_cast<uint64_t>(dram / n);
  return last;
}

void FillSampler::Loop() {
  while (true) {
    StoreFill sample = ReadStoreFill(store_);
    MutexLock lock(&mu_);
    if (sample.known) samples_.push_back(sample);
    if (!stop_) wake_.WaitFor(std::chrono::seconds(1));
    if (stop_) return;
  }
}

void FillSampler::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    wake_.Signal();
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace mooncake_tier::bench

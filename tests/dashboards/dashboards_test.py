#!/usr/bin/python3
"""Checks of dashboards/ (Grafana dashboards, Prometheus config, alert rules).

    dashboards_test.py promtool --source-dir DIR
        promtool check config, check rules, and test rules (alert unit tests
        in tests/dashboards/alerts_test.yml).
    dashboards_test.py static --source-dir DIR
        Every metric name a dashboard expression, dashboard variable or alert
        expression uses is declared in metrics/metric_catalog.h (histograms
        through their _bucket/_sum/_count series), with the label names it
        matches on; dashboard structure (schemaVersion, the ${datasource}
        variable, no hard-coded datasource uid, unique ids).
    dashboards_test.py live --source-dir DIR --tierd PATH --workload PATH
        Starts `mooncake-tierd standalone` with its admin server on a free
        port, a real Prometheus scraping it every second with the alert rules
        loaded, runs dashboard_workload against the daemon, then evaluates
        every panel expression (Grafana's $__rate_interval, $__interval and
        template variables substituted) and every alert rule's measure (see
        below) through /api/v1/query and requires data; checks that every
        rule evaluates without error and that every metric name of
        dashboards/ appears in the daemon's /metrics. MOONCAKE_TIERD in the
        environment overrides --tierd.

Alert rules are written `<measure> <comparison> <number>` (the comparison at
the top level). The live test evaluates the measure alone, which must return
data on a healthy store (the comparison only filters it), and the whole
expression, which must evaluate without error (it is normally empty).

Exit codes: 0 pass, 1 fail (every failure is listed: dashboard, panel,
expression and why), 2 usage, 77 skipped (promtool or prometheus not
installed). Standard library only.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

SKIP = 77

# Grafana's built-in interval variables, as the live test substitutes them.
# The test's Prometheus scrapes every second and has recorded for well under
# a minute, so a 1m window holds every sample.
GRAFANA_BUILTINS = {
    "$__rate_interval": "1m",
    "$__interval": "15s",
    "$__range": "5m",
}

# Metric names Prometheus itself provides (not in the catalog).
PROMETHEUS_METRICS = {"up"}
# Labels the scrape adds (prometheus.yml) and the histogram bucket label.
TARGET_LABELS = {"instance", "job", "role", "system"}

PROMQL_KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool",
    "and", "or", "unless", "offset", "inf", "nan",
}


class Failures:
    def __init__(self):
        self.items = []

    def add(self, where, message):
        self.items.append(f"{where}: {message}")

    def report(self, what):
        if self.items:
            print(f"FAIL: {what}: {len(self.items)} problem(s)")
            for item in self.items:
                print(f"  - {item}")
            return 1
        print(f"PASS: {what}")
        return 0


# ---------------------------------------------------------------- sources

def dashboard_files(source_dir):
    root = os.path.join(source_dir, "dashboards", "grafana")
    return sorted(os.path.join(root, f) for f in os.listdir(root)
                  if f.endswith(".json"))


def prometheus_dir(source_dir):
    return os.path.join(source_dir, "dashboards", "prometheus")


def load_dashboards(source_dir):
    out = []
    for path in dashboard_files(source_dir):
        with open(path) as f:
            out.append((os.path.basename(path), json.load(f)))
    return out


def walk_panels(panels):
    for panel in panels:
        yield panel
        yield from walk_panels(panel.get("panels", []))


def dashboard_exprs(dashboard):
    """(panel title, refId, expr) of every target of every panel."""
    for panel in walk_panels(dashboard.get("panels", [])):
        for target in panel.get("targets", []):
            if "expr" in target:
                yield panel.get("title", "?"), target.get("refId", "?"), target["expr"]


def variable_queries(dashboard):
    """(variable name, query) of every query variable."""
    for var in dashboard.get("templating", {}).get("list", []):
        if var.get("type") == "query":
            query = var.get("query")
            if isinstance(query, dict):
                query = query.get("query", "")
            yield var["name"], query


def alert_exprs(path):
    """(alert name, expr) from an alert rules file.

    A small reader for the layout alerts.yml uses (no YAML library in the
    standard library): `- alert: NAME` followed by `expr:` either inline or
    as a block scalar (`|`, `>`, with optional chomping) indented below it.
    The promtool test checks the file is valid YAML and valid rules, and the
    live test compares this reader's count with the rules Prometheus loaded.
    """
    with open(path) as f:
        lines = f.read().splitlines()
    out = []
    name = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^\s*-\s*alert:\s*(\S+)\s*$", line)
        if m:
            name = m.group(1)
        m = re.match(r"^(\s*)expr:\s*(.*?)\s*$", line)
        if m and name is not None:
            indent, value = len(m.group(1)), m.group(2)
            if re.fullmatch(r"[|>][-+]?", value):
                body = []
                i += 1
                while i < len(lines) and (not lines[i].strip() or
                                          len(lines[i]) - len(lines[i].lstrip()) > indent):
                    body.append(lines[i].strip())
                    i += 1
                out.append((name, " ".join(b for b in body if b)))
                name = None
                continue
            out.append((name, value.strip("'\"")))
            name = None
        i += 1
    return out


def parse_catalog(source_dir):
    """{full name: (kind, [labels])} from metrics/metric_catalog.h."""
    path = os.path.join(source_dir, "metrics", "metric_catalog.h")
    with open(path) as f:
        text = f.read()
    body = text[text.index("#define MOONCAKE_TIER_METRICS(X)"):]
    body = body[:body.index("enum class MetricId")]
    text = re.sub(r"/\*.*?\*/", " ", body.replace("\\\n", " "), flags=re.S)
    pattern = re.compile(
        r'X\(\s*k\w+\s*,\s*k(Master|Node|Edge)\s*,\s*k(Counter|Gauge|Histogram)\s*,'
        r'\s*"([a-z0-9_]+)"\s*,\s*"([a-z0-9_,]*)"')
    catalog = {}
    for scope, kind, name, labels in pattern.findall(text):
        catalog["mooncake_" + name] = (kind.lower(),
                                       [l for l in labels.split(",") if l])
    return catalog


def catalog_series(catalog):
    """{series name: (family name, kind, labels)}: histograms expand."""
    out = {}
    for name, (kind, labels) in catalog.items():
        if kind == "histogram":
            out[name + "_bucket"] = (name, kind, labels + ["le"])
            out[name + "_sum"] = (name, kind, labels)
            out[name + "_count"] = (name, kind, labels)
        else:
            out[name] = (name, kind, labels)
    return out


# ---------------------------------------------------------------- PromQL

def substitute(expr, variables):
    """Grafana's substitution: built-ins, then $var / ${var} / [[var]]."""
    for k, v in GRAFANA_BUILTINS.items():
        expr = expr.replace("${" + k[1:] + "}", v).replace(k, v)

    def var(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name not in variables:
            raise KeyError(name)
        return variables[name]
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]", var, expr)


def metric_selectors(expr):
    """[(metric name, {label names matched})] used by a PromQL expression.

    Strings are blanked, label matchers and range/subquery brackets taken
    out (their label names kept with the metric they follow), label lists
    of by/without/on/ignoring/group_left/group_right dropped; what remains
    is functions and aggregations (identifiers followed by '('), keywords,
    numbers, operators and metric names.
    """
    # Blank string literals, keeping positions.
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`',
               lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', expr)
    # Label matchers: the label names matched on, by metric name.
    matchers = {}
    for m in re.finditer(r"([a-zA-Z_:][\w:]*)\s*\{([^}]*)\}", s):
        matchers.setdefault(m.group(1), set()).update(
            re.findall(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)", m.group(2)))
    s = re.sub(r"\{[^}]*\}", " ", s)
    s = re.sub(r"\[[^\]]*\]", " ", s)
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)",
               " ", s)
    s = re.sub(r"\boffset\s+-?\w+", " ", s)
    out = []
    for m in re.finditer(r"[a-zA-Z_:][\w:]*", s):
        name = m.group(0)
        if name.lower() in PROMQL_KEYWORDS:
            continue
        if re.match(r"\s*\(", s[m.end():]):
            continue  # a function or aggregation
        # Exponents and durations inside numbers (1e3, 5m) are not names.
        if m.start() > 0 and (s[m.start() - 1].isdigit() or s[m.start() - 1] == "."):
            continue
        out.append((name, matchers.get(name, set())))
    return out


def label_values_query(query):
    """label_values(metric, label) -> (metric, label); None otherwise."""
    m = re.fullmatch(r"\s*label_values\(\s*([a-zA-Z_:][\w:]*)\s*(?:\{[^}]*\})?\s*,\s*(\w+)\s*\)\s*",
                     query)
    return (m.group(1), m.group(2)) if m else None


def split_threshold(expr):
    """(measure, operator, threshold) of '<measure> <cmp> <number>'.

    The comparison must sit at the top level: outside (), [], {} and
    strings. None when the expression has no such form.
    """
    depth = 0
    in_string = None
    last = None
    i = 0
    while i < len(expr):
        c = expr[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            if c == in_string:
                in_string = None
        elif c in "\"'`":
            in_string = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            op = None
            for candidate in (">=", "<=", "==", "!=", ">", "<"):
                if expr.startswith(candidate, i):
                    op = candidate
                    break
            if op:
                last = (i, op)
                i += len(op)
                continue
        i += 1
    if not last:
        return None
    pos, op = last
    rhs = expr[pos + len(op):].strip()
    if rhs.startswith("bool "):
        return None
    if not re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?", rhs):
        return None
    return expr[:pos].strip(), op, float(rhs)


# ---------------------------------------------------------------- promtool

def find_tool(name):
    path = shutil.which(name)
    if path is None:
        print(f"SKIP: {name} is not installed (scripts/install-deps.sh installs "
              f"Debian's prometheus package, which provides it)")
    return path


def cmd_promtool(args):
    promtool = find_tool("promtool")
    if promtool is None:
        return SKIP
    pdir = prometheus_dir(args.source_dir)
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    checks = [
        [promtool, "check", "config", os.path.join(pdir, "prometheus.yml")],
        [promtool, "check", "rules", os.path.join(pdir, "alerts.yml")],
        [promtool, "test", "rules", os.path.join(tests_dir, "alerts_test.yml")],
    ]
    failures = Failures()
    for argv in checks:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        what = " ".join(argv[1:3] + [os.path.relpath(argv[3], args.source_dir)])
        if result.returncode != 0:
            failures.add(what, f"exit {result.returncode}\n{result.stdout}{result.stderr}")
        else:
            print(f"ok: promtool {what}")
    return failures.report("promtool")


# ---------------------------------------------------------------- static

def check_names(where, expr, series, failures):
    for name, labels in metric_selectors(expr):
        if name in PROMETHEUS_METRICS:
            continue
        if name not in series:
            failures.add(where, f"metric '{name}' is not in metrics/metric_catalog.h "
                         f"(expr: {expr})")
            continue
        family, kind, declared = series[name]
        unknown = labels - set(declared) - TARGET_LABELS
        if unknown:
            failures.add(where, f"'{name}' has no label(s) {sorted(unknown)} "
                         f"(declared: {declared}) (expr: {expr})")


def check_structure(file, dashboard, failures):
    if dashboard.get("schemaVersion", 0) < 37:
        failures.add(file, f"schemaVersion {dashboard.get('schemaVersion')} < 37")
    if not dashboard.get("uid"):
        failures.add(file, "no uid")
    variables = dashboard.get("templating", {}).get("list", [])
    ds = [v for v in variables if v.get("name") == "datasource"]
    if not ds or ds[0].get("type") != "datasource" or ds[0].get("query") != "prometheus":
        failures.add(file, "no 'datasource' variable of type datasource over prometheus")
    ids = set()
    for panel in walk_panels(dashboard.get("panels", [])):
        title = panel.get("title", "?")
        pid = panel.get("id")
        if pid in ids:
            failures.add(file, f"panel '{title}': duplicate id {pid}")
        ids.add(pid)
        if "gridPos" not in panel:
            failures.add(file, f"panel '{title}': no gridPos")
        if panel.get("type") == "row":
            continue
        if not panel.get("targets"):
            failures.add(file, f"panel '{title}': no targets")
        for obj in [panel] + panel.get("targets", []):
            ds_ref = obj.get("datasource")
            if ds_ref is not None and ds_ref != {"type": "prometheus", "uid": "${datasource}"}:
                failures.add(file, f"panel '{title}': datasource {ds_ref} is not "
                             "{type: prometheus, uid: ${datasource}}")
    for var in variables:
        if var.get("type") == "query":
            ds_ref = var.get("datasource")
            if ds_ref != {"type": "prometheus", "uid": "${datasource}"}:
                failures.add(file, f"variable '{var.get('name')}': datasource {ds_ref}")
            if var.get("includeAll") and var.get("allValue") is None:
                failures.add(file, f"variable '{var.get('name')}': includeAll without "
                             "allValue (the live test needs a value for All)")


def cmd_static(args):
    catalog = parse_catalog(args.source_dir)
    failures = Failures()
    if len(catalog) < 50:
        failures.add("metrics/metric_catalog.h",
                     f"parsed only {len(catalog)} metrics: the parser is out of date")
    series = catalog_series(catalog)
    dashboards = load_dashboards(args.source_dir)
    if len(dashboards) < 3:
        failures.add("dashboards/grafana", f"{len(dashboards)} dashboards, expected 3")
    uids = set()
    n_exprs = 0
    for file, dashboard in dashboards:
        check_structure(file, dashboard, failures)
        if dashboard.get("uid") in uids:
            failures.add(file, f"duplicate dashboard uid {dashboard.get('uid')}")
        uids.add(dashboard.get("uid"))
        for title, ref, expr in dashboard_exprs(dashboard):
            n_exprs += 1
            if not metric_selectors(expr):
                failures.add(f"{file} / {title} / {ref}", f"uses no metric: {expr}")
            check_names(f"{file} / {title} / {ref}", expr, series, failures)
        for name, query in variable_queries(dashboard):
            lv = label_values_query(query)
            if lv is None:
                failures.add(f"{file} / variable {name}",
                             f"query is not label_values(metric, label): {query}")
                continue
            check_names(f"{file} / variable {name}", lv[0], series, failures)
            if lv[0] in series and lv[1] not in series[lv[0]][2] + list(TARGET_LABELS):
                failures.add(f"{file} / variable {name}",
                             f"'{lv[0]}' has no label '{lv[1]}'")
    alerts = alert_exprs(os.path.join(prometheus_dir(args.source_dir), "alerts.yml"))
    if not alerts:
        failures.add("alerts.yml", "no alert rules found")
    for name, expr in alerts:
        check_names(f"alerts.yml / {name}", expr, series, failures)
        if split_threshold(expr) is None:
            failures.add(f"alerts.yml / {name}",
                         "not of the form '<measure> <comparison> <number>'")
    print(f"checked {n_exprs} panel expressions in {len(dashboards)} dashboards "
          f"and {len(alerts)} alert rules against {len(catalog)} catalog metrics")
    return failures.report("static")


# ---------------------------------------------------------------- live

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


class Prometheus:
    def __init__(self, base):
        self.base = base

    def api(self, path, **params):
        url = f"{self.base}{path}?{urllib.parse.urlencode(params, doseq=True)}"
        try:
            body = http_get(url)
        except urllib.error.HTTPError as e:
            body = e.read().decode()
        doc = json.loads(body)
        if doc.get("status") != "success":
            raise RuntimeError(f"{doc.get('errorType')}: {doc.get('error')}")
        return doc["data"]

    def query(self, expr):
        data = self.api("/api/v1/query", query=expr)
        if data["resultType"] == "vector":
            return data["result"]
        if data["resultType"] == "scalar":
            return [{"metric": {}, "value": data["result"]}]
        return data["result"]


def wait_for(what, fn, timeout, interval=0.2):
    """Polls fn() until it returns a true value; raises on timeout."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = fn()
            if value:
                return value
        except Exception as e:  # retried until the deadline
            last_error = e
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}"
                       + (f" (last error: {last_error})" if last_error else ""))


def read_ready_file(path):
    try:
        with open(path) as f:
            kv = dict(l.split("=", 1) for l in f.read().splitlines() if "=" in l)
    except FileNotFoundError:
        return None
    return kv if "admin_address" in kv and "master_address" in kv else None


def exposed_series(text):
    """Series names in a text exposition, histograms expanded."""
    names = set()
    for line in text.splitlines():
        m = re.match(r"#\s*TYPE\s+(\S+)\s+(\S+)", line)
        if m:
            names.add(m.group(1))
            if m.group(2) in ("histogram", "summary"):
                names.update(m.group(1) + s for s in ("_bucket", "_sum", "_count"))
        elif line and not line.startswith("#"):
            names.add(re.match(r"[a-zA-Z_:][\w:]*", line).group(0))
    return names


def sample_value(text, name, labels=None):
    """Sum of the samples of `name` whose labels include `labels`."""
    total, found = 0.0, False
    for line in text.splitlines():
        m = re.match(r"([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)", line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        if all(have.get(k) == v for k, v in (labels or {}).items()):
            total += float(m.group(3))
            found = True
    return total if found else None


# What the workload must have caused, read from the daemon's /metrics once
# it finished: the dashboards then show activity, not a flat line of zeros.
WORKLOAD_EFFECTS = [
    ("mooncake_get_total", {"result": "memory_hit"}),
    ("mooncake_get_total", {"result": "local_disk_hit"}),
    ("mooncake_get_total", {"result": "miss"}),
    ("mooncake_get_total", {"result": "group_incomplete"}),
    ("mooncake_evictions_total", {"tier": "memory"}),
    ("mooncake_offload_completed_total", {}),
    ("mooncake_promotion_attempts_total", {}),
    ("mooncake_promotion_queued_total", {}),
    ("mooncake_promotion_completed_total", {}),
    ("mooncake_removes_total", {}),
    ("mooncake_groups", {"state": "complete"}),
    ("mooncake_groups", {"state": "filling"}),
    ("mooncake_group_broken_total", {"cause": "removed"}),
    ("mooncake_rpc_requests_total", {"method": "PutStart", "code": "OK"}),
]


class Processes:
    """Children started by the live test, stopped (SIGTERM, then SIGKILL) at exit."""

    def __init__(self):
        self.procs = []

    def start(self, name, argv, log_path):
        log = open(log_path, "w")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        self.procs.append((name, proc, log_path))
        return proc

    def stop_all(self):
        for name, proc, _ in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()

    def dump_logs(self, tail=40):
        for name, proc, path in self.procs:
            try:
                with open(path) as f:
                    lines = f.read().splitlines()[-tail:]
            except OSError:
                lines = []
            print(f"--- {name} (exit {proc.poll()}), last {len(lines)} lines of {path}:")
            for line in lines:
                print(f"    {line}")


def write_prometheus_config(path, source_dir, admin_address):
    """The shipped prometheus.yml's shape with the test's interval and target.

    A standalone daemon serves the master's and the node's metrics on one
    admin endpoint, so it is scraped once, under the master job (as the
    shipped file says to do for standalone).
    """
    alerts = os.path.join(prometheus_dir(source_dir), "alerts.yml")
    with open(path, "w") as f:
        f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - {json.dumps(alerts)}
scrape_configs:
  - job_name: mooncake-master
    static_configs:
      - targets: [{json.dumps(admin_address)}]
        labels:
          role: master
""")


def cmd_live(args):
    promtool = find_tool("promtool")
    prometheus_bin = find_tool("prometheus")
    if promtool is None or prometheus_bin is None:
        return SKIP
    tierd = os.environ.get("MOONCAKE_TIERD") or args.tierd
    failures = Failures()
    if not tierd or not os.access(tierd, os.X_OK):
        failures.add("setup", f"mooncake-tierd not found at '{tierd}'")
        return failures.report("live")
    help_text = subprocess.run([tierd, "standalone", "--help"], capture_output=True,
                               text=True, timeout=30).stdout
    if "--admin-listen" not in help_text:
        failures.add("setup", f"{tierd} standalone has no --admin-listen flag: the "
                     "daemon does not serve the admin API and /metrics")
        return failures.report("live")

    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="mt-dashboards-")
    procs = Processes()
    dram = 64 << 20
    try:
        ready = os.path.join(work, "tierd.ready")
        tierd_proc = procs.start("mooncake-tierd", [
            tierd, "standalone",
            "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
            "--ready-file", ready,
            "--ssd-dir", os.path.join(work, "ssd"), "--ssd-capacity", "256MiB",
            "--dram", str(dram),
            "--heartbeat-interval", "100ms", "--tick-interval", "100ms",
            "--lease-ttl", "1s", "--offload-mode", "on_evict",
            "--group-remove-policy", "member",
            "--promotion-admission-threshold", "2",
            "--log-level", "warn"], os.path.join(work, "tierd.log"))

        def daemon_ready():
            if tierd_proc.poll() is not None:
                raise RuntimeError(f"mooncake-tierd exited with {tierd_proc.returncode}")
            return read_ready_file(ready)
        kv = wait_for("the daemon's ready file with admin_address", daemon_ready, 30)
        admin, master = kv["admin_address"], kv["master_address"]
        metrics_url = f"http://{admin}/metrics"
        print(f"mooncake-tierd: master {master}, admin {admin}")

        # A real Prometheus on a free port (retried if another process takes
        # the port between our probe and its bind).
        config = os.path.join(work, "prometheus.yml")
        write_prometheus_config(config, args.source_dir, admin)
        check = subprocess.run([promtool, "check", "config", config],
                               capture_output=True, text=True, timeout=60)
        if check.returncode != 0:
            failures.add("setup", f"generated config invalid: {check.stdout}{check.stderr}")
            return failures.report("live")
        prom = None
        for attempt in range(3):
            port = free_port()
            proc = procs.start(f"prometheus#{attempt}", [
                prometheus_bin, f"--config.file={config}",
                f"--storage.tsdb.path={os.path.join(work, f'tsdb{attempt}')}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn"], os.path.join(work, f"prometheus{attempt}.log"))
            candidate = Prometheus(f"http://127.0.0.1:{port}")

            def prom_up():
                if proc.poll() is not None:
                    raise RuntimeError(f"prometheus exited with {proc.returncode}")
                return candidate.query('up{job="mooncake-master"} == 1')
            try:
                wait_for("the first scrape of the daemon", prom_up, 20)
                prom = candidate
                break
            except (TimeoutError, RuntimeError) as e:
                if proc.poll() is None:
                    raise
                print(f"prometheus attempt {attempt} failed: {e}")
        if prom is None:
            failures.add("setup", "prometheus did not start")
            return failures.report("live")
        print(f"prometheus on {prom.base} scraping after {time.monotonic() - started:.1f}s")

        # The workload, while Prometheus scrapes every second.
        result = subprocess.run([args.workload, "--master", master,
                                 "--dram-bytes", str(dram)],
                                capture_output=True, text=True, timeout=60)
        print(f"workload (exit {result.returncode}): {result.stdout.strip()}")
        if result.returncode != 0:
            failures.add("workload", f"exit {result.returncode}: {result.stderr.strip()}")

        # Promotions finish a heartbeat or two after the reads that queued
        # them; wait for the daemon to report them.
        def effects_missing():
            text = http_get(metrics_url)
            return [f"{n}{json.dumps(l) if l else ''}" for n, l in WORKLOAD_EFFECTS
                    if not (sample_value(text, n, l) or 0) > 0]
        try:
            wait_for("the workload's effects on /metrics", lambda: not effects_missing(), 15)
        except TimeoutError:
            for missing in effects_missing():
                failures.add("workload", f"{missing} is still 0 (or absent) on /metrics")
        metrics_text = http_get(metrics_url)
        exposed = exposed_series(metrics_text)

        # Prometheus has stored a sample taken after the workload, and a
        # second one so rates over it exist.
        completed = sample_value(metrics_text, "mooncake_promotion_completed_total") or 0
        wait_for("Prometheus to store the post-workload values",
                 lambda: prom.query(f"min_over_time(mooncake_promotion_completed_total[3s]) >= {completed}"
                                    if completed else "count_over_time(up[1m]) >= 3"), 15)

        dashboards = load_dashboards(args.source_dir)
        n_queries = 0
        used_names = set()
        for file, dashboard in dashboards:
            variables = {}
            for var in dashboard.get("templating", {}).get("list", []):
                if var.get("type") == "query":
                    # Every variable is multi-value with All as the default.
                    variables[var["name"]] = var.get("allValue") or ".*"
                elif var.get("type") == "datasource":
                    variables[var["name"]] = "prometheus"
            for name, query in variable_queries(dashboard):
                lv = label_values_query(query)
                where = f"{file} / variable {name}"
                if lv is None:
                    failures.add(where, f"unsupported query {query}")
                    continue
                used_names.add(lv[0])
                try:
                    values = prom.api(f"/api/v1/label/{lv[1]}/values", **{"match[]": lv[0]})
                except RuntimeError as e:
                    failures.add(where, f"{query}: {e}")
                    continue
                n_queries += 1
                if not values:
                    failures.add(where, f"{query} returned no values")
            for title, ref, expr in dashboard_exprs(dashboard):
                where = f"{file} / panel '{title}' / {ref}"
                try:
                    promql = substitute(expr, variables)
                except KeyError as e:
                    failures.add(where, f"unknown template variable ${e.args[0]} in {expr}")
                    continue
                used_names.update(n for n, _ in metric_selectors(promql))
                n_queries += 1
                try:
                    result = prom.query(promql)
                except RuntimeError as e:
                    failures.add(where, f"query error {e}: {promql}")
                    continue
                if not result:
                    failures.add(where, f"no data: {promql}")

        # Alert rules: what Prometheus loaded (its own rendering of each
        # expression), evaluated without errors, and each measure has data.
        expected_rules = alert_exprs(os.path.join(prometheus_dir(args.source_dir), "alerts.yml"))
        def rules_evaluated():
            rules = [r for g in prom.api("/api/v1/rules")["groups"] for r in g["rules"]]
            if len(rules) < len(expected_rules):
                return None
            if any(r.get("lastEvaluation", "").startswith("0001-") for r in rules):
                return None
            return rules
        try:
            rules = wait_for("every alert rule evaluated once", rules_evaluated, 10)
        except TimeoutError as e:
            failures.add("alerts.yml", str(e))
            rules = []
        loaded = {r["name"] for r in rules}
        for name, _ in expected_rules:
            if name not in loaded:
                failures.add(f"alerts.yml / {name}", "not loaded by Prometheus")
        for rule in rules:
            where = f"alerts.yml / {rule['name']}"
            if rule.get("health") != "ok":
                failures.add(where, f"health {rule.get('health')}: {rule.get('lastError')}")
            expr = rule["query"]
            used_names.update(n for n, _ in metric_selectors(expr))
            parts = split_threshold(expr)
            if parts is None:
                failures.add(where, f"not '<measure> <comparison> <number>': {expr}")
                continue
            measure = parts[0]
            try:
                prom.query(expr)  # normally empty: a healthy store
                n_queries += 1
                if not prom.query(measure):
                    failures.add(where, f"measure has no data: {measure}")
                n_queries += 1
            except RuntimeError as e:
                failures.add(where, f"query error {e}: {expr}")

        # Every metric the dashboards and rules use is exported.
        for name in sorted(used_names - PROMETHEUS_METRICS):
            if name not in exposed:
                failures.add("daemon /metrics", f"'{name}' (used in dashboards/) is not exported")
        print(f"evaluated {n_queries} queries ({len(rules)} alert rules, "
              f"{len(used_names)} metric names) in {time.monotonic() - started:.1f}s")
    except Exception as e:  # setup failures: report with the logs
        failures.add("setup", f"{type(e).__name__}: {e}")
    finally:
        procs.stop_all()
        if failures.items:
            procs.dump_logs()
        if failures.items and os.environ.get("MT_KEEP_TEMP"):
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return failures.report("live")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["promtool", "static", "live"])
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--tierd", help="mooncake-tierd (env MOONCAKE_TIERD wins)")
    parser.add_argument("--workload", help="dashboard_workload")
    args = parser.parse_args()
    if args.command == "live" and not args.workload:
        parser.error("live needs --workload")
    args.source_dir = os.path.abspath(args.source_dir)
    return {"promtool": cmd_promtool, "static": cmd_static, "live": cmd_live}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

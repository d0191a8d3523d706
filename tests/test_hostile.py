"""Hostile code, delivered by the scripted model, against the real Docker sandbox: everything must be contained.

Each test checks that the run ends with a recorded result, that the evidence of containment is real (measured
inside the container or on the host), and that the next run works. The autouse fixture checks that no container
of the test is left behind.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario
from tests.conftest import py
from tests.helpers import containers_under, host_listener

pytestmark = pytest.mark.docker

# The follow-up block used by several tests: every process of the sandbox except PID 1 (the runner), this
# block and its `timeout` parent. Zombies being reaped by PID 1 get a moment to disappear.
LEFTOVERS = """
import os, time
mine = {1, os.getpid(), os.getppid()}
for _ in range(30):
    others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in mine]
    if not others:
        break
    time.sleep(0.1)
print("LEFTOVER", len(others), [open(f'/proc/{p}/cmdline').read()[:60] for p in others if os.path.exists(f'/proc/{p}')])
"""


def run(path: Path):
    return run_scenario(load_scenario(path), RunOptions())


def reports(result) -> list[dict]:
    """The execution reports of the run, in order."""
    return [m for m in load_transcript(result.run_dir)["messages"] if m["role"] == "execution"]


def first_exec(report: dict) -> dict:
    return report["outcome"]["executions"][0]


def evidence(case: str, ex: dict, **more) -> None:
    """One line of measured outcome per case, for the CI log (`pytest -rA` or `-s` shows it)."""
    flags = {k: ex[k] for k in ("exit_code", "timed_out", "oom_killed", "truncated", "duration_s") if k in ex}
    print(f"EVIDENCE {case}: {flags} {more}")


def assert_next_run_works(scenario_file) -> None:
    """The host and the next run are unharmed: a fresh run in a fresh container succeeds."""
    result = run(scenario_file([py("print('next run ok')")], name="next"))
    assert result.status == "success"
    assert "next run ok" in first_exec(reports(result)[0])["output"]


# -- fork bomb ---------------------------------------------------------------------------------

FORK_BOMB = """
import os
told = False
while True:
    try:
        if os.fork() == 0 and {escape}:
            os.setsid()  # leave the block's process group, so that `timeout` alone cannot kill it
    except OSError as exc:
        if not told:
            print("fork refused:", exc.strerror, flush=True)
            told = True
"""

PIDS = """
for name in ('/sys/fs/cgroup/pids/pids.max', '/sys/fs/cgroup/pids.max'):
    if os.path.exists(name):
        print("pids.max", open(name).read().strip())
"""


@pytest.mark.parametrize("escape", [False, True], ids=["same-group", "setsid"])
def test_fork_bomb_is_held_by_the_pids_limit(sandbox_image, workspaces, scenario_file, escape):
    host_spawns = {"ok": 0, "failed": 0}
    stop = threading.Event()

    def host_side() -> None:  # the machine stays usable while the bomb runs
        while not stop.wait(0.2):
            ok = subprocess.run(["true"]).returncode == 0
            host_spawns["ok" if ok else "failed"] += 1

    watcher = threading.Thread(target=host_side, daemon=True)
    watcher.start()
    try:
        result = run(scenario_file([py(FORK_BOMB.format(escape=escape)), py(LEFTOVERS + PIDS)],
                                   sandbox={"timeout": 3, "pids": 64}))
    finally:
        stop.set()
        watcher.join()
    assert result.status == "success"
    bomb, after = reports(result)
    assert bomb["outcome"]["executions"][0]["timed_out"] is True
    assert "fork refused: Resource temporarily unavailable" in first_exec(bomb)["output"]
    assert "time limit" in bomb["content"]
    out = first_exec(after)["output"]
    assert "pids.max 64" in out
    assert "LEFTOVER 0" in out, out
    assert host_spawns["ok"] > 0 and host_spawns["failed"] == 0
    evidence("fork bomb", first_exec(bomb), after=out.split("LEFTOVER")[1].split("[")[0].strip(),
             host_spawns=host_spawns)
    assert_next_run_works(scenario_file)


# -- memory ------------------------------------------------------------------------------------

MEMORY_HOG = """
chunks = []
for i in range(64):
    chunks.append(b"\\x01" * (64 * 1024 * 1024))  # 64 MiB, written, 64 times: 4 GiB
    print("allocated", (i + 1) * 64, "MiB", flush=True)
print("all 4 GiB allocated")
"""

MEMORY_COUNTERS = """
import os
base = '/sys/fs/cgroup/memory/'
print("oom_control", open(base + 'memory.oom_control').read().split())
print("limit", open(base + 'memory.limit_in_bytes').read().strip())
print("max_usage", open(base + 'memory.max_usage_in_bytes').read().strip())
"""


def test_memory_hog_is_oom_killed_and_reported(sandbox_image, workspaces, scenario_file):
    result = run(scenario_file([py(MEMORY_HOG), py(MEMORY_COUNTERS)], sandbox={"memory": "256m"}))
    assert result.status == "success"
    hog, after = reports(result)
    ex = first_exec(hog)
    assert ex["oom_killed"] is True and ex["timed_out"] is False and ex["exit_code"] == 137
    assert "all 4 GiB allocated" not in ex["output"]
    assert "the memory limit (256m) was hit" in ex["output"]
    assert "the memory limit (256m) was hit" in hog["content"] and "ran out of memory" in hog["content"]
    out = first_exec(after)["output"]
    oom_kills = int(re.search(r"'oom_kill', '(\d+)'", out).group(1))
    assert oom_kills >= 1  # the kernel itself counted the kill inside this container's cgroup
    limit = int(re.search(r"limit (\d+)", out).group(1))
    assert limit == 256 * 1024**2
    assert int(re.search(r"max_usage (\d+)", out).group(1)) <= limit
    evidence("memory hog", ex, oom_kills=oom_kills, max_usage=re.search(r"max_usage (\d+)", out).group(1))
    assert_next_run_works(scenario_file)


def test_plain_sigkill_is_not_reported_as_oom(sandbox_image, workspaces, scenario_file):
    code = "import os, signal\nprint('bye', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)"
    result = run(scenario_file([py(code), py("print(1)")]))
    ex = first_exec(reports(result)[0])
    assert ex["exit_code"] == 137 and ex["oom_killed"] is False and ex["timed_out"] is False
    assert "memory limit" not in ex["output"]
    evidence("self SIGKILL", ex)


# -- time limit --------------------------------------------------------------------------------

INFINITE_LOOP = "while True:\n    pass"

TERM_TRAPPER = """
import os, signal, time
signal.signal(signal.SIGTERM, lambda *a: print("parent ignores SIGTERM", flush=True))
for escape in (False, False, True):
    if os.fork() == 0:
        if escape:
            os.setsid()  # out of the process group `timeout` signals
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if os.fork() == 0:  # a grandchild too
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            pass
print("process tree started", flush=True)
while True:
    time.sleep(0.05)
"""


@pytest.mark.parametrize("code", [INFINITE_LOOP, TERM_TRAPPER], ids=["infinite-loop", "traps-sigterm"])
def test_time_limit_kills_the_whole_process_tree(sandbox_image, workspaces, scenario_file, code):
    result = run(scenario_file([py(code), py(LEFTOVERS)], sandbox={"timeout": 3}))
    assert result.status == "success"
    looped, after = reports(result)
    ex = first_exec(looped)
    assert ex["timed_out"] is True and ex["exit_code"] in (124, 137) and ex["oom_killed"] is False
    assert "[codeduet: timed out after 3 s; every process of the block was killed]" in ex["output"]
    assert "time limit" in looped["content"]
    assert "LEFTOVER 0" in first_exec(after)["output"], first_exec(after)["output"]
    evidence("time limit", ex, leftover=0)
    assert_next_run_works(scenario_file)


# -- CPU ---------------------------------------------------------------------------------------

CPU_BURNER = """
import os, time
def usage():  # CPU seconds used by this container's cgroup (v1, else v2)
    if os.path.exists('/sys/fs/cgroup/cpuacct/cpuacct.usage'):
        return int(open('/sys/fs/cgroup/cpuacct/cpuacct.usage').read()) / 1e9
    stat = dict(line.split() for line in open('/sys/fs/cgroup/cpu.stat'))
    return int(stat['usage_usec']) / 1e6
def quota():
    if os.path.exists('/sys/fs/cgroup/cpu/cpu.cfs_quota_us'):
        quota = int(open('/sys/fs/cgroup/cpu/cpu.cfs_quota_us').read())
        return quota / int(open('/sys/fs/cgroup/cpu/cpu.cfs_period_us').read())
    q, p = open('/sys/fs/cgroup/cpu.max').read().split()
    return int(q) / int(p)
cores = os.cpu_count()
for _ in range(cores * 2):  # two busy processes per core the machine has
    if os.fork() == 0:
        while True:
            pass
time.sleep(0.5)
u0, t0 = usage(), time.monotonic()
time.sleep(3)
u1, t1 = usage(), time.monotonic()
print(f"CORES {cores} QUOTA {quota():.2f} USED {(u1 - u0) / (t1 - t0):.3f}")
"""


def test_cpu_burner_is_held_to_the_configured_cpus(sandbox_image, workspaces, scenario_file):
    result = run(scenario_file([py(CPU_BURNER), py(LEFTOVERS), "TERMINATE"], termination={"contains": "TERMINATE"},
                               sandbox={"cpus": 0.5, "timeout": 20}))
    assert result.status == "success"
    burn, after = reports(result)
    m = re.search(r"CORES (\d+) QUOTA ([\d.]+) USED ([\d.]+)", first_exec(burn)["output"])
    assert m, first_exec(burn)["output"]
    cores, quota, used = int(m.group(1)), float(m.group(2)), float(m.group(3))
    assert quota == 0.5
    assert used <= 0.5 * 1.25  # ≲ the configured cpus, though 2×cores busy processes asked for all of them
    assert "LEFTOVER 0" in first_exec(after)["output"]  # the busy children did not survive the block
    evidence("cpu burner", first_exec(burn), cores=cores, quota=quota, cpu_used=used)


# -- network -----------------------------------------------------------------------------------

NETWORK = """
import socket
for host, port in {targets!r}:
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, port))
        print("CONNECTED", host, port)
    except OSError as exc:
        print("BLOCKED", host, port, exc)
try:
    print("RESOLVED", socket.getaddrinfo("pypi.org", 443)[0][4])
except OSError as exc:
    print("BLOCKED dns", exc)
print("INTERFACES", sorted(line.split(':')[0].strip() for line in open('/proc/net/dev').readlines()[2:]))
"""


def _bridge_gateway() -> str:
    import docker

    try:
        return docker.from_env().networks.get("bridge").attrs["IPAM"]["Config"][0]["Gateway"]
    except Exception:
        return "172.17.0.1"


def test_network_egress_fails(sandbox_image, workspaces, scenario_file):
    with host_listener() as (port, accepted):
        targets = [("127.0.0.1", port), (_bridge_gateway(), port), ("1.1.1.1", 80), ("8.8.8.8", 53)]
        result = run(scenario_file([py(NETWORK.format(targets=targets))]))
    assert result.status == "success"
    out = first_exec(reports(result)[0])["output"]
    assert "CONNECTED" not in out and "RESOLVED" not in out
    assert out.count("BLOCKED") == len(targets) + 1
    assert "INTERFACES ['lo']" in out
    assert accepted == []  # nothing reached the host, on any of its interfaces
    sandbox = next(e for e in _events(result.run_dir) if e["type"] == "sandbox")
    assert sandbox["network"] == "none"
    evidence("network", first_exec(reports(result)[0]), blocked=re.findall(r"BLOCKED (\S+ \S+) (.*)", out),
             host_accepted=len(accepted))


def _events(run_dir: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


# -- filesystem --------------------------------------------------------------------------------

WRITES = """
import errno
for path, mode in [("/evil.txt", "w"), ("/etc/evil.txt", "w"), ("/etc/passwd", "a"), ("/usr/evil.txt", "w"),
                   ("/usr/bin/python3", "r+b"), ("/usr/lib/evil.txt", "w"), ("/home/evil.txt", "w")]:
    try:
        with open(path, mode) as fh:
            fh.write(b"x" if "b" in mode else "x")
        print("WROTE", path)
    except OSError as exc:
        print("REFUSED", path, errno.errorcode[exc.errno])
open("/workspace/allowed.txt", "w").write("ok")
open("/tmp/scratch.txt", "w").write("ok")
print("workspace and /tmp writable")
"""

NO_TRACE = """
import os
for path in ("/evil.txt", "/etc/evil.txt", "/usr/evil.txt", "/usr/lib/evil.txt", "/home/evil.txt"):
    print("EXISTS" if os.path.exists(path) else "ABSENT", path)
print("passwd tail", repr(open("/etc/passwd").read()[-20:]))
"""


def test_writes_outside_workspace_are_refused(sandbox_image, workspaces, scenario_file):
    result = run(scenario_file([py(WRITES)]))
    assert result.status == "success"
    out = first_exec(reports(result)[0])["output"]
    assert "WROTE" not in out
    refused = re.findall(r"REFUSED (\S+) (\w+)", out)
    assert [p for p, _ in refused] == ["/evil.txt", "/etc/evil.txt", "/etc/passwd", "/usr/evil.txt",
                                       "/usr/bin/python3", "/usr/lib/evil.txt", "/home/evil.txt"]
    assert {e for _, e in refused} <= {"EROFS", "EACCES"}
    assert "workspace and /tmp writable" in out
    assert (result.run_dir / "workspace" / "allowed.txt").read_text() == "ok"
    # the next run, in a fresh container from the same image, sees no trace
    nxt = run(scenario_file([py(NO_TRACE)], name="next"))
    out = first_exec(reports(nxt)[0])["output"]
    assert "EXISTS" not in out and out.count("ABSENT") == 5 and "x'" not in out
    evidence("writes", {}, refused=refused)


# -- host environment --------------------------------------------------------------------------

ENVIRONMENT = """
import os
print("ENV", sorted(os.environ))
print("VALUES", list(os.environ.values()))
for pid in [p for p in os.listdir('/proc') if p.isdigit()]:
    try:
        print("PROC", pid, open(f'/proc/{pid}/environ').read())
    except OSError as exc:
        print("PROC", pid, exc)
"""


def test_host_environment_is_not_visible(sandbox_image, workspaces, scenario_file, monkeypatch):
    values = {name: f"sk-hostile-{secrets.token_hex(12)}" for name in
              ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "CODEDUET_TEST_SECRET")}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    result = run(scenario_file([py(ENVIRONMENT)]))
    assert result.status == "success"
    out = first_exec(reports(result)[0])["output"]
    assert "ENV [" in out and "PROC 1" in out
    for name, value in values.items():
        assert name not in out and value not in out
    run_files = "".join(p.read_text(errors="replace") for p in result.run_dir.rglob("*") if p.is_file())
    assert not any(value in run_files for value in values.values())
    evidence("host env", first_exec(reports(result)[0]), names=re.search(r"ENV (\[.*\])", out).group(1))


# -- privileges --------------------------------------------------------------------------------

PRIVILEGES = """
import ctypes, os, socket, subprocess
libc = ctypes.CDLL(None, use_errno=True)
def check(rc):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
def run(argv):
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip().splitlines()[0]}")
def attempt(name, fn):
    try:
        fn()
        print(f"ALLOWED {name}")
    except Exception as exc:
        print(f"REFUSED {name}: {exc}")
open("/workspace/mine.txt", "w").write("x")
attempt("mount syscall", lambda: check(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)))
attempt("setuid-root mount binary", lambda: run(["mount", "-t", "tmpfs", "none", "/tmp"]))
attempt("setuid-root su", lambda: run(["su", "-c", "id", "root"]))
attempt("chown to root", lambda: os.chown("/workspace/mine.txt", 0, 0))
attempt("setuid(0)", lambda: os.setuid(0))
attempt("raw socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("packet socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
attempt("user namespace", lambda: run(["unshare", "-Ur", "id"]))
attempt("chroot", lambda: os.chroot("/tmp"))
attempt("mknod", lambda: os.mknod("/tmp/null", 0o600 | 0o020000, os.makedev(1, 3)))
print("SUID_MOUNT", oct(os.stat("/usr/bin/mount").st_mode))
print("MINE_UID", os.stat("/workspace/mine.txt").st_uid)
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
for key in ("Uid", "CapEff", "CapBnd", "NoNewPrivs"):
    print(key, status[key].split())
"""


def test_privileged_operations_are_refused(sandbox_image, workspaces, scenario_file):
    result = run(scenario_file([py(PRIVILEGES)]))
    assert result.status == "success"
    out = first_exec(reports(result)[0])["output"]
    assert "ALLOWED" not in out
    assert out.count("REFUSED") == 10
    assert "must be superuser" in out  # the setuid-root mount binary ran without gaining root
    assert "Operation not permitted" in out
    assert "SUID_MOUNT 0o104755" in out
    assert "Uid ['1000', '1000', '1000', '1000']" in out
    assert "CapEff ['0000000000000000']" in out and "CapBnd ['0000000000000000']" in out
    assert "NoNewPrivs ['1']" in out
    assert "MINE_UID 1000" in out  # still the sandbox user's
    mine = result.run_dir / "workspace" / "mine.txt"  # the copy-back writes it as the user running codeduet
    assert mine.read_text() == "x" and mine.stat().st_uid == os.getuid()
    evidence("privileges", first_exec(reports(result)[0]), refused=re.findall(r"REFUSED (.*)", out))


# -- output flood ------------------------------------------------------------------------------

FLOOD = """
import sys
print("BEGIN-MARKER")
line = "y" * 1023 + "\\n"
for _ in range(50 * 1024):  # 50 MiB
    sys.stdout.write(line)
print("END-MARKER")
"""


def test_fifty_megabytes_of_output_are_cut_at_output_limit(sandbox_image, workspaces, scenario_file):
    path = scenario_file([py(FLOOD), py("print('still responsive')"), "Done. TERMINATE"],
                         termination={"contains": "TERMINATE"}, sandbox={"output_limit": 20000})
    result = run(path)
    assert result.status == "success"
    flood, after = reports(result)
    ex = first_exec(flood)
    assert ex["truncated"] is True and ex["exit_code"] == 0
    assert "output truncated" in ex["output"] and "(output_limit=20,000)" in ex["output"]
    cut = int(re.search(r"([\d,]+) characters cut", ex["output"]).group(1).replace(",", ""))
    assert cut > 50 * 1024 * 1024 - 20000 - 100
    assert ex["output"].startswith("BEGIN-MARKER") and "END-MARKER" in ex["output"][-200:]
    assert len(ex["output"]) < 20000 + 500
    assert "still responsive" in first_exec(after)["output"]
    assert (result.run_dir / "transcript.json").stat().st_size < 1_000_000
    evidence("50 MB output", ex, kept=len(ex["output"]), cut=cut)


# -- daemons -----------------------------------------------------------------------------------

DAEMON = """
import os, sys, time
marker = {marker!r}
beat = '''
import os, sys, time
while True:
    with open("/workspace/heartbeat.txt", "a") as fh:
        fh.write("beat\\\\n")
    time.sleep(0.1)
'''
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        fd = os.open(os.devnull, os.O_RDWR)
        for n in (0, 1, 2):
            os.dup2(fd, n)
        os.execv(sys.executable, [sys.executable, "-c", beat, marker])
    os._exit(0)
os.wait()
while not os.path.exists("/workspace/heartbeat.txt"):
    time.sleep(0.05)
print("daemon started")
"""


BEATS = """
import time
for _ in range(100):
    beats = open("heartbeat.txt").read().count("beat")
    if beats >= 5:
        break
    time.sleep(0.1)
print("BEATS", beats)
"""


def _host_processes_with(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


def test_daemon_does_not_outlive_the_run(sandbox_image, workspaces, scenario_file):
    marker = f"codeduet-daemon-{secrets.token_hex(6)}"
    result = run(scenario_file([py(DAEMON.format(marker=marker)), py(BEATS), "TERMINATE"],
                               termination={"contains": "TERMINATE"}))
    assert result.status == "success"
    started, beating = reports(result)
    assert "daemon started" in first_exec(started)["output"]
    assert "BEATS" in first_exec(beating)["output"]  # it outlived its own block, within the run
    heartbeat = result.run_dir / "workspace" / "heartbeat.txt"
    assert heartbeat.read_text().count("beat") >= 1
    assert _host_processes_with(marker) == []
    size = heartbeat.stat().st_size
    time.sleep(1.0)  # the daemon beat every 0.1 s while it lived
    assert heartbeat.stat().st_size == size
    assert containers_under(workspaces) == []
    evidence("daemon", first_exec(started), beats_during_run=heartbeat.read_text().count("beat"), after_run="no growth")


# -- symlinks ----------------------------------------------------------------------------------

SYMLINKS = """
import os
os.symlink({secret!r}, "/workspace/secret-link")
os.symlink("/etc/hostname", "/workspace/hostname-link")
os.symlink({planted!r}, "/workspace/block02.py")        # the host writes the next block here
os.symlink({planted_dir!r}, "/workspace/.codeduet_checks")  # and the pytest check here
try:
    print("READ", open("/workspace/secret-link").read())
except OSError as exc:
    print("NOT REACHED", exc)
print("HOSTNAME", open("/workspace/hostname-link").read().strip())
"""

CHECK_FILE = "def test_ok():\n    assert open('/workspace/ok.txt').read() == 'ok'\n"


def test_symlink_to_host_path_is_not_followed_outside_the_mount(sandbox_image, workspaces, scenario_file, tmp_path):
    token = secrets.token_hex(16)
    secret = tmp_path / "host-secret.txt"
    secret.write_text(f"host data {token}\n")
    planted = tmp_path / "planted-block.py"
    planted_dir = tmp_path / "planted-dir"
    planted_dir.mkdir()
    (tmp_path / "test_ok.py").write_text(CHECK_FILE)
    code = SYMLINKS.format(secret=str(secret), planted=str(planted), planted_dir=str(planted_dir))
    result = run(scenario_file([py(code), py("open('ok.txt', 'w').write('ok'); print('second block ran')")],
                               checks=[{"pytest": "test_ok.py"}]))
    assert result.status == "success"
    first, second = reports(result)
    out = first_exec(first)["output"]
    assert token not in out and "NOT REACHED" in out and "No such file" in out
    assert f"HOSTNAME {socket.gethostname()}" not in out  # the container's own /etc/hostname
    assert "second block ran" in first_exec(second)["output"]
    # the host never wrote through the planted links
    assert not planted.exists() and list(planted_dir.iterdir()) == []
    assert secret.read_text() == f"host data {token}\n"
    ws = result.run_dir / "workspace"
    assert not (ws / "block02.py").is_symlink() and "second block ran" in (ws / "block02.py").read_text()
    assert not (ws / ".codeduet_checks").is_symlink()
    all_run_text = "".join(p.read_text(errors="replace") for p in result.run_dir.rglob("*")
                           if p.is_file() and not p.is_symlink())
    assert token not in all_run_text
    evidence("symlink", first_exec(first), read=re.search(r"NOT REACHED (.*)", out).group(1),
             planted_block_written_on_host=planted.exists())


def test_planted_directory_at_the_next_block_name_does_not_break_the_run(sandbox_image, workspaces, scenario_file):
    plant = "import os\nos.makedirs('/workspace/block02.py/inner')\nos.symlink('/etc', '/workspace/block03.py')"
    result = run(scenario_file([py(plant), py("print('block two ran')"), py("print('block three ran')"),
                                "TERMINATE"], termination={"contains": "TERMINATE"}))
    assert result.status == "success"
    outputs = [first_exec(r)["output"] for r in reports(result)]
    assert "block two ran" in outputs[1] and "block three ran" in outputs[2]
    ws = result.run_dir / "workspace"
    assert [p.name for p in ws.glob("block02.py.moved-*")] != []  # moved aside, not written into
    assert not (ws / "block03.py").is_symlink()


# -- the workspace's disk limit and its copy-back ----------------------------------------------------

FILL_DISK = """
written = 0
with open('fill.bin', 'wb') as f:
    for _ in range(1024):  # 1 GiB, in 1 MiB writes
        f.write(b'\\xff' * (1 << 20))
        f.flush()
        written += 1
        if written % 16 == 0:
            print('wrote', written, 'MiB', flush=True)
print('WROTE ALL 1 GiB')
"""


def test_a_gigabyte_write_hits_the_disk_limit_and_the_run_goes_on(sandbox_image, workspaces, scenario_file):
    free_before = shutil.disk_usage(workspaces).free
    result = run(scenario_file([py(FILL_DISK), py("import sys\nprint('still running')\nsys.exit(3)"),
                                py("import os\nos.remove('fill.bin')\nopen('after.txt', 'w').write('ok')\n"
                                   "print('freed')")],
                               sandbox={"disk": "64m"}))
    free_after = shutil.disk_usage(workspaces).free
    fill, still, freed = reports(result)
    ex = first_exec(fill)
    assert ex["disk_full"] is True and ex["exit_code"] == 1 and "WROTE ALL" not in ex["output"]
    assert "No space left on device" in ex["output"]
    assert "[codeduet: the workspace disk limit (64m) was hit" in ex["output"]
    assert "filled the workspace disk" in fill["content"]  # the feedback the model gets says so
    # the disk is still full: the next block cannot be put in the workspace, and runs from its text instead
    out = first_exec(still)["output"]
    assert "still running" in out and "the sandbox's workspace is full (disk limit 64m)" in out
    assert "freed" in first_exec(freed)["output"] and result.status == "success"
    ws = result.run_dir / "workspace"
    assert (ws / "after.txt").read_text() == "ok" and not (ws / "fill.bin").exists()  # removals come back too
    # the 1 GiB never reached the host's disk (other work on this machine moves it a little: a wide tolerance)
    assert free_before - free_after < 512 * 1024**2
    written = int(re.findall(r"wrote (\d+) MiB", ex["output"])[-1])
    assert 32 <= written <= 64
    evidence("disk limit", ex, mib_written_before_enospc=written,
             host_free_change_mib=round((free_before - free_after) / 1024**2))


BOMB = """
import os
try:
    os.makedirs({outside!r}, exist_ok=True)  # the host's path, made inside the container's own /tmp
    os.symlink({outside!r}, 'outside-link')
    open('outside-link/planted.txt', 'w').write('through a link')
except OSError as exc:
    print('outside path not writable here:', exc)
os.symlink('/etc/passwd', 'passwd-link')
os.symlink('..', 'up')
os.link(__file__, 'hard-copy.py')
os.mkfifo('fifo')
with open('sparse.bin', 'wb') as f:
    f.truncate(1 << 40)  # 1 TiB apparent size, no real blocks: a tar bomb for a naive copy-back
os.makedirs('many')
for i in range(6000):  # more entries than the runner lists: the whole workspace comes back, bounded
    open(f'many/{{i}}.txt', 'w').write(str(i))
raise SystemExit('planted')  # a failure, so the run goes on to the next block
"""


def test_links_specials_and_a_tar_bomb_never_leave_the_run_folder(sandbox_image, workspaces, scenario_file,
                                                                 tmp_path):
    outside = tmp_path / "outside"
    free_before = shutil.disk_usage(workspaces).free
    result = run(scenario_file([py(BOMB.format(outside=str(outside))), py("print('second block ran')")],
                               sandbox={"disk": "64m"}))
    bomb, second = reports(result)
    out = first_exec(bomb)["output"]
    assert "planted" in out and result.status == "success"
    assert "second block ran" in first_exec(second)["output"]
    # the 1 TiB sparse file is over sandbox.copy_back_max: listed, never read through (the 64m bound stops that)
    assert "larger than 16m (sandbox.copy_back_max) stay in the sandbox" in out and "sparse.bin (1.0 TiB)" in out
    assert "not copied back (links and special files stay in the sandbox)" in out
    assert not outside.exists()  # nothing was written through the link on the host
    ws = result.run_dir / "workspace"
    entries = list(ws.rglob("*"))
    assert not any(p.is_symlink() for p in entries)
    assert not any(p.is_fifo() or p.is_char_device() or p.is_block_device() for p in entries)
    assert not (ws / "sparse.bin").exists() and not (ws / "hard-copy.py").exists()
    assert sum(p.stat().st_size for p in entries if p.is_file()) <= 64 * 1024**2
    assert len(list((ws / "many").iterdir())) <= 6000
    # changes.diff lists what the run left in its workspace: only what was copied back, bounded like it
    assert {p.name for p in result.run_dir.iterdir()} <= {"workspace", "events.jsonl", "transcript.json",
                                                          "changes.diff"}
    diff = result.run_dir / "changes.diff"
    if diff.exists():
        assert diff.stat().st_size <= 2 * 64 * 1024**2
        text = diff.read_text()
        assert "sparse.bin" not in text and "hard-copy.py" not in text
    assert free_before - shutil.disk_usage(workspaces).free < 512 * 1024**2
    evidence("tar bomb", first_exec(bomb), files_copied=len(list((ws / "many").iterdir())))


# -- `# filename:` blocks that aim outside the workspace ------------------------------------------------------

def file_block(path: str, body: str = "print('written')") -> str:
    """A reply whose one block names a file (AG2's convention)."""
    return f"```python\n# filename: {path}\n{body}\n```"


def test_filename_blocks_never_write_outside_the_workspace(sandbox_image, workspaces, scenario_file, tmp_path):
    host_target = tmp_path / "host-target.py"
    run_parent = workspaces / "t"
    checks_src = tmp_path / "test_honest.py"
    checks_src.write_text("def test_honest():\n    assert open('honest.txt').read() == 'yes'\n")
    plant = py("import os\nos.symlink('/etc', 'etc-link')\nos.symlink('/tmp', 'tmp-link')\nos.makedirs('d')\n"
               f"os.symlink({str(tmp_path)!r}, 'd/host-link')\nprint('planted')")
    replies = [
        plant,
        file_block(str(host_target)),                       # absolute
        file_block("../../escaped.py"),                     # ..
        file_block("etc-link/codeduet-evil.conf", "x = 1"),  # a link the sandbox made, out of /workspace
        file_block("tmp-link/evil.py"),
        file_block("d/host-link/host-target.py"),           # a link to a host path
        file_block(".codeduet_checks/test_honest.py", "def test_honest():\n    assert True"),  # the checks
        file_block("big.txt", "x" * (2 * 1024 * 1024)),     # over the workspace's size (disk: 1m)
        file_block(""),                                     # empty
        py("open('honest.txt', 'w').write('no'); print('done')"),
    ]
    result = run(scenario_file(replies, checks=[{"pytest": "test_honest.py"}], sandbox={"disk": "1m"},
                               user_proxy={"max_consecutive_auto_reply": 20}))
    execs = [first_exec(r) for r in reports(result)]
    refused = execs[1:9]
    assert all(e["exit_code"] == 1 and e["refused"] and e["output"].startswith("[codeduet: not saved:")
               and e["output"].count("\n") == 0 for e in refused), [e["output"] for e in refused]
    for e, words in zip(refused, ["absolute path", "leaves the workspace", "symlink etc-link", "symlink tmp-link",
                                  "symlink d", "checks' folder", "size limit (1m)", "names no file"]):
        assert words in e["output"], e["output"]
    # nothing was written: not on the host, not in the run folder, not through the sandbox's links
    assert not host_target.exists() and not (run_parent / "escaped.py").exists()
    assert not any(p.name in ("escaped.py", "host-target.py", "big.txt", "evil.py") for p in workspaces.rglob("*"))
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("host-target")] == []
    ws = result.run_dir / "workspace"
    assert not (ws / "big.txt").exists() and not any(p.is_symlink() for p in ws.rglob("*"))
    # the checks stay honest: the last block wrote 'no', and the real check failed on it
    last = reports(result)[-1]["outcome"]
    assert last["checks"] and not last["checks"][0]["passed"] and result.status != "success"
    evidence("filename escapes", execs[1], refused=len(refused), host_written=host_target.exists())

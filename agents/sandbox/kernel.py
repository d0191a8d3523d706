"""`sandbox.session: kernel`: the Python blocks of an attempt run in one long-lived interpreter inside the hardened
container, so variables, imports and loaded data persist between blocks, as in a notebook.

A small driver of ours, not a Jupyter kernel: it needs nothing in the image but python3 >= 3.9 (socket.send_fds),
adds no ZeroMQ, no extra listening process and no package to the sandbox, and every block still goes through the warm
runner (agents/sandbox/runner.py) as a process of its own, so the timeout, the output limit, the copy-back and the
workspace's change list are the same as in `process` mode. The pieces, all inside the container:

- the **client** (`python3 -c CLIENT STATE FILE`) is what a block runs as. It starts the kernel when there is none,
  hands the kernel its own stdout (the block's output pipe) over a Unix socket, and waits for the block's status.
  When coreutils `timeout` sends it SIGTERM at the block's limit, it interrupts the kernel (SIGINT: the code gets a
  KeyboardInterrupt) and exits 124; a kernel that does not stop within GRACE_S is killed. It says in one line when
  the kernel died during the block, and when a block starts in a fresh kernel after one died.
- the **kernel** (`STATE/kernel.py`): a supervisor process that only waits for its child and writes down how the
  child ended (`STATE/died`), and the child, the interpreter (it ignores SIGINT between blocks). The interpreter
  runs each file, from the block's working directory, in one namespace
  (`__name__ == "__main__"`), prints the value of the block's last expression as the Python prompt does, writes a
  pandas DataFrame or Series value as a table for the page (`.codeduet/values/<block>.json`), saves the figures the
  block left open (the image's matplotlib backend, codeduet_figures), and re-imports a workspace module whose file
  changed since it was imported.

The kernel runs as the sandbox user under the container's limits, like every block; it is no more trusted than
the code it runs. A fresh attempt, a candidate and `replay --execute` each get a fresh container, so a fresh kernel.
"""

from __future__ import annotations

from agents.loop.protocols import ExecResult
from agents.sandbox.error_locals import HOOK

STATE_DIR = "/tmp/.codeduet-kernel"
"""Where the kernel's socket, its pids and the note of how it died live (the container's private /tmp)."""
KERNEL_DIR = ".codeduet"
KERNEL_PIDS = f"{STATE_DIR}/pids"
"""The kernel's two pids (supervisor, interpreter): what a block's stragglers are killed around."""
VALUES_DIR = f"{KERNEL_DIR}/values"
"""Where the kernel writes the table of a block whose last expression is a DataFrame or a Series (in /workspace,
so the host's copy-back brings it; hidden from the model, agents/feedback/workspace_view.py)."""
GRACE_S = 0.7
"""How long the client waits for an interrupted block to stop (coreutils `timeout -k 1` kills the client at 1 s)."""
TABLE_ROWS, TABLE_COLUMNS, CELL_CHARS = 50, 20, 120
"""The most of a table value that is kept for the page."""

KERNEL = r'''
import ast, builtins, json, os, signal, socket, sys, traceback
STATE = sys.argv[1]
child = os.fork()
if child:  # the supervisor: how the interpreter ended is written down for the next client
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "signal %d" % -code
        why = "killed by %s" % name + (" (the memory limit, or a kill)" if -code == 9 else
                                       " (a crash in native code)" if -code == 11 else "")
    else:
        why = "it exited with status %d" % code
    with open(STATE + "/died.new", "w") as fh:
        json.dump({"code": code, "why": why}, fh)
    os.rename(STATE + "/died.new", STATE + "/died")
    os._exit(0)
import faulthandler
faulthandler.enable()
devnull = os.open(os.devnull, os.O_RDWR)
sys.argv = ["", ""]
sys.path[0] = os.getcwd()
ns = {"__name__": "__main__", "__builtins__": builtins, "__doc__": None, "__package__": None}
HOOK
sys.argv = [""]
loaded = {}
def refresh_modules():
    """A workspace module whose file changed since it was imported is imported again by the next import."""
    root = os.getcwd() + "/"
    for name, mod in list(sys.modules.items()):
        path = getattr(mod, "__file__", None) or ""
        if not path.startswith(root):
            continue
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            mtime = None
        if loaded.setdefault(name, mtime) != mtime:
            del sys.modules[name]
            loaded.pop(name, None)
def table(value, stem):
    """A DataFrame or Series value as a small JSON table for the page."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(value, (pd.DataFrame, pd.Series)):
        return
    frame = value.to_frame() if isinstance(value, pd.Series) else value
    rows, cols = frame.shape
    part = frame.iloc[:TABLE_ROWS, :TABLE_COLUMNS]
    cut = lambda v: (str(v) if len(str(v)) <= CELL_CHARS else str(v)[:CELL_CHARS] + "...")
    data = {"kind": "dataframe" if isinstance(value, pd.DataFrame) else "series", "shape": [rows, cols],
            "columns": [cut(c) for c in part.columns], "index": [cut(i) for i in part.index],
            "rows": [[cut(v) for v in row] for row in part.itertuples(index=False, name=None)]}
    os.makedirs(VALUES_DIR, exist_ok=True)
    with open("%s/%s.json" % (VALUES_DIR, stem), "w") as fh:
        json.dump(data, fh)
def show(value, stem):
    """The value of the block's last expression, as the prompt shows it (a plot's artists are the figure)."""
    if value is None:
        return
    ns["_"] = value
    if type(value).__module__.startswith("matplotlib") or (
            isinstance(value, list) and value and type(value[0]).__module__.startswith("matplotlib")):
        return
    try:
        table(value, stem)
    except Exception:
        pass
    print(repr(value))
def run(path, cwd):
    """Run one file in the namespace, from the block's working directory (a block's os.chdir lasts that block);
    its exit status."""
    try:
        os.chdir(cwd)
    except OSError:
        pass
    stem = os.path.splitext(os.path.basename(path))[0]
    try:
        os.unlink("%s/%s.json" % (VALUES_DIR, stem))
    except OSError:
        pass
    figures = sys.modules.get("codeduet_figures")
    if figures is not None:
        figures.prefix = stem
    full = os.path.abspath(path)
    sys.argv[0] = path
    ns["__file__"] = full
    refresh_modules()
    status = 0
    try:
        with open(full, "rb") as fh:
            tree = ast.parse(fh.read(), full)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, full, "exec"), ns)
        if last is not None:
            show(eval(compile(last, full, "eval"), ns), stem)
    except SystemExit as exc:
        code = exc.code
        status = 0 if code is None else code if isinstance(code, int) else 1
        if not isinstance(code, (int, type(None))):
            print(code, file=sys.stderr)
    except BaseException as exc:
        status = 130 if isinstance(exc, KeyboardInterrupt) else 1
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != full:
            tb = tb.tb_next
        if ERROR_LOCALS:
            _codeduet_hook(type(exc), exc, tb or exc.__traceback__, _path=full)
        else:
            traceback.print_exception(type(exc), exc, tb or exc.__traceback__)
    figures = sys.modules.get("codeduet_figures")
    if figures is not None:
        try:
            figures.prefix = stem
            figures.save_open()
        except Exception as exc:
            print("[codeduet: the block's figures could not be saved: %s]" % exc, file=sys.stderr)
    for name in list(sys.modules):
        mod = sys.modules[name]
        if (getattr(mod, "__file__", None) or "").startswith(os.getcwd() + "/"):
            try:
                loaded.setdefault(name, os.stat(mod.__file__).st_mtime_ns)
            except OSError:
                pass
    return status
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    os.unlink(STATE + "/sock")
except OSError:
    pass
server.bind(STATE + "/sock")
server.listen(4)
with open(STATE + "/pids.new", "w") as fh:
    fh.write("%d %d\n" % (os.getppid(), os.getpid()))
os.rename(STATE + "/pids.new", STATE + "/pids")
os.dup2(devnull, 0); os.dup2(devnull, 1); os.dup2(devnull, 2)
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    conn, _ = server.accept()
    status, answered = 1, False
    try:
        try:
            message, fds, _, _ = socket.recv_fds(conn, 65536, 1)
            request = json.loads(message)
            if fds:
                os.dup2(fds[0], 1); os.dup2(fds[0], 2); os.close(fds[0])
            signal.signal(signal.SIGINT, signal.default_int_handler)  # an interrupt is the block's
            status = run(request["file"], request.get("cwd") or os.getcwd())
        except KeyboardInterrupt:
            status = 130
        finally:
            try:
                sys.stdout.flush(); sys.stderr.flush()
            except Exception:
                pass
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # idle: a late interrupt must not end the kernel
            os.dup2(devnull, 1); os.dup2(devnull, 2)
            conn.sendall(json.dumps({"status": status}).encode() + b"\n")
            answered = True
    except BaseException:
        if not answered:
            try:
                conn.sendall(json.dumps({"status": 130}).encode() + b"\n")
            except Exception:
                pass
    finally:
        conn.close()
'''

CLIENT = r'''
import json, os, signal, socket, subprocess, sys, time
STATE, FILE = sys.argv[1], sys.argv[2]
def note(text):
    sys.stdout.write("[codeduet: %s]\n" % text)
    sys.stdout.flush()
def pids():
    try:
        return [int(p) for p in open(STATE + "/pids").read().split()]
    except (OSError, ValueError):
        return []
def died():
    try:
        return json.load(open(STATE + "/died"))
    except (OSError, ValueError):
        return None
def connect():
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(STATE + "/sock")
    return conn
def start():
    for name in ("sock", "pids", "died"):
        try:
            os.unlink(STATE + "/" + name)
        except OSError:
            pass
    with open(STATE + "/kernel.py", "w") as fh:
        fh.write(KERNEL_SOURCE)
    subprocess.Popen([sys.executable, "-u", STATE + "/kernel.py", STATE], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    until = time.monotonic() + 15
    while time.monotonic() < until:
        if pids() and os.path.exists(STATE + "/sock"):
            try:
                return connect()
            except OSError:
                pass
        time.sleep(0.01)
    raise SystemExit("codeduet: the Python kernel did not start")
def kill_kernel(why):
    for pid in pids():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.unlink(STATE + "/pids")
        with open(STATE + "/died", "w") as fh:
            json.dump({"code": -9, "why": why}, fh)
    except OSError:
        pass
class Interrupted(Exception):
    """coreutils `timeout` sent SIGTERM: the block's time limit."""
interrupted = []
def on_term(*_):
    if interrupted:
        return
    interrupted.append(time.monotonic())
    alive = pids()
    if alive and conn is not None:
        try:
            os.kill(alive[-1], signal.SIGINT)
        except OSError:
            pass
    raise Interrupted()
conn = None
signal.signal(signal.SIGTERM, on_term)
try:
    os.makedirs(STATE, mode=0o700, exist_ok=True)
    if pids() and died() is None:
        try:
            conn = connect()
        except OSError:
            conn = None
    if conn is None:
        before = died()
        if os.path.exists(STATE + "/started"):
            why = before["why"] if before else "it was stopped"
            note("a fresh Python kernel: the previous one died (%s), so the variables, imports and data of "
                 "earlier blocks are gone" % why)
        conn = start()
        open(STATE + "/started", "w").close()
    socket.send_fds(conn, [json.dumps({"file": os.path.abspath(FILE), "cwd": os.getcwd()}).encode()], [1])
except Interrupted:
    kill_kernel("killed when a block's time limit came while it started")
    note("the block's time limit came before the Python kernel could run it; the next block starts a fresh kernel")
    sys.exit(124)
answer = b""
while not answer.endswith(b"\n"):
    try:
        if interrupted:
            conn.settimeout(max(0.01, interrupted[0] + GRACE_S - time.monotonic()))
        chunk = conn.recv(4096)
    except Interrupted:
        continue
    except socket.timeout:
        kill_kernel("killed at a block's time limit: the block did not stop when interrupted")
        note("the block did not stop when interrupted at its time limit, so the Python kernel was killed; the "
             "next block starts a fresh kernel: the variables of earlier blocks are gone")
        sys.exit(124)
    if not chunk:
        break
    answer += chunk
if not answer.endswith(b"\n"):  # the kernel ended during the block
    for _ in range(100):
        if died() is not None:
            break
        time.sleep(0.01)
    end = died() or {"code": -9, "why": "it is gone"}
    note("the Python kernel died during this block (%s); the next block starts a fresh kernel: the variables, "
         "imports and data of earlier blocks are gone" % end["why"])
    code = end["code"]
    sys.exit(128 - code if code < 0 else code or 1)
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the block is over: a late limit changes nothing
status = json.loads(answer)["status"]
if interrupted:
    note("interrupted at the block's time limit (the KeyboardInterrupt above); the Python kernel lives on with "
         "its variables")
    sys.exit(124)
sys.exit(status)
'''


def kernel_source(error_locals: bool) -> str:
    """The kernel's program (supervisor and interpreter)."""
    return (KERNEL.replace("HOOK\n", HOOK if error_locals else "")
            .replace("ERROR_LOCALS", repr(error_locals))
            .replace("VALUES_DIR", repr(VALUES_DIR))
            .replace("TABLE_ROWS", str(TABLE_ROWS)).replace("TABLE_COLUMNS", str(TABLE_COLUMNS))
            .replace("CELL_CHARS", str(CELL_CHARS)))


def kernel_argv(python: str, filename: str, error_locals: bool, state: str = STATE_DIR) -> list[str]:
    """The argv that runs `filename` in the sandbox's kernel (started by this block when there is none)."""
    client = (f"KERNEL_SOURCE = {kernel_source(error_locals)!r}\nGRACE_S = {GRACE_S!r}\n" + CLIENT)
    return [python, "-u", "-c", client, state, filename]


FRESH_NOTE = "[codeduet: a fresh Python kernel"
ENDED_NOTES = ("[codeduet: the Python kernel died during this block", "so the Python kernel was killed",
               "before the Python kernel could run it")


def kernel_history(files: list[str], filename: str, result: ExecResult) -> list[str]:
    """The files the kernel has run since it started, after `filename` ran with `result`: a block that started a
    fresh kernel begins the list again, one that ended the kernel empties it, and a block cut at its time limit is
    left out (running it again would only wait for the limit again)."""
    if any(note in result.output for note in ENDED_NOTES):
        return []
    files = [] if FRESH_NOTE in result.output else files
    return files if result.timed_out else [*files, filename]


def in_kernel(argv: list[str]) -> bool:
    """Whether argv runs a block in the kernel (kernel_argv made it)."""
    return len(argv) > 3 and argv[2] == "-c" and argv[3].startswith("KERNEL_SOURCE = ")


"""Where a stop's CPU goes, process by process: every process a command starts, orphans included (this process is
their subreaper: the after-answer child, the runs' bubblewrap), each with its own CPU from the kernel's taskstats exit
record (`cpu_run_virtual_total`: exact to the nanosecond, where /proc and `wait4` count ticks or a whole subtree).
Linux, as root (the taskstats netlink family); other processes on the machine are left out by their parentage.

    python bench/proc_cpu.py ROUNDS KIT [KIT...]    # a small project's seal and own-suite stops, kits interleaved
    python bench/proc_cpu.py run -- CMD [ARGS...]   # any command's processes, one line each

The project is tests/gate/test_own_suite.py's calc (one module, one own test, one hidden test), sealed by each kit (a
checkout with its .venv) in a state root of its own; then stops of new sessions, each after a change (`VARIANTS`,
default `code,test`): `code` the product changed (`mul` added, a new comment each stop), `test` that and a test added
to the sealed test file, `same` the test file written again unchanged, `cached` the session's tree unchanged (its
second stop is answered from the verdict cache). `BIG=N`: the sealed test file holds 2N tests as a real project's do
(a helper they share, parametrized cases, ~20 KB for N=60). `PER` stops a variant a round (2). Roles: `hook/cli` the
hook (or the seal's command), `after` its after-answer child, `walls#k` the k-th interpreter started in the walls (the
hidden run, the second opinion's supervisor, the own suite's sealed run, the agent's current tests), `other` what
the supervisor forks and a bytecode job, `bwrap`, `git`. Run with PYTHONDONTWRITEBYTECODE unset (as `make test` runs the kit).
"""

from __future__ import annotations

import collections
import ctypes
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

_GENL_CTRL, _GET_FAMILY, _FAMILY_ID, _FAMILY_NAME = 0x10, 3, 1, 2
_TS_GET, _REGISTER, _DEREGISTER, _AGGR_PID, _STATS = 1, 3, 4, 4, 3


def _attr(kind: int, payload: bytes) -> bytes:
    n = 4 + len(payload)
    return struct.pack("HH", n, kind) + payload + b"\0" * (-n % 4)


def _msg(family: int, cmd: int, attrs: bytes) -> bytes:
    body = struct.pack("BBH", cmd, 1, 0) + attrs
    return struct.pack("IHHII", 16 + len(body), family, 1, 1, os.getpid()) + body


def _attrs(buf: bytes):
    i = 0
    while i + 4 <= len(buf):
        n, kind = struct.unpack_from("HH", buf, i)
        if n < 4:
            return
        yield kind & 0x3FFF, buf[i + 4:i + n]
        i += (n + 3) & ~3


class Tracer:
    """Exit records of every task on the machine while it listens; `stop` keeps this process's descendants."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)  # NETLINK_GENERIC
        self.sock.bind((0, 0))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.send(_msg(_GENL_CTRL, _GET_FAMILY, _attr(_FAMILY_NAME, b"TASKSTATS\0")))
        self.family = next(struct.unpack("H", p[:2])[0] for k, p in _attrs(self.sock.recv(65536)[20:]) if k == _FAMILY_ID)
        self.mask = f"0-{os.cpu_count() - 1}\0".encode()
        self.records: list[dict] = []
        self.names: dict[int, str] = {}
        self._done = threading.Event()

    def start(self) -> Tracer:
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        self.sock.send(_msg(self.family, _TS_GET, _attr(_REGISTER, self.mask)))
        self.threads = [threading.Thread(target=f, daemon=True) for f in (self._receive, self._names)]
        for t in self.threads:
            t.start()
        return self

    def _receive(self) -> None:
        self.sock.settimeout(0.2)
        while not self._done.is_set():
            try:
                data = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            i = 0
            while i + 16 <= len(data):
                n, kind = struct.unpack_from("IH", data, i)
                if kind == self.family:
                    for k, p in _attrs(data[i + 20:i + n]):
                        for k2, s in _attrs(p) if k == _AGGR_PID else ():
                            if k2 == _STATS:  # struct taskstats, version >= 13 (linux/taskstats.h)
                                tid, ppid = struct.unpack_from("II", s, 128)
                                self.records.append({"tid": tid, "ppid": ppid, "tgid": struct.unpack_from("I", s, 368)[0],
                                                     "comm": s[80:112].split(b"\0")[0].decode(errors="replace"),
                                                     "cpu": struct.unpack_from("Q", s, 72)[0] / 1e9})
                i += ((n + 3) & ~3) or len(data)

    def _names(self) -> None:  # each process's command line, as soon as it is seen (a name for the record)
        while not self._done.is_set():
            for d in os.listdir("/proc"):
                if d.isdigit() and int(d) not in self.names:
                    try:
                        with open(f"/proc/{d}/cmdline", "rb") as fh:
                            self.names[int(d)] = fh.read().replace(b"\0", b" ").decode(errors="replace")[:300]
                    except OSError:
                        pass
            time.sleep(0.003)

    def stop(self) -> list[dict]:
        while True:  # the orphans handed to this subreaper, waited for
            try:
                if not os.waitpid(-1, os.WNOHANG)[0]:
                    time.sleep(0.01)
            except ChildProcessError:
                break
        time.sleep(0.3)
        self._done.set()
        for t in self.threads:
            t.join()
        self.sock.send(_msg(self.family, _TS_GET, _attr(_DEREGISTER, self.mask)))
        procs: dict[int, dict] = {}
        for r in self.records:
            p = procs.setdefault(r["tgid"], {"pid": r["tgid"], "ppid": None, "comm": "?", "cpu": 0.0})
            p["cpu"] += r["cpu"]
            if r["tid"] == r["tgid"]:
                p["ppid"], p["comm"] = r["ppid"], r["comm"]
        me = os.getpid()

        def ours(pid: int, depth: int = 0) -> bool:
            p = procs.get(pid)
            return p is not None and depth < 64 and (p["ppid"] == me or ours(p["ppid"], depth + 1))

        out = [dict(p, cmd=self.names.get(p["pid"], "")) for pid, p in sorted(procs.items()) if ours(pid)]
        self.records.clear()
        return out


def traced(argv: list[str], **kw) -> tuple[subprocess.CompletedProcess, list[dict]]:
    tracer = Tracer().start()
    res = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kw)
    return res, tracer.stop()


def roles(procs: list[dict]) -> dict[str, float]:
    """CPU-s by role (the module's docstring)."""
    me, out, walls = os.getpid(), collections.Counter(), 0
    by = {p["pid"]: p for p in procs}
    first = min((p["pid"] for p in procs if p["ppid"] == me), default=None)
    for p in procs:
        parent = by.get(p["ppid"], {})
        if p["comm"] == "bwrap" or p["comm"].startswith("git"):
            role = "bwrap" if p["comm"] == "bwrap" else "git"
        elif p["ppid"] == me:
            role = "hook/cli" if p["pid"] == first else "after"
        elif parent.get("comm") == "bwrap":
            role, walls = f"walls#{walls}", walls + 1
        else:
            role = "other"  # the second opinion's zygote and its forks, a bytecode job
        out[role] += p["cpu"]
    return dict(out)


CALC = "def add(a, b):\n    return a + b\n"
OWN = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
HIDDEN = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"
MUL = "\n\ndef mul(a, b):\n    return a * b\n"
ADDED = "\n\ndef test_mul_{n}():\n    from calc import mul\n    assert mul(2, 4) == 8\n"


def big(n: int) -> str:
    """A test file as a real project's: 2n tests, a helper they share, parametrized cases."""
    parts = ["import pytest\nfrom calc import add\n\n\ndef check(a, b, want):\n    got = add(a, b)\n    assert got == want\n"
             "    assert isinstance(got, int)\n    return got\n"]
    for i in range(n):
        parts.append(f"\n\ndef test_add_{i}():\n    assert add({i}, 1) == {i + 1}\n    check({i}, 2, {i + 2})\n"
                     f"    with pytest.raises(TypeError):\n        add({i}, None)\n")
        parts.append(f"\n\n@pytest.mark.parametrize('a, b', [({i}, 1), (1, {i}), (0, 0)])\ndef test_case_{i}(a, b):\n"
                     "    assert add(a, b) == add(b, a)\n    assert check(a, b, a + b) == a + b\n")
    return "".join(parts)


def project(base: Path, own: str) -> tuple[Path, Path, dict]:
    shutil.rmtree(base, ignore_errors=True)
    repo, hidden, home = base / "calc", base / "hidden", base / "home"
    for p in (repo / "tests", hidden, home):
        p.mkdir(parents=True)
    (repo / "calc.py").write_text(CALC)
    (repo / "tests" / "test_calc.py").write_text(own)
    (hidden / "test_mul.py").write_text(HIDDEN)
    git = shutil.which("git") or "git"
    subprocess.run([git, "init", "-q", str(repo)], check=True)
    subprocess.run([git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([git, "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("DONEGATE_NESTED", "PYTHONDONTWRITEBYTECODE")}
    return repo, hidden, {**env, "DONEGATE_HOME": str(home)}


def stop(kit: Path, repo: Path, env: dict, n: int, variant: str, own: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    session = "cached" if variant == "cached" else f"s-{n}"
    if variant != "cached":
        (repo / "calc.py").write_text(CALC + MUL + f"# edit {n}\n")
    if variant in ("test", "same"):
        (repo / "tests" / "test_calc.py").write_text(own + (ADDED.format(n=n) if variant == "test" else ""))
    payload = json.dumps({"session_id": session, "cwd": str(repo), "hook_event_name": "Stop", "stop_hook_active": False,
                          "last_assistant_message": "Done.", "transcript_path": ""})
    argv = [str(kit / ".venv" / "bin" / "python"), "-I", "-S", str(kit / "hooks" / "stop_gate.py"), "--repo", str(repo),
            "--git", shutil.which("git") or "git"]  # as install writes it (`hook_bench.hook_argv`)
    return traced(argv, input=payload, env=env)


def main(rounds: int, kits: list[Path]) -> None:
    variants = os.environ.get("VARIANTS", "code,test").split(",")
    own = big(int(os.environ["BIG"])) if os.environ.get("BIG") else OWN
    figures: dict[tuple[str, str], list[dict[str, float]]] = collections.defaultdict(list)
    work = Path(os.environ.get("WORK") or f"/tmp/donegate-proc-cpu-{os.getpid()}")
    n = 0
    try:
        for r in range(rounds):
            for kit in kits if r % 2 == 0 else kits[::-1]:
                repo, hidden, env = project(work / kit.name, own)
                res, procs = traced([str(kit / ".venv" / "bin" / "python"), "-m", "donegate", "seal", str(repo),
                                     str(hidden / "test_mul.py"), "--request", "add mul"], cwd=kit, env=env)
                assert res.returncode == 0, res.stderr[-2000:]
                figures[(kit.name, "seal")].append(roles(procs))
                for variant in variants:
                    for _ in range(int(os.environ.get("PER", "2"))):
                        n += 1
                        res, procs = stop(kit, repo, env, n, variant, own)
                        assert res.returncode in (0, 2), res.stderr[-2000:]
                        figures[(kit.name, variant)].append(roles(procs))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load {os.getloadavg()[0]:.1f}; CPU ms, median of each role over the rows (total: median of the sums)")
    for (kit_name, what), rows in sorted(figures.items()):
        names = sorted({k for row in rows for k in row})
        parts = ", ".join(f"{k} {statistics.median(row.get(k, 0.0) for row in rows) * 1000:.0f}" for k in names)
        total = statistics.median(sum(row.values()) for row in rows) * 1000
        print(f"{kit_name:20} {what:7} n={len(rows):2} total {total:6.0f}: {parts}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"]:
        res, procs = traced(sys.argv[sys.argv.index("--") + 1:])
        for p in procs:
            print(f"{p['cpu'] * 1000:8.1f} ms {p['pid']:>8} <{p['ppid']}> {p['comm']}: {p['cmd'][:150]!r}")
        print(f"total {sum(p['cpu'] for p in procs) * 1000:.1f} ms, exit {res.returncode}")
    else:
        main(int(sys.argv[1]), [Path(k).resolve() for k in sys.argv[2:]])

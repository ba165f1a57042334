"""What a hidden run executes of the kit (`donegate.hidden.ship`): the kit's bytecode of its harness when the
run's interpreter reads it, the source otherwise, and no kit path in either."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path
from types import CodeType

import pytest

from donegate.hidden import ship

KIT = Path(ship.__file__).resolve().parent.parent.parent
NAMES = ("bare", "probe", "kept")


def _every(code: CodeType):
    yield code
    for c in code.co_consts:
        if isinstance(c, CodeType):
            yield from _every(c)


def test_the_code_sent_names_only_the_label_never_the_kit():
    line, _, source = ship.payload(NAMES, "<m0123>").partition("\n")
    magic, blob = line.split()
    raw = bytes.fromhex(blob)
    codes = marshal.loads(raw)
    assert len(codes) == len(NAMES)
    assert {c.co_filename for code in codes for c in _every(code)} == {"<m0123>"}
    assert str(KIT).encode() not in raw and str(KIT) not in source
    assert "def supervise(" in source and "def keep_bytecode(" in source


# The run's side: READ, then the code executed in one namespace, as SUPERVISOR and BOOTSTRAP do.
RUN = "import sys\ndef main():\n    LABEL = '<m0123>'\n" + ship.READ + """\
    ns = {"__name__": "h"}
    for code in codes:
        exec(code, ns)
    import json
    print(json.dumps([len(codes), "supervise" in ns, "keep_bytecode" in ns, ns["keep_bytecode"].__code__.co_filename]))
main()
"""


@pytest.mark.parametrize("tamper, compiled", [(False, False), (True, True)])
def test_a_run_executes_the_bytecode_when_its_interpreter_reads_it_else_the_source(tamper, compiled):
    """Another interpreter (another magic number) gets the source and compiles it, one code object."""
    text = ship.payload(NAMES, "<m0123>")
    if tamper:
        text = "0000" + text[4:]
    res = subprocess.run([sys.executable, "-I", "-S", "-c", RUN], input=text, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    count, supervise, keep, name = json.loads(res.stdout)
    assert supervise and keep and name == "<m0123>"
    assert count == (1 if compiled else len(NAMES))


SECOND = ("bare_plan", "bare_shim", "bare_served", "bare_fork", "bare", "probe", "kept", "seeded", "answers", "traces")


def test_a_kept_payload_is_the_one_built_and_keeps_no_stops_secret_name(tmp_path):
    # Kept between stops under the state root (issue 48 item 2): each stop's payload is byte for byte the one built
    # afresh with its own secret label, and the file kept holds none of them (the second run's name is drawn per stop).
    keep = tmp_path / "ship"
    labels = ["<m0123456789ab>", "<m" + "f" * 12 + ">", "<m5a5a5a5a5a5a>"]
    for label in labels:
        assert ship.payload(SECOND, label, str(keep)) == ship.payload(SECOND, label)
    kept = b"".join(p.read_bytes() for p in keep.iterdir())
    assert kept and not any(label.encode() in kept or label.encode().hex().encode() in kept for label in labels)
    # Kept for another kit (a module's size or time moved), or spoiled: built again, the same payload.
    (path,) = keep.iterdir()
    stamp, line, blob, source = marshal.loads(path.read_bytes())
    mark = ("<" + "\x7f" * (len(labels[0]) - 2) + ">").encode().hex()
    path.write_bytes(marshal.dumps((stamp + "x", line, blob.replace(mark, "00" * (len(mark) // 2)), source)))
    assert ship.payload(SECOND, labels[0], str(keep)) == ship.payload(SECOND, labels[0])
    path.write_bytes(marshal.dumps((stamp, line, blob.replace(mark, "00" * (len(mark) // 2)), source)))  # placeholder gone
    assert ship.payload(SECOND, labels[1], str(keep)) == ship.payload(SECOND, labels[1])
    path.write_bytes(marshal.dumps((stamp, line, blob + "0" + mark + "0", source)))  # twice (once across two bytes)
    assert ship.payload(SECOND, labels[1], str(keep)) == ship.payload(SECOND, labels[1])
    path.write_bytes(marshal.dumps((stamp, line, bytes.fromhex(blob), source)))  # kept as bytes (the kit before hex)
    assert ship.payload(SECOND, labels[1], str(keep)) == ship.payload(SECOND, labels[1])
    path.write_bytes(b"not marshal")
    assert ship.payload(SECOND, labels[2], str(keep)) == ship.payload(SECOND, labels[2])
    # Kept for the same sizes and times but another text (an edit that kept both): it ran, the old text's payload. The
    # text is compared at every stop now.
    stamp, line, blob, source = marshal.loads(path.read_bytes())
    path.write_bytes(marshal.dumps((stamp, line, blob, source.replace("def supervise(", "def supervised("))))
    assert ship.payload(SECOND, labels[2], str(keep)) == ship.payload(SECOND, labels[2])


def test_the_second_harness_imports_neither_secrets_nor_tempfile_nor_their_libraries():
    """Each of the second run's forks copies its supervisor's mappings: `secrets` (with `hmac`, `hashlib` and OpenSSL's
    library, `base64`) and `tempfile` (with `shutil`, and bz2's, lzma's and zlib's libraries) cost ~4 ms to import and
    ~0.3 ms each a fork, ~20-30 ms of a 40-test stop's CPU (issue 48 item 2). The tokens are drawn as `secrets.token_hex`
    draws them (`bare._Zygote.send`), dg_random's seeds hashed by the standard library's SHA-256, and the temporary
    folders made as `tempfile` makes them (`bare_served._mkdtemp`). The look-alike: the harness's own imports are there."""
    from donegate.hidden import second

    source = second._source("m0123456789ab").partition("\n")[2]  # the modules' source, after the line of code objects
    probe = ("import sys\nexec(compile(sys.stdin.read(), '<h>', 'exec'), {'__name__': 'm_h'})\n"
             "print(' '.join(sorted(m for m in ('secrets', 'hmac', 'hashlib', '_hashlib', 'base64', 'tempfile', 'shutil',"
             " 'bz2', 'lzma', 'zlib', 'ast', 'inspect', 'pathlib') if m in sys.modules)))")
    res = subprocess.run([sys.executable, "-I", "-S", "-c", probe], input=source, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["ast", "inspect", "pathlib"], res.stdout


def test_the_second_harness_makes_temporary_folders_as_tempfile_does(tmp_path, monkeypatch):
    from donegate.hidden import bare_served

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(bare_served, "_TEMP_DIR", [])
    (tmp_path / "t").mkdir()
    made = [bare_served._mkdtemp(prefix="t"), bare_served._mkdtemp(dir=tmp_path / "t")]
    assert bare_served._temp_dir() == str(tmp_path) == os.path.dirname(made[0])
    assert os.path.basename(made[0])[:1] == "t" and len(os.path.basename(made[0])) == 9 and os.path.dirname(made[1]) == str(tmp_path / "t")
    assert all(os.path.isdir(m) and os.stat(m).st_mode & 0o777 == 0o700 for m in made) and len(set(made)) == 2


# The first run's bootstrap (`bootstrap.pth`): its `.pth` line carries BOOTSTRAP's code compiled by the kit, and a run
# whose interpreter has the kit's magic number executes that code (~0.03 ms) where PTH compiled BOOTSTRAP at every first
# run (~1.45 ms, on the path a stop waits for); kept under the state root, the same line at every stop. The look-alike:
# another magic number (another interpreter) compiles the source, as before. The line is executed here with `exec` and
# `compile` stood in for (its globals), so nothing of BOOTSTRAP runs.
@pytest.mark.parametrize("magic", ["the-kits", "another"])
def test_the_first_runs_bootstrap_is_the_kits_code_unless_its_interpreter_reads_other_bytecode(tmp_path, monkeypatch, magic):
    import builtins
    from importlib._bootstrap_external import MAGIC_NUMBER

    from donegate.hidden import bootstrap

    line = bootstrap.pth(str(tmp_path / "ship"))
    assert line == bootstrap.pth(str(tmp_path / "ship")) and line.endswith("\n") and line.count("\n") == 1  # kept
    [kept] = list((tmp_path / "ship").iterdir())
    text = kept.read_text()  # a kit whose FAST changed (BOOTSTRAP the same) builds it again
    kept.write_text(text.replace(bootstrap.FAST[:40], bootstrap.FAST[:39] + " ", 1))
    assert bootstrap.pth(str(tmp_path / "ship")) == line and kept.read_text() == text
    if magic == "another":
        assert line.count(repr(MAGIC_NUMBER)) == 1
        line = line.replace(repr(MAGIC_NUMBER), repr(b"\x00\x00\r\n"))
    compiled, ran = [], []

    def counted(*args, **kwargs):
        compiled.append(args[1:])
        return builtins.compile(*args, **kwargs)

    monkeypatch.setattr(sys, "argv", ["-m"])
    exec(line, {"__builtins__": builtins, "compile": counted, "exec": lambda code, ns: ran.append(code)})
    expected = compile(bootstrap.BOOTSTRAP, "<string>", "exec")
    assert len(ran) == 1 and ran[0].co_code == expected.co_code and ran[0].co_consts == expected.co_consts
    assert {c.co_filename for c in _every(ran[0])} == {"<string>"}
    assert compiled == ([] if magic == "the-kits" else [("<string>", "exec")])

"""What only tells the runs' walls apart, seen by effect in both runs (issue 45 item 3): sent with the first run's
plugin and with the second harness (`ship`: one namespace each, so every name here starts with `trace`/`TRACE`).

Neither run can hide these, and both answer alike, so code right only where one of them says "sandbox" passes both
runs with the bug in. Each read raises a Python audit event, whatever spelled the name:
- `open`, `os.listdir`, `os.scandir` (also by a relative path, or through a link: `/etc/mtab`, `/proc/self/root`, a
  link the product makes, `os.symlink`) of the run's own command line as the kernel keeps it (`python -c` in the second, the kit's arguments in the first), the
  mount tables, the namespace links, the network's interfaces (`TRACE_PATHS`). Not PID 1's files: the runs differ
  there (the second run's process is PID 1, the first's is not) and disagree;
- `ctypes.dlsym` of libc's entry points that ask the kernel what the walls set (`TRACE_SYMBOLS`: no_new_privs and
  capabilities by `prctl`/`capget`, any of them by `syscall`, statfs, namespace links by `readlink`, the interfaces);
- a child process started with one of those paths in its command (`subprocess`, `os.system`, `os.exec*`, spawns):
  `cat /proc/self/mountinfo`, `readlink /proc/self/ns/pid` (not a child's own command line).
Read by the repository's own code (not its environment's libraries, not a line the seal's baseline holds), it is the
scan's `sandbox-probe`: appealable, `seal --allow`. The first run sees it in its audit hook (`plugin._watch`), the
second in its zygote's (`bare.zygote`): code that reads a trace only where pytest is absent (`'_pytest' in
sys.modules or <trace>`) is seen there.

Not seen (no audit event, docs/verdict.md): `os.statvfs`, `os.readlink`, `os.stat` of these paths, a socket's errno;
a child that reads them without naming the path (`mount`, `findmnt`, `df`, `ip link`, a script file); a path
relative to a directory descriptor (`os.open('mountinfo', dir_fd=...)`: the event carries no folder).
"""

import _thread
import os
import re
import sys

TRACE_PATHS = re.compile(r"/proc/(?:(?:self|thread-self|\d+)/(?:mountinfo|mounts|mountstats|ns(?:/|$)|net(?:/|$))"
                         r"|(?:self|thread-self|(?P<pid>\d+))/cmdline$|mounts$|net(?:/|$))|/sys/class/net(?:/|$)")
TRACE_SYMBOLS = frozenset({"prctl", "syscall", "capget", "statfs", "statfs64", "fstatfs", "fstatfs64", "statvfs",
                           "statvfs64", "fstatvfs", "fstatvfs64", "readlink", "readlinkat", "getifaddrs", "if_nameindex"})
# A child process started to read them for the product: the path is in its command (a child's own command line is not
# a trace: `/proc/self/cmdline` there is the child's).
TRACE_SPAWNS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"})
TRACE_EVENTS = frozenset({"open", "os.listdir", "os.scandir", "ctypes.dlsym", "ctypes.dlsym/handle", "os.symlink",
                          *TRACE_SPAWNS})
# Paths that reach a trace through a link of the system's own (`/etc/mtab`, `/proc/self/root/...`, `/dev/fd/..`):
# resolved before they are matched. A link the product makes is seen as it is made (`os.symlink`).
_TRACE_LINKED = ("/proc/", "/sys/", "/dev/", "/etc/mtab")


def trace_of(event, args):
    """What the audited `event` reads of the walls ("" when nothing): a path of `TRACE_PATHS`, or a libc symbol of
    `TRACE_SYMBOLS` looked up through ctypes. An argument is read by its exact type only (`trace_text`): no method of
    the product's is called, so a spy given to `sys.audit` cannot tell a hook is there."""
    args = tuple.__getitem__(args, slice(None)) if issubclass(type(args), tuple) else ()
    if str.startswith(event, "ctypes.dlsym"):
        name = trace_text(args[1]) if len(args) > 1 else None
        return f"{name} through ctypes" if name is not None and name in TRACE_SYMBOLS else ""
    if event in TRACE_SPAWNS:
        for word in _trace_words(args[1] if event in ("subprocess.Popen", "os.exec", "os.posix_spawn")
                                 else args[2] if event == "os.spawn" else args[0] if args else None):
            hit = _trace_path(word)
            if hit and not (hit.endswith("/cmdline") and ("/self/" in hit or "/thread-self/" in hit)):
                return f"{hit}, read by a child process"
        return ""
    hit = _trace_path(args[0] if args else None)
    return f"{hit}, a link made to it" if hit and event == "os.symlink" else hit


_TRACE_PATHLIB = ("PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath", "WindowsPath")


def trace_text(value):
    """The path or name `value` holds, read by its exact type without a method of the product's (None when it cannot
    be): a `str` or `bytes` subclass through str's or bytes' own slot (a plain copy), an `os.DirEntry` and pathlib's
    own classes (exactly: not a subclass) through their own `__fspath__`, the standard library's code. Any other path
    object (an `os.PathLike` of the product's) is not asked: its `__fspath__` would see a second call where a run
    without the watch makes one, and may answer the watch otherwise than it answered `open`."""
    kind = type(value)
    if issubclass(kind, str):
        return str.__getitem__(value, slice(None))
    if issubclass(kind, bytes):
        return bytes.__getitem__(value, slice(None)).decode("utf-8", "replace")
    if kind is os.DirEntry:
        return os.fspath(value)
    modules = dict.get(vars(__import__("sys")), "modules")
    pathlib = dict.get(modules, "pathlib") if issubclass(type(modules), dict) else None
    if type(pathlib) is type(os) and any(kind is dict.get(vars(pathlib), n) for n in _TRACE_PATHLIB):
        return os.fspath(value)
    return None


TRACE_UNREAD = "a path object's own __fspath__ (not asked)"  # a path only the product's code names: fail closed


def _trace_path(path):
    """The trace `path` names ("" when none): as written, made absolute from the working folder, and resolved where a
    link of the system's own may lead to one. A path object of the product's (`trace_text` cannot read it) is one:
    what it names is known only to its own code."""
    if path is None or issubclass(type(path), int):
        return ""  # a file descriptor, or none
    path = trace_text(path)
    if path is None:
        return TRACE_UNREAD
    if not path or "\0" in path:
        return ""
    try:
        path = os.path.normpath(path if path.startswith("/") else os.path.join(os.getcwd(), path))
        seen = [path, os.path.realpath(path)] if path.startswith(_TRACE_LINKED) else [path]
    except (OSError, ValueError):
        return ""
    for one in seen:
        hit = TRACE_PATHS.match(one)
        if hit and hit.group("pid") in (None, str(os.getpid())):  # another process's command line: honest
            return hit.group(0)
    return ""


def _trace_words(command):
    """The words of a child's command: a list's items, a shell line split where a path cannot go on (a path object of
    the product's is a word of its own, unread)."""
    kind = type(command)
    items = (list.__getitem__(command, slice(None)) if issubclass(kind, list)
             else tuple.__getitem__(command, slice(None)) if issubclass(kind, tuple) else [command])
    out = []
    for item in items:
        if item is None or issubclass(type(item), int):
            continue
        text = trace_text(item)
        if text is None:
            out.append(item)  # `_trace_path` names it unread
        else:
            out += [w for w in re.split(r"[\s'\"`=;|&<>()$]+", text) if w.startswith("/")]
    return out


def trace_caller(frame):
    """The frame that asked: above the standard library's own, which only forwards a path or a name (ctypes'
    `CDLL.__getattr__` looks the symbol up for `lib.prctl`, `subprocess.run` builds the `Popen` that raises the event,
    pathlib's `Path.open` and shutil's copy open the path given them); never a library installed beside it (its
    site-packages: its own reads are its own)."""
    here = trace_stdlib()
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith("<frozen ") or name.startswith(here) and "-packages/" not in name[len(here):]):
            break
        frame = frame.f_back
    return frame


def trace_asker():
    """`asked(depth)`: the frame that asked (`trace_caller`) `depth` frames above its caller's, and the place to name
    when no frame of the thread is but the standard library's: a thread the product started on its code
    (`ThreadPoolExecutor().submit(open, path)`, `Thread(target=partial(shutil.copyfile, path, copy))`) has no frame
    of the repository's, and its read was nobody's (passed a stop with the bug in). Such a read is the product's
    unless its thread ran when the watch was installed (the harness's: its idents recorded here); the harness's own
    threads run its code, which is no standard library's."""
    harness = frozenset(sys._current_frames())  # before the watch's hook is added: no one sees this walk

    def asked(depth):
        try:
            frame = sys._getframe(depth + 1)
        except ValueError:  # a thread started on a C function: no Python frame at all
            frame = None
        caller = trace_caller(frame)
        if caller is not None or _thread.get_ident() in harness:
            return caller, ""
        names = []
        while frame is not None and len(names) < TRACE_CALLERS:
            names.append(f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_code.co_name}")
            frame = frame.f_back
        return None, f" in a thread of the standard library's code alone ({', '.join(names) or 'no Python frame'})"

    return asked


def trace_stdlib():
    """The standard library's folder (os.py's), with its slash."""
    return os.path.dirname(os.__file__) + "/"


def trace_qualnames(tree):
    """line -> the qualname of the innermost function or class around it in the parsed module `tree` ("" at module
    level): the place a finding belongs to, for the scan's baseline (`gate.scan_places.where`) and the tripwires'
    (`trace_where`) alike (issue 45 item 6)."""
    import ast

    spans, nodes = [], []
    holders = (ast.stmt, ast.excepthandler, ast.match_case)

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = prefix + child.name
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                spans.append((start, child.end_lineno or child.lineno, qual))
                nodes.append(child)
                walk(child, qual + ".")
            elif isinstance(child, holders):  # a def is a statement: no expression holds one (a lambda is no def)
                walk(child, prefix)

    walk(tree, "")

    def at(line):
        best = ""
        for start, end, qual in spans:  # nested spans come after their parent: the last that holds it is innermost
            if start <= line <= end:
                best = qual
        return best
    at.spans, at.nodes, at.tree = spans, nodes, tree  # type: ignore[attr-defined]
    return at


def trace_body(name, line):
    """A checksum (FNV-1a, no module imported) of what the function or class around `line` of the file `name` does, its
    decorators with it ("" at module level): its syntax tree, without the docstrings (its own and its nested
    functions' and classes'), comments and layout (a comment added in a baselined function was another place: an honest
    block). A read's function changed since the seal (a `with` body that now keeps the line it read, a cache put on it)
    makes the read another place, the change's, though its statement and callers are the baseline's. Its text's, as
    written, where the tree is too deep to read."""
    lines, at, _ = _trace_parsed(name)
    spans = getattr(at, "spans", ())
    around = [i for i, (s, e, _) in enumerate(spans) if s <= line <= e]
    if not around:
        return ""
    first, last, _ = spans[around[-1]]
    try:
        text = _trace_shape(at.nodes[around[-1]])
    except RecursionError:
        body = lines[first - 1:last]
        cut = len(body[0]) - len(body[0].lstrip()) if body else 0
        text = "\n".join(x[cut:].rstrip() for x in body)
    h = 0xCBF29CE484222325
    for b in text.encode("utf-8", "replace"):
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return format(h, "016x")


def _trace_shape(node):
    """`ast.dump`'s text of `node` without positions (as it writes it) and without docstrings."""
    import ast

    if isinstance(node, list):
        return "[" + ",".join(_trace_shape(x) for x in node) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    fields = []
    for field, value in ast.iter_fields(node):
        if field == "body" and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and value \
                and isinstance(value[0], ast.Expr) and isinstance(value[0].value, ast.Constant) and isinstance(value[0].value.value, str):
            value = value[1:]
        fields.append(f"{field}={_trace_shape(value)}")
    return f"{type(node).__name__}({','.join(fields)})"


TRACE_QUALNAMES: "dict[str, object]" = {}  # a file's (`trace_qualnames`, `trace_statements`), parsed once a run
TRACE_SOURCES: "dict[str, list]" = {}  # the lines of the files a baselined place names, read before the product runs
TRACE_CALLERS = 8  # the frames of a place at most: the code that did it and its callers
TRACE_CAPPED = ", and callers past them unread"  # a place cut at the cap: never the seal's baseline (`own_marks`)
_TRACE_NAMED = re.compile(r"(?: at | in |, called from )([^:,]+?\.pyw?)(?=[:,]|$)")  # more read: no harm


def trace_bound(frame, qual):
    """" rebound" where the module of the code that did it no longer holds that function under its name (`qual`, a
    plain function or a class's method, read from the dicts themselves: no code of the product's runs), "" where it
    does or the name is no such function: a cache put around it from another file (`diag.figure =
    functools.lru_cache(None)(diag.figure)`) answers every later call with the first read's value, with no frame of
    its own to show it. A function already wrapped so at the seal is wrapped so at the stop: the same place."""
    names = qual.split(".")
    if "<locals>" in names or type(frame.f_globals) is not dict:  # a nested function: no name to hold it
        return ""
    obj = frame.f_globals.get(names[0])
    for n in names[1:]:
        obj = type.__dict__["__dict__"].__get__(obj).get(n) if issubclass(type(obj), type) else None
    obj = obj.__func__ if type(obj) in (staticmethod, classmethod) else obj.fget if type(obj) is property else obj
    return "" if type(obj) is type(trace_bound) and obj.__code__ is frame.f_code else " rebound"


def trace_called(frame):
    """What the call that reached the reading function's `frame` names, read in its caller's frame: "" where its callee
    (a dotted name: `diag.figure`) is that very function, " called through another object" where it is something
    else, " called unresolved" where it cannot be told from the dicts alone (a call's position not in the kit's copy
    of the file, a local instance's attribute; no code of the product's runs). A cache the agent binds in the
    caller's namespace (`diag = SimpleNamespace(figure=lru_cache(None)(_diag.figure))`: the sealed line read once at
    its place, the agent's new line served from the cache) changes it: the place is the change's. "" before Python
    3.11 (no positions)."""
    caller = frame.f_back
    positions = getattr(caller.f_code, "co_positions", None) if caller is not None else None
    if positions is None:
        return ""
    import ast

    at = _trace_parsed(caller.f_code.co_filename)[1]
    calls = TRACE_CALLS.get(caller.f_code.co_filename)
    if calls is None:
        tree = getattr(at, "tree", None)
        calls = TRACE_CALLS[caller.f_code.co_filename] = {
            (n.lineno, n.end_lineno, n.col_offset, n.end_col_offset): n for n in ast.walk(tree) if isinstance(n, ast.Call)
        } if tree is not None else {}
    spots = list(positions())
    node = calls.get(spots[caller.f_lasti // 2]) if 0 <= caller.f_lasti // 2 < len(spots) else None
    if node is None:
        return " called unresolved"
    expr, chain = node.func, []
    while isinstance(expr, ast.Attribute):
        chain.append(expr.attr)
        expr = expr.value
    obj = _TRACE_NONE
    if isinstance(expr, ast.Name):
        for scope in (caller.f_locals, caller.f_globals, caller.f_builtins):
            if type(scope) is dict and dict.__contains__(scope, expr.id):
                obj = dict.__getitem__(scope, expr.id)
                break
    for name in reversed(chain):
        obj = _trace_attr(obj, name)
    if type(obj) in (staticmethod, classmethod) or type(obj) is type(trace_caller.__get__(0)):
        obj = obj.__func__
    if obj is _TRACE_NONE:
        return " called unresolved"
    return "" if type(obj) is type(trace_called) and obj.__code__ is frame.f_code else " called through another object"


_TRACE_NONE = object()


def _trace_attr(obj, name):
    """`obj`'s attribute `name` read from the dicts alone (a module's, a namespace's, a class's and its bases'), or
    `_TRACE_NONE` where it cannot be so (another object's: its own code might answer)."""
    kind = type(obj)
    if kind is type(os) or kind is type(sys.implementation):  # a module, a types.SimpleNamespace
        d = object.__getattribute__(obj, "__dict__")
        return dict.get(d, name, _TRACE_NONE) if type(d) is dict else _TRACE_NONE
    if issubclass(kind, type):
        for c in type.__dict__["__mro__"].__get__(obj):
            d = type.__dict__["__dict__"].__get__(c)
            if name in d:
                return d[name]
    return _TRACE_NONE


TRACE_CALLS: "dict[str, dict]" = {}  # a file's calls by their positions (`trace_called`), read once a run


def trace_keep(repo, baseline):
    """Read, before the product runs, the files the places of the seal's baseline name (`own:RULE:WHAT`): their
    statements are read from this copy of the kit's own, never from `linecache`, which the product's process can
    change (its new line given a baselined line's text), nor from the file, which it can rewrite."""
    repo = repo.rstrip("/") + "/"
    for item in baseline:
        for rel in _TRACE_NAMED.findall(item) if item.startswith("own:") else ():
            if repo + rel not in TRACE_SOURCES:
                try:
                    with open(repo + rel, "rb") as fh:
                        TRACE_SOURCES[repo + rel] = fh.read().decode("utf-8", "replace").splitlines(True)
                except (OSError, ValueError):
                    TRACE_SOURCES[repo + rel] = []


def trace_statements(tree):
    """line -> (first, last) lines of the innermost statement around it in the parsed module `tree` (a compound
    statement's header only: `if (` to `):`, a def's decorators with it), None outside every statement."""
    import ast

    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.stmt, ast.excepthandler)):
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            last = node.end_lineno or node.lineno
            if type(getattr(node, "body", None)) is list:  # to the end of its header's expressions (not a comment)
                head = [v for f, v in ast.iter_fields(node) if f not in ("body", "orelse", "finalbody", "handlers", "cases")]
                last = max([node.lineno, *(getattr(n, "end_lineno", 0) or 0 for v in head
                                           for x in (v if type(v) is list else [v]) if isinstance(x, ast.AST)
                                           for n in ast.walk(x))])
            spans.append((last - first, first, last))
    spans.sort()

    def at(line):
        return next(((first, last) for _, first, last in spans if first <= line <= last), None)
    return at


def _trace_parsed(name):
    """(the file `name`'s lines, `trace_qualnames`, `trace_statements`): the kit's copy where it holds the file."""
    got = TRACE_QUALNAMES.get(name)
    if got is None:
        import ast
        import linecache

        lines = TRACE_SOURCES.get(name)
        lines = linecache.getlines(name) if lines is None else lines
        try:
            tree = ast.parse("".join(lines))
            got = (lines, trace_qualnames(tree), trace_statements(tree))
        except (SyntaxError, ValueError, RecursionError):
            got = (lines, None, None)  # no source: no function named, each line its own
        TRACE_QUALNAMES[name] = got
    return got


def trace_qualname(name, line):
    """The function around `line` of the file `name` ("" at module level, or where its source cannot be read)."""
    at = _trace_parsed(name)[1]
    return at(line) if at is not None else ""


def trace_statement(name, line):
    """The text of the statement around `line` of the file `name`, its whitespace runs one space, at most 200
    characters: its line's own where it is one line (a call on a line of its own inside a parenthesised `if` is
    the whole `if (...):`, not a line's text another statement has)."""
    lines, _, at = _trace_parsed(name)
    span = at(line) if at is not None else None
    first, last = span if span is not None else (line, line)
    return " ".join(" ".join(lines[first - 1:last]).split())[:200] if 0 < first <= len(lines) else ""


def trace_where(frame, repo, theirs=(), sealed=(), tests=""):
    """Where the code that did it is, as its place (issue 45 item 6; what a tripwire of the seal's baseline is matched
    by): its file, the function around it and its line's text, then each caller's that is the repository's own, up to
    the sealed tests' code (a file of `sealed`: the second run's hidden modules lie in the project's folder; one under
    `tests`: the first run's store), at most `TRACE_CALLERS`. A frame of another file (a library, the harness, code
    compiled under another file's name) and a module's name (`__main__` is the product's to set) end nothing: the
    callers below are read through it. A place cut at the cap is marked (`TRACE_CAPPED`): no baseline holds it.
    The same wherever an edit moved the lines; the same read reached through a new or changed call, moved to
    another function, or in a function whose text changed (`trace_body`), is another place: the change's."""
    parts = []
    while frame is not None:
        name = frame.f_code.co_filename
        if parts and (name in sealed or tests and name.startswith(tests)):
            break
        if parts and (not name.startswith(repo) or name.startswith(theirs)):
            frame = frame.f_back
            continue
        if len(parts) == TRACE_CALLERS:
            parts.append("")
            break
        code = trace_statement(name, frame.f_lineno)
        qual = trace_qualname(name, frame.f_lineno) if code else ""
        if qual and not parts:  # the function that did it: its code too (`trace_body`), whether its module still holds
            # it (`trace_bound`) and whether its caller's call names it (`trace_called`)
            qual += f" [{trace_body(name, frame.f_lineno)}{trace_bound(frame, qual)}{trace_called(frame)}]"
        parts.append(f"{name[len(repo):]}{':' + qual if qual else ''}: {code}" if code else name[len(repo):])
        frame = frame.f_back
    head = f" at {parts[0]}" if ": " in parts[0] else f" in {parts[0]}"
    return head + "".join(f", called from {p}" for p in parts[1:] if p) + (TRACE_CAPPED if not parts[-1] else "")

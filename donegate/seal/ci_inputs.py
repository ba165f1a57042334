"""A reusable workflow's test steps as each of its callers runs them (docs/own-suite.md "Weakening, named"): a job that
calls a workflow of the repository (`uses: ./.github/workflows/tests.yml`) gives it inputs (`with:`), and the called
workflow's steps read them (`if: inputs.run-tests`, `pytest ${{ inputs.pytest-args }}`), which the workflow's own
text leaves not known. Each such call is read with its inputs put in (the caller's `with:`, else the input's
`default:`), at the seal and now, and compared as a workflow's test steps are (`excluded.steps_weakened`): a caller
now passing `run-tests: false`, `pytest-args: -k 'not add'` or `continue: true` is named on the caller; a default
changed so, on the called workflow. Inputs that leave the test steps as they ran (`python-version: '3.12'`, `-v`) are
none."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def findings(flows: dict[str, tuple[str | None, str | None]]) -> list[dict[str, str]]:
    """{file, rule, what} for each call of a reusable workflow of the repository whose test steps, read with the
    inputs given (`flows`: {workflow: (its text at the seal, now)} of every workflow), run less than they did at the
    seal, beyond what the called workflow's own text already shows (`excluded.ci_findings` names that)."""
    from donegate.seal.ci_runs import _load
    from donegate.seal.excluded import _test_steps, steps_weakened

    out = []
    for caller in sorted(flows):
        was_c, is_c = (_jobs(_load(t)) for t in flows[caller])
        for job, body in sorted(was_c.items()):
            called = _called(body)
            if called not in flows or _called(is_c.get(job)) != called:
                continue  # (a call gone or moved elsewhere: the caller's own steps, `ci_runs.reach`, say so)
            was_w, is_w = flows[called]
            given_was, given_now = _with(body), _with(is_c[job])
            if given_was == given_now and was_w == is_w:
                continue
            plain = {(r, w) for r, w in steps_weakened(_test_steps(was_w) or {}, _test_steps(is_w) or {})}
            text = _given(is_w, given_now)
            before, now = _test_steps(_given(was_w, given_was)), _test_steps(text)
            if not before or now is None:
                continue
            where = caller if given_was != given_now else called
            if text is None and is_w is not None and _load(is_w) is not None:
                out.append({"test": where, "rule": "ci-test-removed", "what": f"job {job} calls {called}: read with its "
                            f"inputs it no longer reads (YAML aliases past {NODES:,} nodes, or one that holds itself)"})
                continue
            out += [{"test": where, "rule": rule, "what": f"job {job} calls {called}: {what}" + (
                f" (its inputs now {_shown(given_now)})" if where == caller else "")}
                for rule, what in steps_weakened(before, now) if (rule, what) not in plain]
    return out


def _jobs(data: Any) -> dict[str, Any]:
    jobs = data.get("jobs") if isinstance(data, dict) else None
    return {str(k): v for k, v in jobs.items() if isinstance(v, dict)} if isinstance(jobs, dict) else {}


def _called(body: Any) -> str | None:
    """The repository's workflow a job calls (`uses: ./.github/workflows/x.yml`), None for none."""
    uses = body.get("uses") if isinstance(body, dict) else None
    return uses.removeprefix("./") if isinstance(uses, str) and uses.startswith("./.github/workflows/") else None


def _with(body: dict[str, Any]) -> dict[str, Any]:
    given = body.get("with")
    return {str(k): v for k, v in given.items()} if isinstance(given, dict) else {}


def _shown(given: dict[str, Any]) -> str:
    return ", ".join(f"{k}: {v!r}" for k, v in sorted(given.items()))[:160] or "none"


# The nodes a workflow read with its inputs put in may hold, each alias counted every time it is read: YAML's aliases
# nest (`b: &b [*a, *a, ...]`, ten lines of ten: 10^10 nodes) and one may hold itself (`x: &a [*a]`).
NODES = 10_000


def _bounded(node: Any, limit: int = NODES) -> bool:
    """Whether a loaded YAML value holds at most `limit` nodes, its aliases counted as read (one that holds itself: never)."""
    todo, count = [node], 0
    while todo:
        item = todo.pop()
        count += 1
        if count > limit:
            return False
        todo += list(item.values()) + list(item) if isinstance(item, dict) else item if isinstance(item, list) else []
    return True


def _given(text: str | None, given: dict[str, Any]) -> str | None:
    """The called workflow's text with its inputs put in: `inputs.NAME` in an expression as its value's literal
    (`if: inputs.run-tests` as `if: false`), `${{ inputs.NAME }}` in a script or an environment as its value's text;
    an input neither given nor defaulted left as it is (not known). None where the text does not parse."""
    import yaml

    from donegate.seal.ci_runs import _load

    data = _load(text)
    if not isinstance(data, dict):
        return text if data is not None else None
    if not all(_bounded(v) for v in (data, *given.values())):
        return None  # (aliases nested past NODES, or one that holds itself: read as a text that does not parse)
    on = data.get("on", data.get(True))
    call = on.get("workflow_call") if isinstance(on, dict) else None
    declared = call.get("inputs") if isinstance(call, dict) else None
    values = {str(k): v["default"] for k, v in (declared or {}).items() if isinstance(v, dict) and "default" in v} \
        if isinstance(declared, dict) else {}
    values.update(given)
    if not values:
        return text

    def literal(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        return "'" + str(v).replace("'", "''") + "'"

    names = "|".join(re.escape(k) for k in sorted(values, key=len, reverse=True))
    token = re.compile(rf"\binputs\.({names})(?![\w-])")

    def expression(s: str) -> str:
        return token.sub(lambda m: literal(values[m.group(1)]), s)

    def put(node: Any, key: Any = None) -> Any:
        if isinstance(node, dict):
            return {k: put(v, k) for k, v in node.items()}
        if isinstance(node, list):
            return [put(v) for v in node]
        if not isinstance(node, str) or "inputs." not in node:
            return node
        if key == "if":
            return expression(node)
        whole = re.compile(rf"\$\{{\{{\s*inputs\.({names})\s*\}}\}}")
        node = whole.sub(lambda m: str(values[m.group(1)]) if isinstance(values[m.group(1)], str)
                         else literal(values[m.group(1)]), node)  # (a script's text: the value itself)
        return re.sub(r"\$\{\{.*?\}\}", lambda m: expression(m.group(0)), node, flags=re.S)

    return yaml.safe_dump(put(data), sort_keys=False)


def inlined(current: dict[str, str | None], sealed: dict[str, str | None],
            flows: dict[str, tuple[str | None, str | None]]) -> dict[str, str | None]:
    """`current` ({workflow: its text now}) with each job that now calls a workflow of the repository it did not call
    at the seal (`uses: ./.github/workflows/tests.yml`: its test steps moved there, a matrix put on the call) given the
    called workflow's jobs in its place, read with the inputs it gives (`with:`, `_given`), its own `if:`, `needs:`,
    `strategy:` and `continue-on-error` kept: the caller's test steps are the called one's, as GitHub runs them. A
    call there at the seal is read by `findings`; a called workflow that does not read leaves the job as it is."""
    import copy

    import yaml

    from donegate.seal.ci_runs import _load

    out = dict(current)
    for name, text in current.items():
        data, then = _load(text), _jobs(_load(sealed.get(name)))
        jobs = _jobs(data)
        new = {j: c for j, b in jobs.items() if (c := _called(b)) in flows and _called(then.get(j)) != c}
        if not new or not isinstance(data, dict):
            continue
        data = copy.deepcopy(data)
        for job, called in new.items():
            body = data["jobs"][job]
            given = _load(_given(flows[called][1], _with(body)))
            parts = _jobs(given)
            if not parts:
                continue
            keep = {k: v for k, v in body.items() if k in ("if", "needs", "strategy", "continue-on-error")}
            for i, (sub, inner) in enumerate(parts.items()):
                data["jobs"][job if i == 0 else f"{job}/{sub}"] = {**inner, **keep}
        out[name] = yaml.safe_dump(data, sort_keys=False)
    return out

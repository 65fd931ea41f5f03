#!/usr/bin/env python3
"""Runs a GitHub Actions workflow's job here, step by step: the same commands, in the same order.

Usage: scripts/workflow-local.py WORKFLOW.yml [--job NAME] [--var NAME=VALUE]... [--dry-run]
                                 [--workdir DIR]
e.g.   scripts/workflow-local.py .github/workflows/rdma-testbed.yml \
         --var 'SYNCBENCH_OFI_TESTBEDS=[{"fabric": "local", "provider": "tcp;ofi_rxm"}]'

Why: a workflow that only ever runs on GitHub is checked only there. This reads the job from the
YAML file itself (so nothing is copied by hand and nothing can drift), and runs each `run:` step
with bash as the runner does (`bash -e {0}`), with the job's and the step's `env:`,
GITHUB_OUTPUT, GITHUB_ENV and GITHUB_STEP_SUMMARY files, `if:` conditions and `${{ }}`
expressions evaluated (vars, env, matrix, steps.<id>.outputs, success(), failure(), always(),
fromJSON(), toJSON(), ==, !=, &&, || and !), a job's `if:` and its `strategy.matrix` (keys,
include, exclude: one run per combination). Every job runs, in the file's order, unless
`--job` names one. The actions the workflows use are stood in for:

- actions/checkout: the job runs in a fresh clone of this checkout's HEAD (`--workdir`, default
  a temporary folder), as a runner's checkout is; uncommitted changes are not in it.
- actions/upload-artifact: copies the paths it names into <workdir>/../artifacts/<name>.

Any other action is refused (exit 2), so a new one is noticed. `sudo` is stood in for when
running as root without it. `runs-on` is printed, not checked: a self-hosted job's own checks
(a device, a lock) run as its steps say.

Exit status: 0 when every step that ran succeeded, 1 when one failed (the later steps of its job
run only where their `if:` asks for it, as on a runner), 2 on a usage error or a workflow this
cannot run (a `needs:`, services, a container, an action it cannot stand in for).
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import yaml
except ImportError:  # a fresh machine's python may lack PyYAML: a private venv with it
    venv = os.path.expanduser("~/.cache/syncbench/workflow-venv")
    python = os.path.join(venv, "bin", "python3")
    if os.path.realpath(sys.executable) == os.path.realpath(python):
        sys.exit("workflow-local: PyYAML did not install into " + venv)
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "pyyaml"], check=True)
    os.execv(python, [python] + sys.argv)


class WorkflowError(Exception):
    """A workflow this runner cannot run (an unknown action, a malformed expression)."""


# ---- expressions: ${{ ... }} and if: ---------------------------------------------------------

TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||!|\(|\)|,)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)*))"
)


def tokenize(text):
    pos, out = 0, []
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise WorkflowError(f"cannot read expression {text!r} at {text[pos:]!r}")
        pos = m.end()
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
    return out


class Expr:
    """GitHub's expression language, the part these workflows use, with its falsy rules."""

    def __init__(self, text, context, status):
        self.tokens = tokenize(text)
        self.i = 0
        self.context = context
        self.status = status
        self.text = text

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else (None, None)

    def take(self, value=None):
        tok = self.peek()
        if tok[0] is None or (value is not None and tok[1] != value):
            raise WorkflowError(f"expression {self.text!r}: expected {value or 'more'}")
        self.i += 1
        return tok

    def value(self):
        v = self.or_()
        if self.i != len(self.tokens):
            raise WorkflowError(f"expression {self.text!r}: unexpected {self.peek()[1]!r}")
        return v

    def or_(self):
        v = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            rhs = self.and_()
            v = v if truthy(v) else rhs
        return v

    def and_(self):
        v = self.cmp()
        while self.peek() == ("op", "&&"):
            self.take()
            rhs = self.cmp()
            v = rhs if truthy(v) else v
        return v

    def cmp(self):
        v = self.unary()
        while self.peek() in (("op", "=="), ("op", "!=")):
            op = self.take()[1]
            rhs = self.unary()
            eq = str(v).lower() == str(rhs).lower() if isinstance(v, str) and isinstance(rhs, str) else v == rhs
            v = eq if op == "==" else not eq
        return v

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.atom()

    def atom(self):
        kind, text = self.take()
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text)
        if kind == "op" and text == "(":
            v = self.or_()
            self.take(")")
            return v
        if kind == "name":
            if self.peek() == ("op", "("):
                self.take("(")
                argv = []
                while self.peek() != ("op", ")"):
                    argv.append(self.or_())
                    if self.peek() == ("op", ","):
                        self.take(",")
                self.take(")")
                if text == "fromJSON" and len(argv) == 1:
                    try:
                        return json.loads(str(argv[0]))
                    except ValueError as e:
                        raise WorkflowError(f"expression {self.text!r}: fromJSON: {e}")
                if text == "toJSON" and len(argv) == 1:
                    return json.dumps(argv[0])
                if argv:
                    raise WorkflowError(f"expression {self.text!r}: {text}() takes no arguments here")
                if text == "always":
                    return True
                if text == "success":
                    return self.status == "success"
                if text == "failure":
                    return self.status == "failure"
                if text == "cancelled":
                    return False
                raise WorkflowError(f"expression {self.text!r}: function {text}() is not supported")
            if text in ("true", "false"):
                return text == "true"
            if text == "null":
                return None
            node = self.context
            for part in text.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            return "" if node is None else node
        raise WorkflowError(f"expression {self.text!r}: unexpected {text!r}")


def truthy(v):
    return v not in (None, False, "", 0, 0.0)


def evaluate(text, context, status):
    return Expr(text, context, status).value()


def substitute(text, context, status):
    """Replaces every ${{ expr }} in a string with its value, as the runner does before a step runs."""

    def one(m):
        v = evaluate(m.group(1), context, status)
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        return "" if v is None else str(v)

    return re.sub(r"\$\{\{(.*?)\}\}", one, str(text), flags=re.S)


def condition(step_if, context, status):
    """A step's if: without a status function is ANDed with success(), as on GitHub."""
    if step_if is None:
        return status == "success"
    text = str(step_if).strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    if not re.search(r"\b(always|success|failure|cancelled)\s*\(", text):
        text = f"success() && ({text})"
    return truthy(evaluate(text, context, status))


# ---- files the runner passes to steps -----------------------------------------------------

def read_kv_file(path):
    """GITHUB_OUTPUT / GITHUB_ENV: NAME=value lines and NAME<<DELIM heredocs."""
    out = {}
    if not os.path.exists(path):
        return out
    lines = open(path, encoding="utf-8").read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body = []
            i += 1
            while i < len(lines) and lines[i] != delim:
                body.append(lines[i])
                i += 1
            out[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
        i += 1
    return out


# ---- the stand-ins for actions -------------------------------------------------------------

def action_checkout(step, work, source):
    if os.path.exists(os.path.join(work, ".git")):
        return 0
    print(f"    (checkout: a fresh clone of {source}'s HEAD into {work})")
    return subprocess.run(["git", "clone", "-q", source, work]).returncode


def action_upload_artifact(step, work, source, context, status):
    w = step.get("with") or {}
    name = substitute(w.get("name", "artifact"), context, status)
    dest = os.path.join(os.path.dirname(os.path.abspath(work)), "artifacts", name)
    os.makedirs(dest, exist_ok=True)
    copied = 0
    for p in str(substitute(w.get("path", ""), context, status)).split():
        src = os.path.join(work, p)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dest, p.rstrip("/")), dirs_exist_ok=True)
            copied += 1
        elif os.path.isfile(src):
            shutil.copy2(src, dest)
            copied += 1
    print(f"    (upload-artifact: {copied} paths copied to {dest})")
    return 0


ACTIONS = {
    "actions/checkout": action_checkout,
}


# ---- the job ------------------------------------------------------------------------------

def matrix_instances(job, context):
    """The job's matrix combinations (each a dict for `matrix`), [{}] without a matrix."""
    strategy = job.get("strategy") or {}
    matrix = strategy.get("matrix")
    if matrix is None:
        return [{}]
    if isinstance(matrix, str):
        matrix = evaluate_whole(matrix, context)
    if not isinstance(matrix, dict):
        raise WorkflowError(f"strategy.matrix is not a mapping: {matrix!r}")
    include = matrix.get("include", [])
    if isinstance(include, str):
        include = evaluate_whole(include, context)
    exclude = matrix.get("exclude", [])
    keys = [k for k in matrix if k not in ("include", "exclude")]
    combos = [{}]
    for k in keys:
        values = matrix[k]
        if isinstance(values, str):
            values = evaluate_whole(values, context)
        combos = [dict(c, **{k: v}) for c in combos for v in values]
    combos = [c for c in combos if not any(all(c.get(k) == v for k, v in e.items()) for e in exclude)]
    if keys:
        for extra in include:
            hit = [c for c in combos if all(c.get(k) == extra[k] for k in keys if k in extra)]
            for c in hit:
                c.update(extra)
            if not hit:
                combos.append(dict(extra))
    else:
        combos = [dict(e) for e in include]
    return combos


def evaluate_whole(text, context):
    """A value that is one ${{ }} expression (a matrix from fromJSON), evaluated."""
    text = str(text).strip()
    if not (text.startswith("${{") and text.endswith("}}")):
        raise WorkflowError(f"expected one expression, got {text!r}")
    return evaluate(text[3:-2], context, "success")


def run_job(args, doc, job_name, job, matrix, variables, source, work):
    """Runs one job (one matrix combination); returns 'passed', 'failed' or 'skipped'."""
    runner = os.path.join(os.path.dirname(work), "runner")
    os.makedirs(runner, exist_ok=True)
    summary = os.path.join(runner, "step-summary.md")
    open(summary, "a").close()
    shim = os.path.join(runner, "bin")
    os.makedirs(shim, exist_ok=True)
    if shutil.which("sudo") is None and os.geteuid() == 0:
        with open(os.path.join(shim, "sudo"), "w") as f:
            f.write('#!/bin/sh\n# workflow-local: root without sudo\nexec "$@"\n')
        os.chmod(os.path.join(shim, "sudo"), 0o755)

    env_job = {}
    context = {"vars": variables, "env": env_job, "steps": {}, "matrix": matrix,
               "github": {"workspace": work}}
    for k, v in (doc.get("env") or {}).items():
        env_job[k] = substitute(v, context, "success")
    for k, v in (job.get("env") or {}).items():
        env_job[k] = substitute(v, context, "success")
    title = substitute(job.get("name", job_name), context, "success")
    runs_on = substitute(job.get("runs-on"), context, "success")
    print(f"workflow-local: {args.workflow}, job {job_name} ({title}; runs-on {runs_on}), checkout at {work}")

    status = "success"
    failed = []
    for n, step in enumerate(job.get("steps") or [], 1):
        name = step.get("name") or step.get("uses") or (step.get("run") or "").splitlines()[0]
        if not condition(step.get("if"), context, status):
            print(f"== step {n}: {name}: skipped (if: {step.get('if', 'success()')})")
            continue
        step_env = dict(env_job)
        for k, v in (step.get("env") or {}).items():
            step_env[k] = substitute(v, context, status)
        context["env"] = step_env
        started = time.time()
        print(f"== step {n}: {name}", flush=True)
        if "uses" in step:
            action = str(step["uses"]).split("@")[0]
            if args.dry_run:
                print(f"    uses {step['uses']}")
                code = action_checkout(step, work, source) if action == "actions/checkout" else 0
            elif action == "actions/upload-artifact":
                code = action_upload_artifact(step, work, source, context, status)
            elif action in ACTIONS:
                code = ACTIONS[action](step, work, source)
            else:
                raise WorkflowError(f"step {n} uses {step['uses']}, which this runner cannot stand in for")
        else:
            script = substitute(step["run"], context, status)
            if args.dry_run:
                print("    " + script.rstrip().replace("\n", "\n    "))
                code = 0
            else:
                out_file = os.path.join(runner, f"output-{n}")
                env_file = os.path.join(runner, f"env-{n}")
                open(out_file, "w").close()
                open(env_file, "w").close()
                env = dict(os.environ)
                env.update({k: str(v) for k, v in step_env.items()})
                env.update({"CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": work,
                            "GITHUB_OUTPUT": out_file, "GITHUB_ENV": env_file,
                            "GITHUB_STEP_SUMMARY": summary,
                            "PATH": shim + os.pathsep + env.get("PATH", "")})
                script_file = os.path.join(runner, f"step-{n}.sh")
                with open(script_file, "w") as f:
                    f.write(script)
                cwd = os.path.join(work, step.get("working-directory", "."))
                code = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script_file],
                                      cwd=cwd, env=env).returncode
                if "id" in step:
                    context["steps"][step["id"]] = {"outputs": read_kv_file(out_file),
                                                    "outcome": "success" if code == 0 else "failure"}
                env_job.update(read_kv_file(env_file))
        took = time.time() - started
        if code != 0:
            status = "failure"
            failed.append(f"step {n} ({name}): exit {code}")
            print(f"== step {n}: failed, exit {code}, after {took:.0f} s")
        else:
            print(f"== step {n}: done in {took:.0f} s")
    if os.path.getsize(summary):
        print(f"workflow-local: step summary ({summary}):")
        print(open(summary, encoding="utf-8").read().rstrip())
    if failed:
        print(f"workflow-local: job {job_name} FAILED: " + "; ".join(failed))
        return "failed"
    print(f"workflow-local: job {job_name} passed")
    return "passed"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workflow", help="a workflow file, e.g. .github/workflows/ci.yml")
    ap.add_argument("--job", help="the job to run (default: every job, in the file's order)")
    ap.add_argument("--var", action="append", default=[], help="a repository variable NAME=VALUE (vars.NAME)")
    ap.add_argument("--workdir", help="where the checkout goes (default: a new temporary folder); "
                    "each further job or matrix combination gets its own beside it")
    ap.add_argument("--dry-run", action="store_true", help="print each step's commands, run nothing")
    args = ap.parse_args()

    try:
        doc = yaml.safe_load(open(args.workflow, encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        print(f"workflow-local: cannot read {args.workflow}: {e}", file=sys.stderr)
        return 2
    jobs = (doc or {}).get("jobs") or {}
    if args.job is not None and args.job not in jobs:
        print(f"workflow-local: {args.workflow} has no job {args.job!r} (it has {sorted(jobs)})", file=sys.stderr)
        return 2
    variables = {}
    for kv in args.var:
        if "=" not in kv:
            print(f"workflow-local: --var {kv!r} is not NAME=VALUE", file=sys.stderr)
            return 2
        k, v = kv.split("=", 1)
        variables[k] = v
    source = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.abspath(args.workflow))).stdout.strip()
    base = os.path.abspath(args.workdir or os.path.join(tempfile.mkdtemp(prefix="workflow-local-"), "repo"))
    outcomes = []
    for job_name, job in jobs.items():
        if args.job is not None and job_name != args.job:
            continue
        if "services" in job or "container" in job or "needs" in job:
            print(f"workflow-local: job {job_name!r} uses services, a container or needs: not supported", file=sys.stderr)
            return 2
        pre = {"vars": variables, "env": {}, "steps": {}, "github": {}}
        if "if" in job and not condition(job["if"], pre, "success"):
            print(f"workflow-local: job {job_name}: skipped (if: {job['if']})")
            outcomes.append((job_name, "skipped"))
            continue
        instances = matrix_instances(job, pre)
        if not instances:
            print(f"workflow-local: job {job_name}: an empty matrix, nothing to run")
            outcomes.append((job_name, "skipped"))
        for matrix in instances:
            k = len(outcomes)
            work = base if k == 0 else os.path.join(os.path.dirname(base) + f"-{k}", "repo")
            label = job_name + (" " + json.dumps(matrix, sort_keys=True) if matrix else "")
            outcomes.append((label, run_job(args, doc, job_name, job, matrix, variables, source, work)))
    print("workflow-local: " + "; ".join(f"{name}: {o}" for name, o in outcomes))
    return 1 if any(o == "failed" for _, o in outcomes) else 0


if __name__ == "__main__":
    # a reader that stops early (| head) ends us quietly, as it ends a shell command
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        sys.exit(main())
    except WorkflowError as e:
        print(f"workflow-local: {e}", file=sys.stderr)
        sys.exit(2)

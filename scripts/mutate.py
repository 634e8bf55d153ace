#!/usr/bin/env python3
"""C++ mutation runner (see docs/TESTING.md, "C++ mutation runner"; driven by scripts/mutate.sh).

Each mutant in tests/mutants/*.txt is one realistic bug: a file, an exact text that must occur
exactly once, its replacement and the promise it breaks. The runner applies it to a private copy
of the source tree (build-mutate/src; the developer's files are never written, even if the runner
is killed), rebuilds incrementally in build-mutate/obj, and runs the tests until the first failure:
the mutant's hinted tests, then every unit binary, then the integration suite file by file.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "build-mutate"
SRC = WORK / "src"        # the runner's copy of the tree; mutants are applied here
OBJ = WORK / "obj"        # its build folder (never the developer's build/)
UNIT_BINARIES = ["support_tests", "acp_tests", "bridge_tests", "runtime_tests"]
LOCK = os.environ.get("OPENVAALA_BUILD_LOCK", "/tmp/cxx-build.lock")
UNIT_TIMEOUT = int(os.environ.get("MUTATE_UNIT_TIMEOUT", "300"))
ITEST_TIMEOUT = int(os.environ.get("MUTATE_ITEST_TIMEOUT", "420"))


@dataclass
class Mutant:
    id: str
    module: str
    file: str
    find: str
    replace: str
    promise: str
    unit: list = field(default_factory=list)    # [(binary, gtest filter)]
    itest: list = field(default_factory=list)   # integration test files, e.g. cancel.test.mjs
    origin: str = ""
    earlier: bool = False   # one of the six mutants of the earlier round (run first)


# ------------------------------------------------------------------------------------------
# the mutant list
# ------------------------------------------------------------------------------------------

def parse_mutants(paths):
    """Blocks of `key: value` lines separated by blank lines. `find:`/`replace:` may repeat: the
    lines are joined with newlines (a multi-line pattern). Values are taken literally."""
    mutants = []
    for path in paths:
        module = path.stem
        block, start = {}, 0
        lines = path.read_text().splitlines() + [""]
        for no, line in enumerate(lines, 1):
            if line.startswith("#"):
                continue
            if not line.strip():
                if block:
                    mutants.append(make_mutant(block, module, f"{path.name}:{start}"))
                block = {}
                continue
            m = re.match(r"^(\w+):( ?)(.*)$", line)
            if not m:
                sys.exit(f"{path}:{no}: expected `key: value`, got {line!r}")
            if not block:
                start = no
            block.setdefault(m.group(1), []).append(m.group(3))
    ids = [m.id for m in mutants]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        sys.exit(f"duplicate mutant ids: {', '.join(sorted(dupes))}")
    return mutants


def make_mutant(block, module, origin):
    for key in ("id", "file", "find", "replace", "promise"):
        if key not in block:
            sys.exit(f"{origin}: mutant without `{key}:`")
    unit = []
    for spec in block.get("unit", []):
        binary, _, flt = spec.partition(" ")
        if binary not in UNIT_BINARIES:
            sys.exit(f"{origin}: unknown unit binary {binary!r}")
        unit.append((binary, flt.strip() or "*"))
    itest = [f for spec in block.get("itest", []) for f in spec.split()]
    return Mutant(id=block["id"][0], module=module, file=block["file"][0],
                  find="\n".join(block["find"]), replace="\n".join(block["replace"]),
                  promise=" ".join(block["promise"]), unit=unit, itest=itest, origin=origin,
                  earlier="earlier" in block.get("tag", []))


# ------------------------------------------------------------------------------------------
# the private source copy and its build
# ------------------------------------------------------------------------------------------

def tracked_files():
    out = subprocess.run(["git", "-C", str(REPO), "ls-files", "-co", "--exclude-standard", "-z"],
                         check=True, capture_output=True).stdout
    return [f for f in out.decode().split("\0") if f and (REPO / f).is_file()]


def sync_copy():
    """Makes build-mutate/src equal to the developer's tree (tracked and untracked, not ignored),
    copying only changed files so the incremental build stays incremental."""
    files = tracked_files()
    wanted = set(files)
    for rel in files:
        src, dst = REPO / rel, SRC / rel
        if dst.is_file() and dst.read_bytes() == src.read_bytes():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        # A fresh mtime, not the source's: a copy that undoes a mutant left by a killed run must
        # be newer than the mutated object file, or make keeps the mutant in the build.
        shutil.copy(src, dst)
    for dst in list(SRC.rglob("*")):
        rel = dst.relative_to(SRC).as_posix()
        if dst.is_file() and not dst.is_symlink() and rel not in wanted and not rel.startswith("node_modules"):
            dst.unlink()
    for nm in ("node_modules", "editor-extensions/vscode/node_modules"):
        link, target = SRC / nm, (REPO / nm).resolve()
        if target.is_dir() and not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(target)


def build_env():
    env = dict(os.environ)
    env.setdefault("CCACHE_BASEDIR", "/work")
    env.setdefault("CCACHE_DIR", "/work/.ccache")
    return env


def configure():
    if (OBJ / "CMakeCache.txt").exists():
        return
    cmd = ["cmake", "-S", str(SRC), "-B", str(OBJ), "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
           "-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld"]
    if shutil.which("ccache"):  # a new machine has none (scripts/install-deps.sh does not install it)
        cmd.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    subprocess.run(cmd, check=True, env=build_env(), stdout=subprocess.DEVNULL)


def build(targets, log):
    """One build under the machine-wide build lock, at low priority. True when it succeeded."""
    cmd = ["flock", LOCK, "nice", "-n", "10", "cmake", "--build", str(OBJ), "-j2"]
    for t in targets:
        cmd += ["--target", t]
    with open(log, "a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        return subprocess.run(cmd, env=build_env(), stdout=out, stderr=subprocess.STDOUT).returncode == 0


def unit_binary(name):
    return OBJ / "tests" / name


# ------------------------------------------------------------------------------------------
# tests
# ------------------------------------------------------------------------------------------

def run_test(cmd, timeout, log, cwd=None):
    """'pass', 'fail' or 'timeout'. The command runs in its own process group, killed whole."""
    env = dict(os.environ)
    env["OPENVAALA_BIN"] = str(OBJ / "openvaala")
    env["MCP_PROBE_BIN"] = str(OBJ / "mcp_probe")
    with open(log, "a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, cwd=cwd or SRC, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return "timeout"
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)   # leftovers of a killed test
            except ProcessLookupError:
                pass
    return "pass" if rc == 0 else "fail"


def node_cmd(test_file):
    return ["sh", "-c", '. scripts/node-env.sh; exec node --test --test-concurrency=1 "$0"',
            f"tests/integration/{test_file}"]


def integration_files():
    return sorted(p.name for p in (SRC / "tests" / "integration").glob("*.test.mjs"))


def hinted_steps(m):
    """The mutant's own hints: fast to build (only those targets) and likely to kill it."""
    steps = [(f"{b} {flt}", [str(unit_binary(b)), f"--gtest_filter={flt}"], UNIT_TIMEOUT, {b})
             for b, flt in m.unit]
    # The MCP probe (it links the whole runtime) only for the test that drives it.
    steps += [(f"integration {f}", node_cmd(f), ITEST_TIMEOUT,
               {"openvaala", "mcp_probe"} if f == "mcp.test.mjs" else {"openvaala"})
              for f in m.itest]
    return steps


def full_steps(m):
    """Every unit binary, then the integration files one by one (the hinted ones already ran)."""
    steps = [(b, [str(unit_binary(b))], UNIT_TIMEOUT) for b in UNIT_BINARIES]
    steps += [(f"integration {f}", node_cmd(f), ITEST_TIMEOUT)
              for f in integration_files() if f not in m.itest]
    return steps


def run_steps(steps, log):
    """(status, step) of the first step that does not pass, or None."""
    for name, cmd, timeout, *_ in steps:
        result = run_test(cmd, timeout, log)
        if result == "fail":
            return "killed", name
        if result == "timeout":
            return "timeout", name
    return None


def run_mutant(m, log):
    """Returns (status, detail): killed / survived / timeout / unmatched / invalid."""
    path = SRC / m.file
    if not path.is_file():
        return "unmatched", "file is gone"
    original = path.read_text()
    count = original.count(m.find)
    if count != 1:
        return "unmatched", f"pattern occurs {count} times"
    path.write_text(original.replace(m.find, m.replace))
    try:
        hinted = hinted_steps(m)
        if hinted:
            targets = sorted(set().union(*(needs for *_, needs in hinted)))
            if not build(targets, log):
                return "invalid", "does not compile"
            outcome = run_steps(hinted, log)
            if outcome:
                return outcome
        if not build([], log):
            return "invalid", "does not compile"
        return run_steps(full_steps(m), log) or ("survived", "")
    finally:
        path.write_text(original)


# ------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------

def spread(mutants):
    """Round robin over the modules, so a run stopped early has still tried every module."""
    first = [m for m in mutants if m.earlier]
    by_module = {}
    for m in mutants:
        if m.earlier:
            continue
        by_module.setdefault(m.module, []).append(m)
    queues = list(by_module.values())
    out = first
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def select(mutants, args):
    chosen = spread(mutants)
    if args.ids:
        want = set(args.ids)
        chosen = [m for m in chosen if m.id in want or m.module in want]
        unknown = want - {m.id for m in chosen} - {m.module for m in chosen}
        if unknown:
            sys.exit(f"no mutant or module named: {', '.join(sorted(unknown))}")
    return chosen


def main():
    # SIGTERM/SIGHUP unwind like Ctrl-C, so `finally` puts the mutated file back.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(130))
    ap = argparse.ArgumentParser(description="Runs the C++ mutants of tests/mutants/*.txt.")
    ap.add_argument("ids", nargs="*", help="mutant ids or module names (default: all)")
    ap.add_argument("--list", action="store_true", help="list the mutants and whether each matches")
    ap.add_argument("--baseline", action="store_true",
                    help="run the tests (or, with ids, the hinted tests) on the unmutated tree and stop")
    ap.add_argument("--results", default=str(WORK / "results.txt"), help="where to write the results")
    args = ap.parse_args()

    mutants = parse_mutants(sorted((REPO / "tests" / "mutants").glob("*.txt")))
    chosen = select(mutants, args)
    if args.list:
        for m in chosen:
            text = (REPO / m.file).read_text() if (REPO / m.file).is_file() else ""
            n = text.count(m.find)
            print(f"{m.module:12} {m.id:44} {'ok' if n == 1 else f'MATCHES {n}x'}  {m.file}")
        print(f"{len(chosen)} mutants")
        return 0

    WORK.mkdir(exist_ok=True)
    SRC.mkdir(exist_ok=True)
    sync_copy()
    configure()
    logs = WORK / "logs"
    logs.mkdir(exist_ok=True)
    print(f"mutate: {len(chosen)} mutants; copy {SRC}, build {OBJ}; baseline build ...", flush=True)
    if not build([], logs / "baseline.log"):
        sys.exit(f"mutate: the unmutated tree does not build (see {logs / 'baseline.log'})")

    if args.baseline:
        return run_baseline(chosen if args.ids else [], logs / "baseline.log")

    results = Path(args.results)
    counts = {k: 0 for k in ("killed", "survived", "timeout", "unmatched", "invalid")}
    started = time.time()
    with open(results, "w") as out:
        out.write(f"# mutate {time.strftime('%Y-%m-%d %H:%M')} {git_describe()}\n")
        for i, m in enumerate(chosen, 1):
            t0 = time.time()
            log = logs / f"{m.id}.log"
            log.write_text("")
            status, detail = run_mutant(m, log)
            counts[status] += 1
            line = f"{status:9} {m.id:44} {time.time() - t0:5.0f}s  {detail}"
            print(f"[{i}/{len(chosen)}] {line}", flush=True)
            out.write(line + (f"  | {m.promise}" if status == "survived" else "") + "\n")
            out.flush()
        summary = summary_line(counts, time.time() - started)
        out.write(summary + "\n")
    print(summary)
    print(f"mutate: results in {results}, logs in {logs}")
    return 0


def run_baseline(mutants, log):
    """The unmutated tree must pass what would kill a mutant, or every mutant counts as killed."""
    steps = [s for m in mutants for s in hinted_steps(m)] or full_steps(Mutant("", "", "", "", "", ""))
    seen = set()
    for name, cmd, timeout, *_ in steps:
        if name in seen:
            continue
        seen.add(name)
        result = run_test(cmd, timeout, log)
        print(f"baseline {result:8} {name}", flush=True)
        if result != "pass":
            print(f"mutate: the unmutated tree fails {name} (see {log})")
            return 1
    return 0


def summary_line(c, seconds):
    detected = c["killed"] + c["timeout"]
    scored = detected + c["survived"]
    pct = lambda n: f"{100.0 * n / scored:.1f}%" if scored else "n/a"
    return (f"killed {c['killed']}, survived {c['survived']}, timed out {c['timeout']}, "
            f"no longer matching {c['unmatched']}, not compiling {c['invalid']}; "
            f"score killed / (killed + survived + timed out) = {pct(c['killed'])}, "
            f"counting timeouts as killed {pct(detected)}; {seconds / 60:.0f} min")


def git_describe():
    r = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain"], capture_output=True, text=True)
    return r.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


if __name__ == "__main__":
    sys.exit(main())

"""Run every hostile probe through the real ``scenarist`` CLI and say which fail.

    python bench/hostile/run.py [--only TEXT] [--keep DIR] [--bomb-mib 1024]

Starts bench/hostile/server.py (its own process, on 127.0.0.1), writes the corpus
(bench/hostile/corpus.py) into a temporary folder, and runs each probe's command in a new
process, one at a time, with its address space capped at 2 GiB (a runaway probe fails
instead of taking the machine). A full disk is simulated with RLIMIT_FSIZE (writes past
64 KiB fail), never with a device: nothing outside the corpus folder is written. A probe
**fails** when:

* a traceback reaches its output (``Traceback (most recent call last)``);
* its exit code is not one ``scenarist`` documents (0, 1, 2, 3, 130), or a signal ended it;
* its peak memory (``ru_maxrss`` from ``wait4``) passes 1 GiB;
* it runs past its timeout (60 s unless the probe says otherwise);
* what the probe expects does not hold (a run ended without its summary — an *aborted*
  run — an attempt recorded without the error kind its reply deserves, a secret written,
  a file that should have been refused...).

Prints one line per probe and the totals, failures grouped by owner: ``edge`` (endpoint
replies and the author's files) and ``run`` (the run stage). Exits 1 when a probe failed.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import Probe, Result, cli, probes  # noqa: E402

EXIT_CODES = {0, 1, 2, 3, 130}
MAX_RSS_MIB = 1024
ADDRESS_SPACE = 2 * 2**30


def _limits(fsize: int | None) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        os.setsid()  # its own process group: a timeout ends it and its children
    return apply


def run_command(argv: list[str], cwd: Path, timeout_s: float,
                env: dict[str, str] | None = None, fsize: int | None = None) -> Result:
    """One scenarist command in a new process: its exit, output, peak memory, time."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        proc = subprocess.Popen([*cli(), *argv], cwd=cwd, stdout=out_f, stderr=err_f,
                                stdin=subprocess.DEVNULL, preexec_fn=_limits(fsize),
                                env={**os.environ, "NO_COLOR": "1", **(env or {})})
        code: int | None = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() - started > timeout_s:
                os.killpg(proc.pid, signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = code if code is not None else -9
        out_f.seek(0)
        err_f.seek(0)
        stdout = out_f.read().decode("utf-8", "replace")
        stderr = err_f.read().decode("utf-8", "replace")
    return Result(code, stdout, stderr, usage.ru_maxrss / 1024, time.monotonic() - started,
                  cwd)


def judge(probe: Probe, results: list[Result], problem: str | None) -> list[str]:
    """Everything wrong with a probe's commands (empty: it passed)."""
    wrong = []
    for r in results:
        if r.code is None:
            wrong.append(f"timeout after {r.seconds:.0f} s")
            continue
        if "Traceback (most recent call last)" in r.output:
            last = [x for x in r.output.splitlines() if x.strip()][-1]
            wrong.append(f"traceback: {last[:120]}")
        if r.code not in EXIT_CODES:
            wrong.append(f"exit code {r.code}" + (" (a signal)" if r.code < 0 else ""))
        if r.max_rss_mib > MAX_RSS_MIB:
            wrong.append(f"peak memory {r.max_rss_mib:,.0f} MiB")
    if not wrong and problem:
        wrong.append(problem)
    return wrong


def start_server(bomb_mib: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(HERE / "server.py"), "--port", "0",
                             "--bomb-mib", str(bomb_mib)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise SystemExit(f"the hostile server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{line.split()[1]}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="run only the probes whose name holds this text")
    ap.add_argument("--keep", type=Path, help="write the corpus here and keep it")
    ap.add_argument("--bomb-mib", type=int, default=1024,
                    help="decoded size of the gzip and deflate bombs (default 1024)")
    a = ap.parse_args(argv)
    server, url = start_server(a.bomb_mib)
    root = a.keep or Path(tempfile.mkdtemp(prefix="scenarist-hostile-"))
    if a.keep and root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    failed: list[tuple[Probe, list[str]]] = []
    aborted = 0
    peak = 0.0
    try:
        corpus = [p for p in probes(root, url) if not a.only or a.only in p.name]
        print(f"{len(corpus)} probes against {url}; corpus in {root}\n")
        width = max(len(p.name) for p in corpus)
        for p in corpus:
            if p.custom is not None:
                results, problem = p.custom(
                    lambda av, cwd, t, p=p, fsize=None: run_command(av, cwd, t, p.env, fsize))
            else:
                r = run_command(p.argv, p.cwd, p.timeout_s, p.env, p.fsize)
                results, problem = [r], (p.expect(r) if p.expect and r.code is not None
                                         else None)
            wrong = judge(p, results, problem)
            rss = max(r.max_rss_mib for r in results)
            peak = max(peak, rss)
            secs = sum(r.seconds for r in results)
            if problem and problem.startswith("aborted"):
                aborted += 1
            mark = "FAIL" if wrong else "ok  "
            print(f"{mark} {p.name:<{width}}  {rss:6.0f} MiB {secs:5.1f} s  [{p.owner}] "
                  + ("; ".join(wrong)), flush=True)
            if wrong:
                failed.append((p, wrong))
    finally:
        server.terminate()
        server.wait(timeout=10)
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"\n{len(corpus)} probes, {len(failed)} failures, {aborted} aborted runs, peak "
          f"memory {peak:,.0f} MiB")
    for owner in ("edge", "run"):
        mine = [(p, w) for p, w in failed if p.owner == owner]
        if mine:
            print(f"\nfailing [{owner}] ({len(mine)}):")
            for p, w in mine:
                print(f"  {p.name} ({p.klass}): {'; '.join(w)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

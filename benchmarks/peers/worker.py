"""One contender in a process of its own: its imports, its memory and its CPU are its alone.

    python -m benchmarks.peers.worker SETTINGS_JSON     serve commands (one JSON line each)
    python -m benchmarks.peers.worker --imports NAME    print the seconds NAME's imports take

The orchestrator writes one command per line on stdin and reads one answer per line. The answers
go out on the process's original stdout; stdout itself is pointed at stderr, so whatever a library
prints cannot garble them. Commands:

- `turn`: one turn — its wall time, the process's CPU clock at its start (the orchestrator takes
  the CPU of a turn from one turn's start to the next: work a framework leaves for after the
  turn counts), the CPU inside it, the answer;
- `burst` (`turns`, `inflight`): that many turns with `inflight` of them running at once;
- `run` (`turns`): that many turns one after another, answering once, with the answers counted;
- `sample`: the resident set size after a full garbage collection;
- `trace` (`top`): start tracemalloc, or (with `top`) the lines whose memory grew most since;
- `stats`: the CPU clock and the peak resident set size.

Everything here that is not the contender's own work is done the same way for every contender,
outside the timed spans.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import json
import os
import resource
import sys
import time
import tracemalloc
from contextlib import AsyncExitStack
from typing import Any, TextIO

from benchmarks.peers.contenders import CONTENDERS, Contender, Runner, Settings
from benchmarks.peers.measure import rss_bytes


def describe(error: BaseException) -> str:
    """One line naming an error: the innermost of a group, its type and the start of its text."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:300] if text else ''}".rstrip(": ")


def time_imports(contender: Contender) -> float:
    started = time.perf_counter()
    exec(contender.imports, {})
    return time.perf_counter() - started


async def burst(runner: Runner, turns: int, inflight: int) -> dict[str, Any]:
    gate = asyncio.Semaphore(inflight)
    answers: collections.Counter[str] = collections.Counter()
    errors: collections.Counter[str] = collections.Counter()

    async def one() -> None:
        async with gate:
            try:
                answers[await runner.turn()] += 1
            except Exception as error:
                errors[describe(error)] += 1

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(turns)))
    return {"elapsed": time.perf_counter() - started, "answers": answers, "errors": errors}


async def sequential(runner: Runner, turns: int) -> dict[str, Any]:
    answers: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    for _ in range(turns):
        answers[await runner.turn()] += 1
    return {"elapsed": time.perf_counter() - started, "answers": answers}


async def command(runner: Runner, line: dict[str, Any], traced: list[Any]) -> dict[str, Any]:
    op = line["op"]
    if op == "turn":
        cpu, started = time.process_time(), time.perf_counter()
        answer = await runner.turn()
        return {"wall": time.perf_counter() - started, "cpu_start": cpu,
                "cpu": time.process_time() - cpu, "answer": answer}
    if op == "burst":
        return await burst(runner, line["turns"], line["inflight"])
    if op == "run":
        return await sequential(runner, line["turns"])
    if op == "sample":
        gc.collect()
        return {"rss": rss_bytes()}
    if op == "trace":
        return trace(line.get("top", 0), traced)
    if op == "stats":
        return {"cpu": time.process_time(),
                "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    raise ValueError(f"unknown command {op!r}")


def trace(top: int, traced: list[Any]) -> dict[str, Any]:
    gc.collect()
    if not top:
        tracemalloc.start(5)
        traced[:] = [tracemalloc.take_snapshot()]
        return {}
    grown = tracemalloc.take_snapshot().compare_to(traced[0], "traceback")[:top]
    return {"top": [f"{stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  "
                    + " <- ".join(f"{frame.filename.rsplit('/site-packages/', 1)[-1]}:"
                                  f"{frame.lineno}" for frame in stat.traceback[:3])
                    for stat in grown]}


async def serve(contender: Contender, settings: Settings, answers: TextIO,
                imports: float) -> None:
    def say(message: dict[str, Any]) -> None:
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    async with AsyncExitStack() as stack:
        runner = contender.runner(settings)
        started = time.perf_counter()
        try:
            await runner.start(stack)
        except Exception as error:
            say({"error": describe(error)})
            return
        say({"ready": True, "pid": os.getpid(), "imports": imports,
             "start": time.perf_counter() - started})
        traced: list[Any] = []
        while line := await reader.readline():
            message = json.loads(line)
            if message["op"] == "quit":
                break
            try:
                say(await command(runner, message, traced))
            except Exception as error:
                say({"error": describe(error)})


def main(argv: list[str]) -> None:
    if argv[0] == "--imports":
        print(json.dumps({"imports": time_imports(CONTENDERS[argv[1]])}), flush=True)
        return
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    given = json.loads(argv[0])
    contender = CONTENDERS[given.pop("contender")]
    try:
        imports = time_imports(contender)
    except Exception as error:  # a peer that is not installed is reported, not dropped
        answers.write(json.dumps({"error": describe(error)}) + "\n")
        answers.flush()
        return
    asyncio.run(serve(contender, Settings(**given), answers, imports))


if __name__ == "__main__":
    main(sys.argv[1:])

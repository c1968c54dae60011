"""Why a server launch or run failed: :class:`LaunchError` and :func:`classify_log`, the one place that
maps an exit status and a server log (or an HTTP error body) to a failure class. The patterns mirror
what SGLang prints: argparse's usage errors (exit 2), the AssertionError/TypeError/ValueError of its
argument handling (``server_args.py``, ``arg_groups/``), PyTorch's and SGLang's out-of-memory messages
(``model_executor/pool_configurator.py``: "Not enough memory", and an SWA pool that "leaves no room
for the full KV pool"), NCCL and torch.distributed errors,
and the draft-tree failure of ``eagle_utils.py`` ("selected index k out of range").

Where SGLang fails decides the class, not what it said along the way: the patterns are matched on
the last traceback and the log's final lines (:func:`failure_region`), never on the whole log, so a
harmless warning during loading (DeepGEMM's "... reducing max_m to X to avoid out of memory",
``layers/deep_gemm_wrapper/compile_utils.py``) cannot make a crash ``oom``.

The first rank to die is the cause, not the ranks that die of it: when one TP rank's scheduler dies
(``managers/scheduler.py``: "Scheduler hit an exception: Traceback ...", then SIGQUIT to the parent),
its peers, waiting on it in a collective, fail next with communication errors (gloo's "Connection
closed by peer" in a CPU-group barrier, TCPStore's "Broken pipe": sgl-project/sglang issues 4205 and
8336; scheduler.py's ``SGLANG_KILLPG_ON_SCHEDULER_EXCEPTION`` exists "so sibling ranks don't spew
thousands of NCCL/TCPStore tracebacks"), so the log's last traceback is a peer's. The first
subprocess's own record (:func:`first_subprocess_failure`) therefore decides the class and the error
line, whatever it died of (QA qa151: one rank out of memory at TP8 was ``nccl``, a class that rules out
no larger tree; QA qa165: one rank's illegal memory access was ``nccl``, quoting rank 0's store timeout),
except that an out-of-memory or draft-tree failure where the log ends is never overruled by a record
without one (:func:`deciding_region`).
"""

from __future__ import annotations

import re
import signal

from ..sglang.rules import TREE_TOO_LARGE_RUNTIME_ERROR

FAILURE_CLASSES = ("invalid_args", "oom", "nccl", "startup_timeout", "crash_after_ready",
                   "spec_runtime", "other")
PHASE_STARTUP = "startup"  #: before the server answered /health_generate
PHASE_RUNNING = "running"  #: after it did
LOG_TAIL_LINES = 30
#: The most characters a tail keeps of one line (its end): a log line can be megabytes long.
LOG_LINE_CHARS = 1000

# --------------------------------------------------------------------------------------------------
# Failure classification


class LaunchError(RuntimeError):
    """A server that did not start or did not survive. ``failure_class`` is one of
    :data:`FAILURE_CLASSES`; ``log_tail`` the server log's last lines; ``exit_code`` None while the
    process still ran (a timeout or an HTTP failure), negative for a signal."""

    def __init__(self, failure_class: str, message: str, log_tail: str = "",
                 exit_code: int | None = None):
        assert failure_class in FAILURE_CLASSES, failure_class
        self.failure_class, self.message, self.log_tail, self.exit_code = (
            failure_class, message, log_tail, exit_code)
        super().__init__(f"{failure_class}: {message}")

    def attributes(self) -> dict[str, str]:
        """What a trial stores: ``failure_class``, ``failure_message``, ``log_tail``."""
        return {"failure_class": self.failure_class, "failure_message": self.message,
                "log_tail": self.log_tail}


# Each pattern runs over whole logs, where one line may be megabytes (a progress bar redrawn with \r):
# no unanchored `\w+` and no `.*` before a choice, which rescan the line from every start (a 200 kB
# line took 90 s with "\w+ hit an exception"); repeats are word-bounded or capped instead.
_SPEC_RUNTIME = re.compile(re.escape(TREE_TOO_LARGE_RUNTIME_ERROR.split(": ", 1)[1]))
# pool_configurator.py: "Not enough memory", and an SWA model's "... leaves no room for the full KV pool
# within the available X GiB" (lines 1025-1030; DSV4, lines 1679-1685): the same shortage in other words.
# A line that avoids running out of memory says the opposite: DeepGEMM's warmup warning "... reducing
# max_m to X to avoid out of memory" (layers/deep_gemm_wrapper/compile_utils.py) is a server's last line
# while its JIT compile runs on, so a startup timeout there was ``oom`` (QA qa152), ruling out every
# larger tree for a slow compile.
# cuBLAS failing to allocate its handle or workspace on the GPU ("RuntimeError: CUDA error:
# CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", at a first matmul: the capture or a
# warmup, once the KV pool took the rest) is the same shortage: SGLang 0.5.23 counts it as out of memory
# (multimodal_gen/runtime/server_warmup.py line 124, _OUT_OF_MEMORY_MARKERS). QA (qa152): it was
# ``other``, fencing off no larger tree.
_OOM = re.compile(r"CUDA out of memory|OutOfMemoryError|Not enough memory"
                  r"|CUBLAS_STATUS_ALLOC_FAILED"
                  r"|(?<!avoid )(?<!prevent )\bout of memory\b|leaves no room for the full KV pool", re.I)
# gloo's TCP transport (torch.distributed's CPU group, which SGLang's barriers use) fails between ranks
# as "[.../gloo/transport/tcp/pair.cc:534] Connection closed by peer" or "[.../unbound_buffer.cc:133]
# Timed out waiting 1800000ms for send operation to complete" (sgl-project/sglang issues 4205 and 5883,
# inside "Exception: Capture cuda graph failed: ..."): communication errors, as NCCL's are. So are the
# failures to set the ranks' communication up (QA qa152: both were ``other``): torch.distributed's
# TCPStore, which SGLang's init_distributed_environment rendezvous through (distributed/bootstrap.py
# line 322, ``timeout=dist_timeout``), raising "torch.distributed.DistStoreError: Timed out after 601
# seconds waiting for clients. 1/2 clients joined." (sgl-project/sglang issue 507) or "DistStoreError:
# Socket Timeout"; and ProcessGroupNCCL's "[1] is setting up NCCL communicator and retrieving ncclUniqueId
# from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer"
# (a RuntimeError in older torch, spelt "retreiving" in the oldest; a DistBackendError in newer).
# DistNetworkError is not among them: its "failed to listen ... EADDRINUSE" is a port clash
# (tuner/server/ports.py), no communication between ranks.
_NCCL = re.compile(
    r"NCCL error|nccl\w{0,80}Error\b|DistBackendError|DistStoreError|ncclUniqueId\b"
    r"|NCCL communicator was aborted|NCCL timeout|gloo/transport/"
    r"|Watchdog caught collective operation timeout|ProcessGroupNCCL\S{0,80}\s.{0,400}?(?:timed? ?out|error)"
    r"|communication error", re.I)
_ARGPARSE = re.compile(r"^usage: |: error: (?:unrecognized arguments|argument |ambiguous option"
                       r"|the following arguments are required|invalid choice)", re.M)
# The line a traceback ends with: an exception class, dotted or not, then ":" or the line's end. Its
# name ends in Error or Exception, or is a bare Exception (SGLang 0.5.23 raises one for every failed
# CUDA-graph capture: ``raise Exception(f"Capture cuda graph failed: {e}\n...")``,
# model_executor/runner/decode_cuda_graph_runner.py line 602 and speculative/eagle_draft_cuda_graph_runner.py
# line 296), or one of the BaseExceptions that are no Exception (KeyboardInterrupt at Ctrl-C, SystemExit,
# GeneratorExit). Warnings (RuntimeWarning, ...) stop nothing and are no failure line. A library's
# exception named otherwise is a line too when Python prints it module-qualified (lower-case modules, a
# CamelCase class, then ": "): Triton's "triton.runtime.errors.OutOfResources: out of resource: shared
# memory, Required: 131072, Hardware limit: 65536. ..." (sgl-project/sglang issue 2384, a scheduler dead
# in its CUDA-graph capture), torch's "torch._dynamo.exc.BackendCompilerFailed: backend='inductor'
# raised: ..." (--enable-torch-compile). QA (qa160): the Triton line was passed over, the error line
# quoted SGLang's closing "kill_process_tree called: ...".
_EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception)|Exception|KeyboardInterrupt|SystemExit"
                             r"|GeneratorExit)(?::|$)"
                             r"|^(?:[a-z_]\w{0,80}\.){1,12}((?!\w*Warning\b)[A-Z]\w{0,80}): ", re.M)


def _exception_names(text: str) -> list[str]:
    """The exception class of every exception line (:data:`_EXCEPTION_LINE`) of ``text``, in order."""
    return [plain or qualified for plain, qualified in _EXCEPTION_LINE.findall(text)]
# SGLang's argument handling (server_args.py, arg_groups/) and argparse, and the simulator's copy of it
# (tuner/sim/args.py); a traceback through them is an argument error even after other log lines, and a
# traceback whose frames all lie elsewhere is none, whatever came before it. SGLang 0.5.23 loads the
# tokenizer in the launching process right after the schedulers start (entrypoints/engine.py
# _launch_subprocesses -> init_tokenizer_manager; managers/tokenizer_manager.py get_tokenizer), so its
# "ValueError: Tokenizer class Qwen2Tokenizer does not exist or is not currently imported." can be the
# only exception of a log with no loading line before it (--log-level warning). QA (qa160, qa165): it
# was ``invalid_args``, ruling out every larger tree.
_ARG_FRAMES = re.compile(r'File "[^"\n]*(?:server_args|arg_groups|argparse'
                         r'|tuner[/\\]sim[/\\]args\.py)[^"\n]*"')
_FRAME = re.compile(r'^\s*File "', re.M)
# Signs SGLang has passed argument handling: an exception after these is not an argument error unless
# its frames say so. SGLang 0.5.23 handles the arguments in the launching process (launch_server.py:
# prepare_server_args, resolve_once), then logs "Init parallel begin." (distributed/bootstrap.py line
# 115), "Load weight begin." (model_executor/model_runner.py line 1274) and "Capture ... CUDA graph
# begin." (model_runner_components/cuda_graph_setup.py line 685), all INFO: not logged under
# --log-level warning. A subprocess's "<Scheduler|TokenizerManager|...> hit an exception:" line
# (managers/scheduler.py line 6372) is ERROR, logged at every level, and only a running subprocess
# logs it. Older releases' "Init torch distributed begin" and "Capture cuda graph begin" are kept.
_LOADING = re.compile(r"Load weight begin|Loading safetensors|Init torch distributed begin|Init parallel begin"
                      r"|Capture cuda graph begin|Capture [\w ]{1,80} CUDA graph begin|\b\w+ hit an exception: ")
_ARG_EXCEPTIONS = ("AssertionError", "ValueError", "TypeError")
# Raised by SGLang 0.5.23's argument handling too, for settings this machine or this algorithm cannot
# run (arg_groups/kv_cache_hook.py line 128: "--kv-cache-dtype=nvfp4 requires Blackwell SM100 or
# SM120"; speculative_hook.py line 1216: rejection sampling with another algorithm than EAGLE), but
# also by everything else (no GPU, a CUDA error): an argument error only when its traceback goes
# through the argument handling.
_ARG_EXCEPTIONS_IN_ARG_FRAMES = ("RuntimeError", "NotImplementedError")
_TRACEBACK = "Traceback (most recent call last)"
# A C++ exception that ended a process (std::terminate, as libstdc++ reports it): its type, then its
# "  what():  ..." line. PyTorch's NCCL watchdog ends a TP rank so on a collective timeout in a running
# server ("terminate called after throwing an instance of 'c10::DistBackendError'", then "what(): ...
# Watchdog caught collective operation timeout: ..."; SGLang's utils/watchdog.py SubprocessWatchdog,
# sgl-project/sglang issue 18421), no Python traceback, and faulthandler's thread dump
# (managers/scheduler.py enables it) and the parent's closing lines after it.
_TERMINATE = "terminate called after throwing an instance of"
# ...and the same watchdog ends a rank when the GPU work it polls failed: "[PG ID 2 PG GUID 3 Rank 1]
# Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was
# encountered" (logged by ProcessGroupNCCL.cpp, then thrown as c10::DistBackendError; sgl-project/sglang
# issues 6309 (EAGLE), 8296, 8336). A kernel's fault that the NCCL watchdog happened to notice, no
# communication error: not ``nccl``, and that line is the error line (QA qa152: ``nccl``, quoting
# "terminate called after throwing an instance of 'c10::DistBackendError'").
_WATCHDOG_CUDA_ERROR = re.compile(r"watchdog thread terminated with exception: CUDA error: ", re.I)
# faulthandler's first line when a process dies of a signal ("Fatal Python error: Segmentation fault",
# "... Aborted"; SGLang's scheduler enables it, managers/scheduler.py), then its threads' stacks; and
# SGLang's parent noticing a subprocess that died so ("Subprocess scheduler_2 (pid=9399) crashed with exit
# code -11. Triggering SIGQUIT for cleanup...", utils/watchdog.py SubprocessWatchdog).
_FATAL_PYTHON = re.compile(r"^Fatal Python error: [^\n]{1,300}", re.M)
# ...but not CPython's own at the exit of a process that was ending anyway: "Fatal Python error:
# _enter_buffered_busy: could not acquire lock for <_io.BufferedWriter name='<stderr>'> at interpreter
# shutdown, possibly due to daemon threads" (Modules/_io/bufferedio.c; python/cpython issue 129536), which
# SGLang's parent can print after its watchdog has named the rank that died (QA qa152: quoted in its place)
_AT_SHUTDOWN = "at interpreter shutdown"
_SUBPROCESS_CRASHED = re.compile(r"^[^\n]{0,200}\bSubprocess \S{1,80} \(pid=\d+\) crashed with exit code -?\d+[^\n]{0,200}",
                                 re.M)
# SGLang's request log (--log-requests; utils/request_logger.py, RequestLogger): "Receive: obj=...",
# "Receive OpenAI: obj=..." and "Finish: obj=..., out=..." (text format), or a JSON line of event
# "request.received[.openai]" / "request.finished" (--log-requests-format json): each quotes a client's
# prompt and the model's reply, user text that may say anything ("CUDA out of memory", "NCCL error",
# "Traceback (most recent call last)"), never where the server failed. QA (qa152): a rank SIGKILLed
# after ready, the last prompt echoed asking about "CUDA out of memory", was ``oom`` and quoted the
# prompt. The lines are dropped before a log is read for its failure.
_REQUEST_ECHO = re.compile(r'^[^\n]{0,200}?(?:\b(?:Receive|Receive OpenAI|Finish): obj='
                           r'|"request\.(?:received|finished))[^\n]*(?:\n|$)', re.M)


def server_lines(text: str) -> str:
    """``text`` without SGLang's request-log lines (:data:`_REQUEST_ECHO`): what the server itself said.
    Run once per log by each public reader here; the private ones (``_region``, ``_first_record``,
    ``_deciding``) take its result, so a log of megabytes is scanned for echoes once, not at every step
    (only the first subprocess's record, a few lines cut from it, is scanned again)."""
    return _REQUEST_ECHO.sub("", text) if ("obj=" in text or '"request.' in text) else text


#: The log's final lines searched with the last traceback: SGLang's own closing lines (the parent's
#: "Received sigquit from a child process ...", kill_process_tree) follow the failure closely.
FINAL_LINES = 12
#: How many lines of the last traceback (frames, the exception and what it printed) are searched.
TRACEBACK_LINES = 80


def failure_region(text: str) -> str:
    """Where a log says why the server failed: from its last traceback, Python's or a C++ exception's
    report (``terminate called after throwing ...``), on (bounded to :data:`TRACEBACK_LINES`, plus the
    final :data:`FINAL_LINES`), or without one its final lines. An HTTP error body or a short log
    without a traceback is all region; lines logged before the last traceback (model loading,
    warnings) never are. QA (qa151): an NCCL collective timeout in a running TP8 server (the C++
    report, then faulthandler's dump of the rank's threads, then the parent's lines) was
    ``crash_after_ready``, quoting "Received sigquit from a child process". Request-log lines
    (prompt and reply echoes, :func:`server_lines`) are never part of it.
    """
    return _region(server_lines(text))


def _region(text: str) -> str:
    """:func:`failure_region` of ``text`` that holds the server's lines only (:func:`server_lines`)."""
    start = max(text.rfind(_TRACEBACK), text.rfind(_TERMINATE))
    if start < 0:
        return "\n".join(text.splitlines()[-FINAL_LINES:])
    rest = text[start:].splitlines()
    if len(rest) <= TRACEBACK_LINES + FINAL_LINES:
        return "\n".join(rest)
    return "\n".join(rest[:TRACEBACK_LINES] + rest[-FINAL_LINES:])


#: How SGLang's subprocesses (scheduler, detokenizer, tokenizer manager, DP controller) log their death:
#: one ERROR record, ``f"{name} hit an exception: {traceback}"`` (managers/scheduler.py line 6372).
_SUBPROCESS_DIED = " hit an exception: "
#: The start of the next log record after a subprocess's: SGLang's "[%(asctime)s TPn] " prefix, or
#: torch's C++ "[rank2]:[W...]" lines; a traceback's own lines (frames, the exception and its
#: message, "During handling ...") start otherwise.
_NEXT_RECORD = re.compile(r"^\[", re.M)


def first_subprocess_failure(text: str) -> str:
    """The first "<Name> hit an exception: ..." record of a log, whole (its traceback, a chained
    one included, up to the next log record), or "" when no subprocess logged its death."""
    return _first_record(server_lines(text))


def _first_record(text: str) -> str:
    """:func:`first_subprocess_failure` of ``text`` that holds the server's lines only
    (:func:`server_lines`)."""
    start = text.find(_SUBPROCESS_DIED)
    if start < 0:
        return ""
    line_end = text.find("\n", start)
    if line_end < 0:
        return text[start:]
    following = _NEXT_RECORD.search(text, line_end + 1)
    return text[start:following.start() if following else len(text)]


def _deciding(text: str) -> tuple[str, str]:
    """:func:`deciding_region` of ``text`` that holds the server's lines only (:func:`server_lines`),
    with the text it was cut from (the log, or the first subprocess's record), whose last traceback's
    frames decide an argument error."""
    region = _region(text)
    if _SPEC_RUNTIME.search(region) or _OOM.search(region):
        return region, text
    record = _first_record(text)
    # the record's own echoes, as before: its first line is cut from a log line (after "... hit an
    # exception: "), which can read as a request-log line once its start is gone; a record is a few lines
    first = _region(server_lines(record))
    if _SPEC_RUNTIME.search(first) or _OOM.search(first):
        return first, record
    # Any other death of the first subprocess decides too: its peers' communication errors came of it.
    # QA (qa160, qa165): rank 3's "RuntimeError: CUDA error: an illegal memory access was encountered",
    # then rank 0's "torch.distributed.DistStoreError: Socket Timeout", was ``nccl`` quoting rank 0.
    if _exception_names(first) or _WATCHDOG_CUDA_ERROR.search(first):
        return first, record
    return region, text


def deciding_region(text: str) -> str:
    """Where the class of a log is read: :func:`failure_region`, unless the first subprocess to die
    logged its death ("<Name> hit an exception: ...") with an exception line, and the region shows no
    out-of-memory or draft-tree failure; then that subprocess's own record's region (its peers died of
    it: see the module docstring). An out-of-memory or draft-tree failure where the log ends still
    decides over a first record without one: the classes that rule out larger trees are never lost to
    a rank's generic error (a draft-tree index out of range can surface on one rank as a CUDA error)."""
    return _deciding(server_lines(text))[0]


def classify_log(text: str, exit_code: int | None, phase: str) -> str:
    """The failure class for a server log (or an HTTP error body), its exit status and the phase.

    ``exit_code`` None: the process is still running (a startup timeout, or a failed request);
    ``phase``: :data:`PHASE_STARTUP` (never became ready) or :data:`PHASE_RUNNING` (was ready).
    Specific evidence where the server failed (:func:`failure_region`) wins over the phase: the
    tree-too-large error, out of memory, NCCL/communication errors, then argument errors (argparse
    usage, exit 2; an AssertionError/ValueError/TypeError in argument handling). Otherwise:
    ``startup_timeout`` (still running, never ready), ``crash_after_ready`` (exited after ready),
    ``other``. The first subprocess that died decides over its peers' later communication errors
    (:func:`deciding_region`). SGLang's request-log lines (a
    prompt or reply echoed) are no evidence (:func:`server_lines`).
    """
    text = server_lines(text)
    region, source = _deciding(text)
    if _SPEC_RUNTIME.search(region):
        return "spec_runtime"
    if _OOM.search(region):
        return "oom"
    if _NCCL.search(region) and not _WATCHDOG_CUDA_ERROR.search(region):
        return "nccl"
    if phase == PHASE_STARTUP and exit_code is not None:
        if exit_code == 2 and _ARGPARSE.search(region):
            return "invalid_args"
        exceptions = _exception_names(region)
        if exceptions and exceptions[-1] in _ARG_EXCEPTIONS + _ARG_EXCEPTIONS_IN_ARG_FRAMES:
            tb_at = source.rfind(_TRACEBACK)
            last_tb = source[tb_at:] if tb_at >= 0 else ""
            in_arg_frames = bool(_ARG_FRAMES.search(last_tb))
            # Without frames to read (a bare exception line), what came before decides.
            frameless = not _FRAME.search(last_tb)
            if in_arg_frames or (frameless and exceptions[-1] in _ARG_EXCEPTIONS
                                 and not _LOADING.search(text)):
                return "invalid_args"
    if exit_code is None:
        return "startup_timeout" if phase == PHASE_STARTUP else "other"
    return "crash_after_ready" if phase == PHASE_RUNNING else "other"


def spec_runtime_error(text: str) -> bool:
    """Whether ``text`` (a log or an HTTP error body) shows SGLang's draft-tree runtime failure."""
    return bool(_SPEC_RUNTIME.search(text))


def error_line(text: str) -> str:
    """The line of a log that says what went wrong (the last exception or error line where the
    server failed, :func:`deciding_region`), shortened. Without one there, a process's death by a
    signal since the last traceback: faulthandler's "Fatal Python error: ..." line, else SGLang's
    "Subprocess ... crashed with exit code N"; else the region's last line. A request-log line (a
    prompt or reply echoed: :func:`server_lines`) is never quoted."""
    echoes_only = bool(text.strip())
    text = server_lines(text)
    echoes_only = echoes_only and not text.strip()
    lines = [ln.strip() for ln in _deciding(text)[0].splitlines() if ln.strip()]
    for ln in reversed(lines):
        if (_WATCHDOG_CUDA_ERROR.search(ln) or _EXCEPTION_LINE.match(ln) or _ARGPARSE.search(ln)
                or _OOM.search(ln) or _NCCL.search(ln)
                or _SPEC_RUNTIME.search(ln) or ln.startswith("AssertionError")):
            return ln[:300]
    # No exception line: a process that died of a signal says so in a line of its own, which its
    # thread dump and SGLang's closing lines push out of the final lines read (QA qa151: a TP rank's
    # segfault was quoted as "Received sigquit from a child process. It usually means the child failed.")
    since = text[max(text.rfind(_TRACEBACK), text.rfind(_TERMINATE), 0):]
    for said in (_FATAL_PYTHON, _SUBPROCESS_CRASHED):
        found = [line for line in said.findall(since) if _AT_SHUTDOWN not in line]
        if found:
            return found[-1].strip()[:300]
    if echoes_only:
        return "(the log holds SGLang's request log alone: no failure said)"
    return lines[-1][:300] if lines else "(empty log)"


def tail_lines(text: str, n: int = LOG_TAIL_LINES) -> str:
    """The last ``n`` lines of ``text``, each cut to its last :data:`LOG_LINE_CHARS` characters
    (``[... N chars cut] `` in front): a tail is stored on the trial and printed, and one line with no
    newline (a progress bar redrawn with carriage returns, a dumped tensor) may be megabytes; its end
    is the newest output. At most ``n`` x (:data:`LOG_LINE_CHARS` + 30) characters."""
    def cut(line: str) -> str:
        extra = len(line) - LOG_LINE_CHARS
        return line if extra <= 0 else f"[... {extra} chars cut] {line[-LOG_LINE_CHARS:]}"
    return "\n".join(cut(line) for line in text.splitlines()[-n:])


def describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"
